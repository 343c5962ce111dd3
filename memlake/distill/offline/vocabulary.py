"""The offline distiller's words: role nouns, relatives, diets, names that are not names, and the shared
patterns for a name, an organisation, a role and what may follow them."""

from __future__ import annotations

import re

ROLE_NOUNS = (
    "engineer", "developer", "programmer", "designer", "manager", "lead", "scientist", "analyst", "researcher",
    "architect", "consultant", "teacher", "professor", "student", "nurse", "doctor", "physician", "writer",
    "editor", "journalist", "founder", "co-founder", "cto", "ceo", "cfo", "intern", "administrator", "sre",
    "accountant", "lawyer", "artist", "photographer", "owner", "director", "chef", "tester", "specialist",
    "technician", "translator", "marketer", "recruiter", "coach", "therapist", "pharmacist", "mechanic",
    "electrician", "freelancer", "contractor", "product manager", "head", "officer", "economist", "librarian",
)
PARTNER_WORDS = ("partner", "wife", "husband", "boyfriend", "girlfriend", "fiancé", "fiancée", "fiance", "spouse",
                 "other half", "better half", "significant other", "hubby")
SIBLING_WORDS = ("sister", "brother", "sibling", "twin")
OTHER_RELATIVES = (
    "mother", "mom", "mum", "father", "dad", "son", "daughter", "cousin", "aunt", "uncle", "grandmother",
    "grandfather", "grandma", "grandpa", "niece", "nephew", "best friend", "friend", "colleague", "coworker",
    "co-worker", "manager", "boss", "roommate", "flatmate", "neighbour", "neighbor", "mentor",
)
# The words of a relative or a partner, longest first, as one alternation ("my dad", "my best friend", "my wife").
RELATIVES = "|".join(sorted(PARTNER_WORDS + SIBLING_WORDS + OTHER_RELATIVES, key=len, reverse=True))
DIETS = ("vegetarian", "vegan", "pescatarian", "pescetarian", "flexitarian", "kosher", "halal", "gluten-free",
         "lactose-free", "keto", "paleo", "plant-based")
SIBLING_ADJECTIVES = r"(?:(?:older|younger|little|big|baby|elder|kid|twin|half-|step-?|only) ?)?"
# Capitalised words after "I'm" / "my wife is" that describe the person rather than name them.
DEMONYMS = frozenset(
    """American Canadian Mexican Brazilian Argentinian Argentine Chilean Colombian Peruvian Venezuelan Cuban
    Jamaican Dominican British English Irish Scottish Welsh French German Dutch Belgian Swiss Austrian Italian
    Spanish Portuguese Greek Swedish Norwegian Danish Finnish Icelandic Polish Czech Slovak Hungarian Romanian
    Bulgarian Serbian Croatian Slovenian Bosnian Albanian Ukrainian Russian Belarusian Estonian Latvian
    Lithuanian Turkish Kurdish Armenian Georgian Iranian Persian Iraqi Syrian Lebanese Israeli Palestinian
    Jordanian Egyptian Moroccan Algerian Tunisian Nigerian Ghanaian Kenyan Ethiopian Somali Sudanese South
    African Indian Pakistani Bangladeshi Nepali Sri Lankan Chinese Taiwanese Japanese Korean Vietnamese Thai
    Filipino Filipina Indonesian Malaysian Singaporean Australian Kiwi European Asian Latino Latina Arab Jewish
    Muslim Catholic Christian Protestant Hindu Buddhist Sikh Mormon Atheist Agnostic Gay Lesbian Bi Trans Queer
    Deaf Autistic ADHD Gen Millennial Boomer Aussie Brit Yank Scandinavian Nordic Balkan Caribbean Hispanic""".split()  # noqa: SIM905
)
# Capitalised words that name a product, a tool, a service or a department, not a city, a person or a project.
NOT_PLACES = frozenset(
    """Slack Discord Teams Zoom Notion Jira Confluence Linear Trello Asana GitHub GitLab Bitbucket AWS GCP Azure
    Heroku Vercel Netlify Cloudflare Supabase Firebase Mac macOS Windows Ubuntu Debian Fedora Arch Android iOS
    iPhone Pixel Vim Neovim Emacs VSCode Cursor Uber Lyft Bolt Tube Metro Engineering Marketing Sales Finance
    Product Design Support Operations Ops HR Legal Research Platform Infra Infrastructure Security Data
    Management Accounting Customer Success Frontend Backend QA DevOps SRE""".split()  # noqa: SIM905
)
# Objects that point at something in the chat ("I love the colour", "I like that") rather than a lasting taste.
_VAGUE_START = re.compile(
    r"^(?:it|this|that|these|those|them|him|her|his|its|their|you|your|the|all the|all of|some of|every|how|what|"
    r"when|where|which|who|why|doing that|to say|to think|to know|to hear|to see|to imagine|to believe|so|too|"
    r"very|more|less|much|some|one|ones|"
    # a verb right after it: "the things I love makes writing fun" is a relative clause, not a taste
    r"makes|is|are|was|were|has|had|gives|brings|keeps|helps|feels|looks|sounds|seems|can|will|would|did|does)\b",
    re.I,
)
_DEICTIC = re.compile(r"\b(?:it|this|that|these|those|him|her|them|you|your|here|there)\b", re.I)


class _Vague:
    """Matches an object that points at the chat rather than naming a thing."""

    @staticmethod
    def match(text: str) -> bool:
        return bool(_VAGUE_START.match(text) or _DEICTIC.search(text))


PRONOUN_OBJECTS = _Vague()
# Languages and tools "I know X" may name; anything else ("I know Sarah") is not read as a skill.
SKILL_WORDS = frozenset(
    """Python Java JavaScript TypeScript Go Golang Rust C C++ C# Ruby PHP Kotlin Swift Scala SQL R MATLAB Haskell
    Elixir Erlang Clojure Perl Lua Julia Dart Bash Excel Photoshop Figma Docker Kubernetes Terraform React Django
    Spark Kafka Postgres PostgreSQL Linux English German French Spanish Portuguese Italian Japanese Chinese
    Mandarin Cantonese Korean Russian Arabic Hindi Dutch Polish Turkish Swedish Norwegian Danish Finnish Greek
    Hebrew Czech Ukrainian Vietnamese Thai Indonesian Swahili Latin""".split()  # noqa: SIM905
)
# What may follow an organisation's name in "I work at X ...": the end, punctuation, or a plain continuation.
AFTER_ORG = (r"(?=\s*(?:$|[,.;:!?)]|-\s)|\s+(?:as|in|on|at|since|for|last|this|back|earlier|recently|yesterday|"
             r"today|now|these days|nowadays|two|three|four|a few|and|but|so|because|remotely|full-time|part-time)\b)")
# Words that make a "plan" or an "event" about the code at hand, not about the user's life.
TECH_WORDS = re.compile(
    r"\b(?:script|scripts|test|tests|migration|migrations|query|queries|command|build|code|pipeline|server|"
    r"container|deploy|function|benchmark|job|jobs|endpoint|service|bug|fix|patch|refactor|PR|commit|branch|"
    r"release notes|docs?|it|this|that|them)\b",
    re.I,
)
HYPOTHETICAL = re.compile(
    r"\b(?:if|would|wouldn't|might|maybe|perhaps|wish|hope|suppose|imagine|pretend|hypothetically|"
    r"thinking about|considering|wonder|could|should|unless|whether|someday|one day)\b",
    re.I,
)
REPORTED = re.compile(r"\b(?:said|says|told me|tells me|asked me|thinks|think that|believes|claims|according to|"
                      r"heard that|mentioned that|pretends?|pretending|as if|as though)\b", re.I)
NEGATION = re.compile(r"\b(?:not|never|no longer|don't|didn't|doesn't|won't|isn't|aren't|wasn't|weren't|can't|cannot|"
                      r"haven't|hasn't|hadn't|shouldn't|couldn't|nobody|no one)\b", re.I)
NOT_NAMES = {
    "I", "I'm", "I've", "I'd", "I'll", "The", "A", "An", "It", "It's", "This", "That", "My", "Our", "We", "We're",
    "You", "He", "She", "They", "Hi", "Hello", "Hey", "Thanks", "Thank", "Yes", "No", "Ok", "Okay", "So", "And",
    "But", "Or", "Also", "Actually", "Now", "Then", "Today", "Tomorrow", "Yesterday", "Big", "Good", "Great",
    "Perfect", "Sure", "Please", "Help", "Can", "Could", "Would", "Should", "What", "Which", "Where", "When",
    "Why", "How", "Who", "Is", "Are", "Do", "Does", "Any", "Some", "First", "Second", "Remember", "Give", "Show",
    "Project", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday", "January",
    "February", "March", "April", "May", "June", "July", "August", "September", "October", "November",
    "December", "Python", "Go", "Rust", "Java", "Postgres", "MongoDB", "Kafka", "Redis", "Docker", "Kubernetes",
    "English", "German", "French", "Spanish", "Portuguese", "EU", "API", "UTC", "Mr", "Mrs", "Ms", "Dr",
}
STOPWORDS = frozenset(
    """a about above after again against all also am an and any are aren't as at be because been before being
    below between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during
    each few for from further get got had hadn't has hasn't have haven't having he he'd he'll he's her here
    here's hers herself him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself
    just let's like make me more most much my myself need no nor not now of off ok okay on once only or other
    ought our ours ourselves out over own please really same shan't she she'd she'll she's should shouldn't so
    some such sure than thank thanks that that's the their theirs them themselves then there there's these
    they they'd they'll they're they've this those through to too under until up use used using very via want
    was wasn't way we we'd we'll we're we've well were weren't what what's when when's where where's which
    while who who's whom why why's will with won't would wouldn't yes you you'd you'll you're you've your yours
    yourself yourselves one two three any anything something good great best better try give know new first
    hi hello hey lot bit quick short long day days week weeks time going get go say said tell show mean
    question idea kind thing things around else even still yet back right left ever every many lot lots
    another""".split()  # noqa: SIM905
)
CAP = r"[A-ZÀ-ÖØ-Þ][\w'’&.-]*"
# An age as said: "8", "four".
AGE = r"(?P<age>\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
NAME = rf"{CAP}(?:\s+{CAP}){{0,3}}"
ORG = rf"{CAP}(?:\s+(?:{CAP}|&|of|and|de))*?(?:\s+{CAP})?"
# A place of work after "at", "for" or "with": a name, said with "the" or without ("at the Royal Infirmary", "for
# Globex"); "at the hospital" names none.
AT_ORG = rf"(?: (?:at|for|with) (?:the )?(?P<org>{ORG}){AFTER_ORG})?"
# A role: up to four lowercase modifiers and a role noun; a function word is no modifier ("a fan of the designer").
_ROLE_MODIFIER = (r"(?!(?:of|the|a|an|and|or|to|for|with|at|in|on|by|my|our|your|his|her|their|this|that|is|was|"
                  r"am|are|be|not|no|so|as|like)\b)[a-z][a-z-]* ")
_ROLE_NOUN = "(?:" + "|".join(re.escape(r) for r in sorted(ROLE_NOUNS, key=len, reverse=True)) + ")"
ROLE = rf"(?:{_ROLE_MODIFIER}){{0,4}}?{_ROLE_NOUN}"
# A role with as many of its modifiers as were said: "lead pharmacist", not "lead" ("lead" is a role noun too).
WHOLE_ROLE = rf"(?:{_ROLE_MODIFIER}){{0,4}}{_ROLE_NOUN}"
UNTIL_OBJ = r"(?P<obj>[^,.;:!?]+)"
CONDITION = re.compile(r"\b(?:if|unless|assuming|provided that|as long as)\b", re.I)
# What may follow a name the user gives: the end, punctuation, or a plain continuation.
AFTER_NAME = r"(?=\s*(?:$|[,.;:!)]|-\s|–)|\s+(?:and|here|from|now|these days|from now on|by the way)\b)"
SINCE_FOR = r"(?=\s+(?:now\s+)?(?:for|since|ever since)\b)"
# A span of time that makes a statement temporary, anywhere after it ("I went vegan in 2019 for a month").
FOR_A_WHILE = re.compile(
    r"\b(?:for|during) (?:a |an |one |two |three |four |\d+ |a couple of |a few |the )?(?:[a-z]+-)?(?:days?|weeks?|"
    r"weekends?|months?|while|lent|veganuary|dry january|trip|holidays?|trial)\b|"
    r"\b(?:this|that) (?:week|weekend|month)\b|\b(?:today|tonight)\b",
    re.I,
)
# When a state began, not how long it lasts: "as of this month", "since last week", "starting today".
SINCE_WHEN = re.compile(r"\b(?:as of|since|starting|from|beginning) (?:this|last|today|tonight)\b(?: \w+)?", re.I)
# What makes a statement about now temporary ("I'm working at the café today", "I went vegan for a month").
TEMPORARY = re.compile(
    r"^\W*(?:(?:just |only )?(?:for|during) (?:a |an |one |two |three |four |\d+ |a couple of |a few |the )?"
    r"(?:days?|weeks?|weekends?|months?|while|lent|january|veganuary|trip|holidays?|summer|conference)\b|"
    r"(?:today|tonight|this (?:week|weekend|morning|afternoon|evening|month))\b|"
    r"(?:sometimes|occasionally|once)\b)",
    re.I,
)
ORG_WORDS = frozenset(
    """Inc Ltd LLC GmbH AG SA Corp Corporation Company Co Labs Lab Group Bank Systems Technologies Tech Solutions
    Health Foods Industries Enterprises Imports Partners Capital Ventures Studio Studios Media Robotics University
    College School Hospital Agency Institute Foundation Consulting Software Games Motors Airlines Insurance
    Holdings Services Networks Analytics Digital Pharma Therapeutics Energy Logistics""".split()  # noqa: SIM905
)
