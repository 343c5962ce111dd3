"""The offline distiller: rules over the user's first-person statements, no model, no network.

It fills the same `DistilledSession` as the core model, so the whole pipeline
runs with no key. Precision over recall: a rule fires only on a plain
statement by the user (role "user"; not a question, not inside quotes or
code, not hypothetical or negated) and only on a narrow pattern; whatever it
cannot read with confidence it leaves out. What it reads:

- name ("my name is ...", "I'd prefer to be called ...", "I'm going by ..."),
  job title and employer ("I'm a backend engineer at ...", "I work at/for ...",
  "I started a new job at ...", "I've been at ... for four years", "I'm on the
  platform team at ...", "I accepted an offer from ... and start Monday",
  "I'm officially a ..."), leaving a job ("I left ...");
- home city ("I live in ...", "I moved to ... last week", "we've settled in
  ...", "we call ... home", "we're moving from ... to ..."; "until then"
  closes the old city);
- preferences and dislikes ("I prefer/like/love/enjoy ...", "I don't drink
  ...", "I hate ..."), diet ("I'm vegetarian", "I've eaten vegan for years")
  and allergies;
- decisions ("we decided to ..."), plans and commitments ("I'm going to ...",
  "I plan to ..."), corrections ("actually ..., not ..."), deadlines ("the
  Heron launch is on March 4", "Project Heron slipped to June 3"), skills ("I
  know Python");
- people the user mentions and how they relate ("my partner Jonas", "my
  sister Leela", "Tomás Ruiz is the tech lead") and what the user says about
  them ("Leela doesn't like mushrooms"; "she" when only one person is named);
  a partner in "I live with my partner, Jonas." or "Sam and I are together
  now"; a new partner in "I'm with Sam now" once the user says a relationship
  ended;
- past events with a date ("I ran the Lisbon half marathon yesterday").

Relative dates resolve against the time of the message that says them.
Besides candidates it writes an extractive summary, topics, key dates,
entities and relations.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import date

from memlake.distill.dates import DateMention, find_dates, human
from memlake.distill.models import (
    SLOT_TYPES,
    USER_SUBJECT,
    Conversation,
    DistilledSession,
    Entity,
    FactCandidate,
    KeyDate,
    Message,
    Relation,
    Usage,
    iso_day,
)

OFFLINE_DISTILLER_VERSION = "memlake-offline-3"

# --- vocabulary -------------------------------------------------------------------------------

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
_AFTER_ORG = (r"(?=\s*(?:$|[,.;:!?)]|-\s)|\s+(?:as|in|on|at|since|for|last|this|back|earlier|recently|yesterday|"
              r"today|now|these days|nowadays|two|three|four|a few|and|but|so|because|remotely|full-time|part-time)\b)")
# After an organisation one starts at: also a start still to come ("I start at Hooli next week").
_AFTER_START_ORG = rf"(?:{_AFTER_ORG}|(?=\s+(?:next|tomorrow|soon)\b))"
# Words that make a "plan" or an "event" about the code at hand, not about the user's life.
TECH_WORDS = re.compile(
    r"\b(?:script|scripts|test|tests|migration|migrations|query|queries|command|build|code|pipeline|server|"
    r"container|deploy|function|benchmark|job|jobs|endpoint|service|bug|fix|patch|refactor|PR|commit|branch|"
    r"release notes|docs?|it|this|that|them)\b",
    re.I,
)
TRIVIAL_PLAN_VERBS = re.compile(
    r"^(?:try|check|look|see|test|ask|use|need|have|be|do|give|get|make|keep|take|let|paste|share|send|fix|"
    r"debug|add|remove|change|update|install|write|read|say|tell|call|go with|start with|stick with|think|"
    r"wait|put|set|leave|stop|show|run it|run that|run this)\b",
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

_CAP = r"[A-ZÀ-ÖØ-Þ][\w'’&.-]*"
_NAME = rf"{_CAP}(?:\s+{_CAP}){{0,3}}"
_ORG = rf"{_CAP}(?:\s+(?:{_CAP}|&|of|and|de))*?(?:\s+{_CAP})?"
# A role: up to four lowercase modifiers and a role noun; a function word is no modifier ("a fan of the designer").
_ROLE_MODIFIER = (r"(?!(?:of|the|a|an|and|or|to|for|with|at|in|on|by|my|our|your|his|her|their|this|that|is|was|"
                  r"am|are|be|not|no|so|as|like)\b)[a-z][a-z-]* ")
_ROLE = (rf"(?:{_ROLE_MODIFIER}){{0,4}}?(?:"
         + "|".join(re.escape(r) for r in sorted(ROLE_NOUNS, key=len, reverse=True)) + ")")
_UNTIL_OBJ = r"(?P<obj>[^,.;:!?]+)"

_CODE_BLOCK = re.compile(r"```.*?(?:```|$)", re.S)
_INLINE_CODE = re.compile(r"`[^`]*`")
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|«[^»]*»")
_URL = re.compile(r"https?://\S+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"“(]?[A-Z0-9À-Þ])|\n+|(?<=\w):\s+(?=[A-Z])")
_CLAUSE_SPLIT = re.compile(
    r",?\s+(?:and|but|so)\s+(?=(?:I|I'm|I've|I'll|we|we're|my)\b)|;\s*|,\s+so\s+|\s+-\s+|\s+–\s+|"
    r",\s+(?=(?:I|I'm|I've|I'll|I'd|we|we're|my|My)\b)|,\s+(?=and\s)"
)
_OBJECT_CUT = re.compile(
    r"\s+(?:and|but|or)\s+(?=(?:would|I|we|it|you|want|need|can|will|should|'d|am|have|has|she|he|they)\b)|"
    r"\s+(?:because|since|so|when|if|which|while|though|although|as|for now|unless|until)\b.*$|"
    r"\s+(?:now|anyway|anymore|too|as well|these days)\s*$",
    re.I,
)


@dataclass
class _Sentence:
    text: str  # what the rules read: no code, no URLs
    display: str  # what summaries and key dates quote
    message: Message
    question: bool


@dataclass
class _Found:
    """What the rules found in one conversation."""

    candidates: list[FactCandidate] = field(default_factory=list)
    decisions: list[str] = field(default_factory=list)
    action_items: list[str] = field(default_factory=list)
    entities: dict[str, Entity] = field(default_factory=dict)
    relations: list[Relation] = field(default_factory=list)
    key_dates: list[KeyDate] = field(default_factory=list)
    summary_sentences: list[str] = field(default_factory=list)


class OfflineDistiller:
    """Fills a `DistilledSession` from rules; deterministic, no model."""

    name = OFFLINE_DISTILLER_VERSION
    prompt_version: str | None = None

    def __init__(self) -> None:
        self.usage = Usage()

    def distill(self, conversation: Conversation) -> DistilledSession:
        return distill_offline(conversation)


def distill_offline(conversation: Conversation) -> DistilledSession:
    """The rule-based DistilledSession of one conversation."""
    sentences = [s for m in conversation.messages if m.role == "user" for s in _sentences(m)]
    found = _Found()
    context = _Context.build(sentences)
    for sentence in sentences:
        if sentence.question:
            _read_request(sentence, context, found)
            continue
        _read_sentence(sentence, context, found)
    for entity in context.entities():
        found.entities.setdefault(entity.name.lower(), entity)
    candidates = _dedupe(found.candidates)
    return DistilledSession(
        summary=_summary(conversation, sentences, found),
        topics=_topics(conversation, context),
        decisions=_unique(found.decisions),
        action_items=_unique(found.action_items),
        key_dates=_dedupe_dates(found.key_dates),
        entities=_drop_short_duplicates(list(found.entities.values())),
        relations=_dedupe_relations(found.relations),
        fact_candidates=candidates,
        salience=_salience(candidates, found, conversation),
    )


# --- text -------------------------------------------------------------------------------------

def _display(text: str) -> str:
    return re.sub(r"[ \t]+", " ", _CODE_BLOCK.sub(" ", text).replace("’", "'"))


def _clean(text: str) -> str:
    return _URL.sub(" ", _INLINE_CODE.sub(" ", _display(text)))


def _sentences(message: Message) -> list[_Sentence]:
    out = []
    for piece in _SENTENCE_END.split(_display(message.content)):
        piece = piece.strip()
        if not piece:
            continue
        out.append(_Sentence(_clean(piece).strip(), piece, message, piece.endswith("?")))
    return out


# "I left Acme and joined Globex": a second verb phrase sharing the subject of the first.
_PAST_VERB = (r"(?:\w+ed|left|quit|took|went|got|became|began|sold|bought|found|made|met|ran|won|sent|spent|"
              r"had|did|gave|built|wrote|finished|came|said)")
_ELIDED_SUBJECT = re.compile(
    r",?\s+and\s+(?:then\s+|also\s+|just\s+|finally\s+|now\s+)?"
    r"(?=(?:joined|moved|relocated|started|switched|became|took|went|got|left|quit|married|accepted|"
    # "I switched jobs and now work at Hooli": a present verb after a past one shares the subject too
    r"work|live)\b)"
)
_SUBORDINATE = re.compile(r"\b(?:that|who|which|because|when|after|before|since|while|until|where)\b", re.I)


def _clauses(text: str) -> list[str]:
    text = _QUOTED.sub(" ", text)
    text = re.sub(r"^(?:hi|hello|hey|thanks|ok|okay|great|good|perfect|big news|oh|well|also|and|so|now)\b[!,.:]*\s*",
                  "", text, flags=re.I)
    pieces = [c.strip(" ,") for c in _CLAUSE_SPLIT.split(text) if c and c.strip(" ,")]
    joined: list[str] = []
    for piece in pieces:
        # "Sam and I got engaged": a coordinated subject, not two clauses
        said_so = re.search(rf"\b{re.escape(joined[-1])},? and {re.escape(piece[:12])}", text) if joined else None
        if joined and re.fullmatch(_NAME, joined[-1]) and joined[-1].split()[0] not in NOT_NAMES \
                and re.match(r"I\b", piece) and said_so:
            joined[-1] = f"{joined[-1]} and {piece}"
        else:
            joined.append(piece)
    out: list[str] = []
    for clause in joined:
        out += _split_elided_subject(clause)
    return out


def _split_elided_subject(clause: str) -> list[str]:
    """"I left Acme and joined Globex" -> "I left Acme", "I joined Globex": only when the first part is a plain
    past-tense statement of the same subject (not negated, hypothetical, reported or subordinate)."""
    subject = re.match(rf"^(?P<who>I|[Ww]e)(?:'ve| have)? (?:just |then |finally |recently |also )?{_PAST_VERB}\b",
                       clause)
    if not subject:
        return [clause]
    pieces = _ELIDED_SUBJECT.split(clause)
    first = pieces[0]
    if len(pieces) == 1 or any(g.search(first) for g in (HYPOTHETICAL, NEGATION, REPORTED, _SUBORDINATE)):
        return [clause]
    return [first] + [f"{subject.group('who')} {piece}" for piece in pieces[1:]]


def _cut_object(raw: str) -> str:
    obj = _OBJECT_CUT.split(raw, maxsplit=1)[0]
    obj = re.sub(r"^(?:also|really|just|totally|absolutely|still|even)\s+", "", obj.strip(), flags=re.I)
    obj = re.sub(r"\s+(?:as well|too|also|a lot|so much|very much)$", "", obj.strip(" ,.;:!?"), flags=re.I)
    return obj.strip(" ,.;:!?").strip()


def _third_person(text: str) -> str:
    swaps = {"my": "their", "me": "them", "i": "they", "myself": "themselves", "mine": "theirs", "our": "their",
             "us": "them", "we": "they", "i'm": "they're", "i've": "they've"}
    return re.sub(r"\b(my|me|I|myself|mine|our|us|we|I'm|I've)\b",
                  lambda m: swaps[m.group(1).lower()], text)


def _sentence_case(text: str) -> str:
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


_CONDITION = re.compile(r"\b(?:if|unless|assuming|provided that|as long as)\b", re.I)


def _guarded(clause: str, match: re.Match[str]) -> bool:
    """True when what precedes the match makes it hypothetical, negated or reported."""
    prefix = clause[: match.start()]
    if _CONDITION.search(clause[match.end():]):
        return True  # "I moved to Oslo, if you remember"? rare; "I'm vegan unless I travel": not a plain statement
    return bool(HYPOTHETICAL.search(prefix) or NEGATION.search(prefix) or REPORTED.search(prefix))


# --- the people, projects and places of a conversation ----------------------------------------

@dataclass
class _Context:
    """Names the user introduces in the conversation, to resolve first names and 'she'/'he'."""

    people: dict[str, str] = field(default_factory=dict)  # any form ("Tomás") -> full name ("Tomás Ruiz")
    projects: list[str] = field(default_factory=list)  # "Project Heron"
    organizations: list[str] = field(default_factory=list)
    places: list[str] = field(default_factory=list)
    # the user says a relationship of theirs ended ("Jonas and I broke up"): "I'm with Sam now" then names a partner
    breakup: bool = False
    # the user says they changed or left a job ("I left Acme", "new job"): "I'm now at Globex" then names an employer
    job_change: bool = False

    @classmethod
    def build(cls, sentences: list[_Sentence]) -> _Context:
        context = cls()
        relatives = "|".join(PARTNER_WORDS + SIBLING_WORDS + OTHER_RELATIVES)
        for sentence in sentences:
            text = _QUOTED.sub(" ", sentence.text)
            for m in re.finditer(rf"\b[Mm]y {SIBLING_ADJECTIVES}(?:{relatives}) (?P<name>{_NAME})", text):
                context.add_person(_trim_name(m.group("name")))
            for m in re.finditer(rf"(?P<name>{_NAME}) is (?:the|our|my) {_ROLE}\b", text):
                context.add_person(_trim_name(m.group("name")))
            for m in re.finditer(rf"\b(?P<name>{_CAP}) and I\b", text):
                context.add_person(_trim_name(m.group("name")))
            for m in re.finditer(rf"\b[Pp]roject (?P<name>{_CAP})", text):
                name = f"Project {m.group('name').strip('.,')}"
                if name not in context.projects:
                    context.projects.append(name)
            if not sentence.question and any(
                _BREAKUP.search(c) and not (HYPOTHETICAL.search(c) or NEGATION.search(c) or REPORTED.search(c))
                for c in _clauses(text)
            ):
                context.breakup = True
            if not sentence.question and any(
                _JOB_CHANGE.search(c) and not (HYPOTHETICAL.search(c) or NEGATION.search(c) or REPORTED.search(c))
                for c in _clauses(text)
            ):
                context.job_change = True
        return context

    def add_person(self, name: str) -> None:
        if not name or name.split()[0] in NOT_NAMES:
            return
        self.people[name] = name
        self.people.setdefault(name.split()[0], name)

    def person(self, word: str) -> str | None:
        return self.people.get(word.strip())

    def only_person(self) -> str | None:
        full = set(self.people.values())
        return next(iter(full)) if len(full) == 1 else None

    def project(self, name: str | None) -> str | None:
        """The project `name` refers to ("Heron" -> "Project Heron"), or the one project discussed."""
        if name:
            bare = re.sub(r"^[Pp]roject\s+", "", name).strip()
            for project in self.projects:
                if project.split(" ", 1)[1] == bare:
                    return project
            return f"Project {bare}" if bare and bare[0].isupper() and bare not in NOT_NAMES else None
        return self.projects[0] if len(self.projects) == 1 else None

    def entities(self) -> list[Entity]:
        out = [Entity(name=p, type="person") for p in sorted(set(self.people.values()))]
        out += [Entity(name=p, type="project") for p in self.projects]
        out += [Entity(name=o, type="organization") for o in self.organizations]
        out += [Entity(name=p, type="place") for p in self.places]
        return out


def _trim_name(name: str) -> str:
    name = re.sub(r"'s\b.*$", "", name.strip())  # "my daughter Sara's birthday" -> "Sara"
    words = name.strip(" .,'’").split()
    while words and (words[-1] in NOT_NAMES or not words[-1][0].isupper()):
        words.pop()
    return " ".join(w.strip(".,") for w in words)


def _trim_org(name: str) -> str:
    words = name.strip(" .,").split()
    while words and words[-1].lower() in ("and", "of", "&", "de"):
        words.pop()
    return " ".join(words).strip(" .,")


# --- the rules --------------------------------------------------------------------------------

@dataclass
class _Rule:
    """One sentence being read: its message, its dates, and where findings go."""

    sentence: _Sentence
    context: _Context
    found: _Found
    dates: list[DateMention]

    @property
    def message_id(self) -> str:
        return self.sentence.message.message_id

    @property
    def said(self) -> date:
        return self.sentence.message.created_at.date()

    def date_in(self, clause: str, context: str | None = None) -> DateMention | None:
        """The first date expression inside `clause` (resolved against when it was said)."""
        # Tense comes from the clause that holds it: "I'm planning to visit Japan in April" is next April.
        if context is None:
            context = next((c for c in _clauses(self.sentence.text) if clause.strip() and clause.strip() in c),
                           clause)
        mentions = find_dates(clause, self.sentence.message.created_at, context=context)
        return mentions[0] if mentions else None

    def add(self, type_: str, value: str, content: str, *, subject: str = USER_SUBJECT, slot: str | None = None,
            confidence: float = 0.9, importance: float = 0.6, tags: tuple[str, ...] = (),
            valid_from: date | str | None = None, valid_until: date | str | None = None) -> FactCandidate:
        candidate = FactCandidate(
            type=type_,  # type: ignore[arg-type]
            subject=subject,
            slot=slot,
            value=value.strip(),
            content=_sentence_case(content),
            confidence=confidence,
            importance=importance,
            tags=list(tags),
            valid_from=iso_day(valid_from if valid_from is not None else self.said),
            valid_until=iso_day(valid_until),
            message_ids=[self.message_id],
        )
        self.found.candidates.append(candidate)
        return candidate

    def entity(self, name: str, type_: str) -> None:
        if name and name.lower() not in self.found.entities:
            self.found.entities[name.lower()] = Entity(name=name, type=type_)

    def relation(self, source: str, relation: str, target: str, confidence: float = 0.9,
                 valid_from: str | None = None, valid_until: str | None = None) -> None:
        self.found.relations.append(Relation(source=source, relation=relation, target=target,
                                             confidence=confidence, valid_from=valid_from,
                                             valid_until=valid_until))

    def key_date(self, mention: DateMention, description: str) -> None:
        self.found.key_dates.append(KeyDate(date=mention.iso, description=_sentence_case(description),
                                            message_ids=[self.message_id]))


def _read_sentence(sentence: _Sentence, context: _Context, found: _Found) -> None:
    rule = _Rule(sentence, context, found, find_dates(sentence.text, sentence.message.created_at))
    before = len(found.candidates)
    dated_before = len(found.key_dates)
    correction = _correction(rule)
    if not correction:
        for clause in _clauses(sentence.text):
            for reader in _READERS:
                reader(rule, clause)
    if len(found.candidates) > before:
        found.summary_sentences.append(sentence.display)
    if len(found.key_dates) == dated_before and not HYPOTHETICAL.search(sentence.text):
        for mention in rule.dates:
            if mention.text.lower() not in ("today", "tonight"):  # the conversation's own day says nothing
                rule.key_date(mention, _key_date_description(sentence.display))


# A question that is a request about the user's own name: "Could you call me Kate from now on?"
_NAME_REQUEST = re.compile(
    r"^(?:(?:[Oo]k(?:ay)?|[Ss]o|[Aa]lso|[Bb]y the way),? )?(?:[Cc]ould|[Cc]an|[Ww]ould|[Ww]ill) you "
    r"(?:please |kindly )?"
    rf"(?:call me|refer to me as|address me as) (?P<name>{_NAME})"
    r"(?: (?:from now on|instead|going forward|now|please))*(?:,? please)?\s*\?$"
)


def _read_request(sentence: _Sentence, context: _Context, found: _Found) -> None:
    """Questions give no facts, but a request about the user's name says the name."""
    m = _NAME_REQUEST.match(_QUOTED.sub(" ", sentence.text).strip())
    if m and "'s" not in m.group("name"):
        rule = _Rule(sentence, context, found, [])
        before = len(found.candidates)
        _user_name(rule, _trim_name(m.group("name")))
        if len(found.candidates) > before:
            found.summary_sentences.append(sentence.display)


def _key_date_description(text: str) -> str:
    text = _QUOTED.sub(" ", text).strip()
    return text if len(text) <= 160 else text[:157].rsplit(" ", 1)[0] + "…"


_GREETING = r"(?:hi|hello|hey|hiya|howdy|greetings|good (?:morning|afternoon|evening))(?: there| all| everyone| again)?"
# What may follow a name the user gives: the end, punctuation, or a plain continuation.
_AFTER_NAME = r"(?=\s*(?:$|[,.;:!)]|-\s|–)|\s+(?:and|here|from|now|these days|from now on|by the way)\b)"
_NAMING = (
    r"[Mm]y (?:new |full |real |legal |first |preferred )?name(?: is|'s)(?: now)?"
    r"|[Cc]all me"
    r"|I (?:now |usually |mostly |prefer to |'d rather |would rather |'d like to |would like to )?go by(?: the name)?"
    # "I'm going by Kate now", "I've started going by Sasha"
    r"|I(?:'m| am|'ve been| have been|'ve started| have started| started) (?:now )?going by(?: the name)?"
    # "I'd prefer to be called Kate", "I'd rather be called Bob", "I want to be known as Maggie"
    r"|I(?:'d| would)? (?:prefer|like|rather|want)(?: to)? (?:be|being) (?:called|known as|addressed as|referred to as)"
    r"|(?:[Rr]efer to|[Aa]ddress) me as"
    # "I'm known as Bob", "Most people know me as Maggie", "I've switched to going by Sasha"
    r"|I(?:'m| am) (?:better |usually |mostly |now )?known as"
    r"|(?:[Ee]veryone|[Ee]verybody|[Pp]eople|[Mm]ost (?:people|folks)|[Ff]olks|[Mm]y friends) (?:know|knows) me as"
    r"|I(?:'ve| have)? (?:switched|changed) to going by"
    r"|I(?:'m| am) (?:now )?called"
    r"|I(?:'ve| have)? (?:just |legally |officially )?changed my name to"
    r"|(?:[Ee]veryone|[Ee]verybody|[Pp]eople|[Mm]y friends|[Ff]riends|[Mm]ost people) (?:call|calls) me"
)


def _name(rule: _Rule, clause: str) -> None:
    m = re.search(rf"\b(?:{_NAMING}) (?P<name>{_NAME})", clause)
    # "going by" is also passing a place ("I'm going by Lisbon on the way"): only a name that ends the clause
    passing = m and "going by" in m.group(0) and not re.match(_AFTER_NAME, clause[m.end():])
    if m and not passing and not _guarded(clause, m) and "'s" not in m.group("name"):
        _user_name(rule, _trim_name(m.group("name")))
        return
    # An introduction: "I'm Katherine, nice to meet you", "Hi, I'm Sam", "Hello! Sam here."
    m = re.match(rf"^I(?:'m| am) (?P<name>{_NAME}){_AFTER_NAME}(?P<rest>.*)$", clause)
    if m and "'s" not in m.group("name"):
        met = re.match(r"^[\s,.!–-]*(?:(?:it's |it is |so |really )?(?:nice|good|great|pleased|lovely|glad) to "
                       r"(?:meet|e-?meet) you|here\b)", m.group("rest"), re.I)
        if met or _greeted(rule, clause):
            _user_name(rule, _trim_name(m.group("name")), confidence=0.85)
        return
    m = re.match(rf"^(?P<name>{_NAME}) here\s*[.!]?$", clause)
    if m and _greeted(rule, clause):
        _user_name(rule, _trim_name(m.group("name")), confidence=0.85)
        return
    # "Hi, this is Kate", "Hey, it's Bob here" (after a greeting)
    m = re.match(rf"^(?:[Tt]his is|[Ii]t's|[Ii]t is) (?P<name>{_NAME})(?: here)?{_AFTER_NAME}", clause)
    if m and "'s" not in m.group("name") and _greeted(rule, clause) and m.group("name") not in _OCCASIONS:
        _user_name(rule, _trim_name(m.group("name")), confidence=0.85)
        return
    # "From now on I'm Kate", "Please use Kate from now on"
    m = re.match(rf"^(?:[Ff]rom now on|[Gg]oing forward|[Ff]rom today),? I(?:'m| am) (?P<name>{_NAME})\s*[.!]?$",
                 clause) or re.search(
        rf"\b[Pp]lease (?:just )?use (?P<name>{_NAME}) (?:from now on|instead|going forward|as my name|"
        r"when you (?:address|talk to|write to) me)\b", clause)
    if m and "'s" not in m.group("name") and not _guarded(clause, m):
        _user_name(rule, _trim_name(m.group("name")))
        return
    m = re.match(rf"^(?:[Tt]he )?[Nn]ame(?:'s| is) (?P<name>{_NAME}){_AFTER_NAME}", clause)
    if m and "'s" not in m.group("name"):
        _user_name(rule, _trim_name(m.group("name")))
        return
    m = re.match(rf"^(?P<name>{_NAME}) is (?:now )?(?:my (?:new |preferred |real )?name|what (?:I(?:'m| am)? (?:now )?"
                 r"(?:go by|going by|called)|(?:people|everyone|everybody|my friends|friends) (?:now )?call me))"
                 r"(?=\s*(?:$|[,.;:!)])|\s+(?:now|these days|nowadays|from now on)\s*[.!]?$)", clause)
    if m and "'s" not in m.group("name"):
        _user_name(rule, _trim_name(m.group("name")))


# "Hi, it's Christmas!": a day, not the user.
_OCCASIONS = frozenset({"Christmas", "Easter", "Halloween", "Thanksgiving", "Diwali", "Eid", "Hanukkah", "Ramadan",
                        "Passover", "Xmas", "New Year", "New Year's", "Valentine's"})
_HONORIFICS = frozenset({"Doctor", "Professor", "Prof", "Sir", "Madam", "Ma'am", "Miss", "Mx", "Captain", "Boss",
                         "Chief", "Coach"})


def _user_name(rule: _Rule, name: str, confidence: float = 0.9) -> None:
    words = name.split()
    if not words or words[0] in _HONORIFICS or any(
            w in NOT_NAMES or w in DEMONYMS or w in NOT_PLACES or w in SKILL_WORDS or w.lower() in DIETS
            for w in words):
        return
    rule.add("identity", name, f"The user's name is {name}.", slot="name", confidence=confidence, importance=0.9)


def _greeted(rule: _Rule, clause: str) -> bool:
    """True when `clause` comes right after a greeting ("Hi, I'm Sam"; "Hello! I'm Sam.")."""
    text = rule.sentence.text
    position = text.find(clause)
    if position < 0:
        return False
    before = text[:position]
    if re.fullmatch(rf"\s*{_GREETING}[\s!,.:–-]*", before, re.I):
        return True
    if before.strip():
        return False
    message = _display(rule.sentence.message.content)
    at = message.find(rule.sentence.display)
    return at > 0 and bool(re.fullmatch(rf"\s*{_GREETING}[\s!,.:–-]*", message[:at], re.I))


def _job(rule: _Rule, clause: str) -> None:
    m = re.search(rf"\bI(?:'m| am) (?:now |officially |finally |currently |also |already |still )*(?:a|an) "
                  rf"(?P<title>{_ROLE})\b(?: (?:at|for|with) (?P<org>{_ORG}){_AFTER_ORG})?", clause)
    if m and not _guarded(clause, m):
        title = m.group("title")
        rule.add("identity", title, f"The user works as a {title}.", slot="job_title", importance=0.7,
                 tags=("work",))
        if m.group("org"):
            _employer(rule, _trim_org(m.group("org")))
    m = re.search(rf"\b(?:I (?:now |currently |still )?work|I(?:'m| am) (?:now |currently |still )?"
                  rf"(?:working|employed)) (?:remotely |full[- ]time |part[- ]time )?as (?:a|an) (?P<title>{_ROLE})\b",
                  clause)
    if m and not _guarded(clause, m):
        title = m.group("title")
        rule.add("identity", title, f"The user works as a {title}.", slot="job_title", importance=0.7,
                 tags=("work",))
    m = re.search(rf"\bI (?:currently |now )?work (?:remotely |full[- ]time |part[- ]time )?(?:at|for) (?P<org>{_ORG})"
                  rf"{_AFTER_ORG}(?: as (?:a|an) (?P<title>{_ROLE})\b)?", clause)
    if m and not _guarded(clause, m):
        _employer(rule, _trim_org(m.group("org")))
        if m.group("title"):
            title = m.group("title")
            rule.add("identity", title, f"The user works as a {title}.", slot="job_title", importance=0.7,
                     tags=("work",))
    m = re.search(rf"\bI(?:'ve| have) been (?:working )?at (?P<org>{_ORG}) for (?P<n>\w+) (?P<unit>years?|months?)\b",
                  clause)
    if m and not _guarded(clause, m):
        since = _years_back(rule.said, m.group("n"), m.group("unit"))
        org = _trim_org(m.group("org"))
        _employer(rule, org, valid_from=since,
                  content=f"The user has worked at {org} for {m.group('n')} {m.group('unit')}.")
    m = re.search(rf"\bI(?:'ve| have)? (?:just |recently |finally |officially )*(?:started|began|took|accepted) "
                  rf"(?:a |my )?(?:new )?(?:job|position|role) (?:at|with) (?P<org>{_ORG}){_AFTER_ORG}", clause) \
        or re.search(rf"\bI(?:'ve| have)? (?:just |recently |finally |officially |now |also )*joined (?P<org>{_ORG})"
                     rf"{_AFTER_ORG}", clause)
    if m and not _guarded(clause, m) and not _joined_company(rule, m.group("org"), clause[m.end():]):
        when = rule.date_in(clause[m.end():])
        org = _trim_org(m.group("org"))
        _employer(rule, org, valid_from=when.day if when and when.precision == "day" else None, new=True)
        if when:
            rule.key_date(when, f"The user started a new job at {org}.")
    m = re.search(rf"\bI (?:left|quit) (?P<org>{_ORG}){_AFTER_ORG}", clause)
    if m and not _guarded(clause, m):
        org = _trim_org(m.group("org"))
        when = rule.date_in(clause[m.end():])
        day = when.day if when and when.precision == "day" else rule.said
        rule.add("event", f"left {org}", f"The user left {org}" + (f" around {human(when)}." if when else "."),
                 importance=0.7, tags=("work",), valid_from=day)
        rule.entity(org, "organization")
        if when:
            rule.key_date(when, f"The user left {org}.")
    m = re.search(rf"\bI(?:'m| am) interviewing (?:at|with) (?P<org>{_ORG})", clause)
    if m and not _guarded(clause, m):
        org = _trim_org(m.group("org"))
        rule.add("event", f"interviewing at {org}", f"The user is interviewing at {org}.", importance=0.5,
                 tags=("work", "career"))
        rule.entity(org, "organization")
    m = re.search(rf"\bI have (?:a|an|my) (?:(?:first|second|third|final|last|job|technical|onsite) )*interview "
                  rf"(?:at|with) (?P<org>{_ORG})", clause)
    if m and not _guarded(clause, m):
        org = _trim_org(m.group("org"))
        when = rule.date_in(clause[m.end():])
        suffix = f" on {human(when)}" if when and when.precision == "day" else ""
        rule.add("event", f"interview at {org}", f"The user has an interview at {org}{suffix}.", importance=0.5,
                 tags=("work", "career"), valid_from=when.day if suffix and when else None)
        rule.entity(org, "organization")
        if when:
            rule.key_date(when, f"The user has an interview at {org}.")


def _joined_company(rule: _Rule, org: str, rest: str) -> bool:
    """True when "joined X" is keeping someone company, not a new employer: "I joined Sam for dinner", "I joined
    Ana at the bar" (a person the conversation names, or a meal or a place after the name)."""
    if _trim_org(org) in rule.context.people or _trim_org(org).split()[0] in rule.context.people:
        return True
    return bool(re.match(r"\s+(?:for\b(?! (?:a |the |my )?(?:new )?(?:role|position|job)\b)|"
                         r"at (?:the|a|an|my|our|his|her|their)\b(?! (?:start|end|beginning)\b))", rest)
                or _SOCIAL.search(rest))


# Company kept, not a job: "I'm joining Sam and Ana for dinner", "I joined Noor on a hike".
_SOCIAL = re.compile(r"\b(?:for|on|at) (?:a |an |the |some )?(?:lunch|dinner|breakfast|brunch|drinks?|coffee|tea|walk|"
                     r"run|hike|trip|ride|game|party|movie|concert|show|picnic|call|chat|meeting|swim|beer|wedding)\b",
                     re.I)


_TITLE = rf"(?:a |an |the )?(?P<title>{_ROLE})\b"
_AT_ORG = rf"(?: (?:at|for|with) (?P<org>{_ORG}){_AFTER_ORG})?"
# What may follow a job title stated on its own: the end, punctuation, "now", a place of work or a duration.
_AFTER_TITLE = (r"(?=\s*(?:$|[,.;:!)]|-\s)|\s+(?:now|too|since|for|at|with|in|on|and|but|so|last|this|earlier|"
                r"recently)\b)")
# After "I'm the <role>": only the end, "now" or a place of work ("I'm the tester on this PR" is no job).
_AFTER_THE_TITLE = r"(?=\s*(?:$|[,.;:!)]|-\s)|\s+(?:now|here|at|and|but|since|on (?:my|our|the) team)\b)"
_SINCE_FOR = r"(?=\s+(?:now\s+)?(?:for|since|ever since)\b)"
_ROLE_CHANGE = r"(?:moved|stepped|switched|transitioned|changed|shifted) (?:roles? |careers? |jobs? )?(?:in)?to"


def _job_more(rule: _Rule, clause: str) -> None:
    """Job titles and employers said in other words than "I'm a ... at ..." / "I work at ..."."""
    titles = (
        # "My role is product manager", "My new job title is tech lead"
        rf"\b[Mm]y (?:new |current |official |actual )?(?:role|job title|title|position|job) is (?:now )?"
        rf"(?:that of )?{_TITLE}{_AFTER_TITLE}{_AT_ORG}",
        # "I got promoted to tech lead", "I was promoted to engineering manager last month"
        rf"\bI(?:'ve| have)? (?:just |finally |recently |been |got |was |just got |just been |finally got )*"
        rf"promoted to (?:the (?:role|position) of )?{_TITLE}{_AT_ORG}",
        # "I became a data scientist", "I've become the team's tech lead"
        rf"\bI(?:'ve| have)? (?:just |recently |finally |now |officially )?(?:became|become) "
        rf"(?:a|an|the|our|the team's) (?:new )?(?P<title>{_ROLE})\b{_AT_ORG}",
        # "I took a new role as designer", "I started as a tech lead", "I accepted a position as ..."
        rf"\bI(?:'ve| have)? (?:just |recently |finally )?(?:took|taken|accepted|started|got|landed|began|begun) "
        rf"(?:(?:a|an|the|my) )?(?:new )?(?:(?:role|position|job) )?as {_TITLE}{_AT_ORG}",
        # "I've been a designer for five years", "I've worked as a nurse since 2019"
        rf"\bI(?:'ve| have) (?:been|worked as|been working as) {_TITLE}{_SINCE_FOR}",
        # "I'm the new tech lead", "I'm our team's engineering manager"
        rf"\bI(?:'m| am) (?:now |currently |officially |finally )*(?:the|our|the team's|our team's) (?:new )?"
        rf"(?P<the_title>{_ROLE})\b"
        rf"{_AFTER_THE_TITLE}{_AT_ORG}",
        # "I've been made tech lead", "They made me the engineering manager"
        rf"\b(?:I(?:'ve| have)? (?:just |finally |recently |officially )?(?:been|was|got) made|"
        rf"(?:[Tt]hey|[Mm]y (?:boss|manager|company|team)) (?:just |finally |officially )?made me) "
        rf"(?:a |an |the |our )?(?:new )?(?P<title>{_ROLE})\b{_AFTER_TITLE}{_AT_ORG}",
        # "I switched to a designer role", "I stepped into the tech lead role", "I've transitioned to data scientist",
        # "I moved into a role as product manager" (not "I switched to a new manager": a person, not a role)
        rf"\bI(?:'ve| have)? (?:just |recently |finally |officially )?{_ROLE_CHANGE} (?:a |an |the )(?:new )?"
        rf"(?P<title>{_ROLE}) (?:role|position|job)\b{_AT_ORG}",
        rf"\bI(?:'ve| have)? (?:just |recently |finally |officially )?{_ROLE_CHANGE} (?:(?:a |an |the )?(?:new )?"
        rf"(?:role|position|job) (?:as|of) (?:a |an )?)?(?P<title>{_ROLE})\b{_AFTER_TITLE}{_AT_ORG}",
        # "I got the tech lead job", "I landed a product manager role at Hooli"
        rf"\bI(?:'ve| have)? (?:just |finally |recently |officially )?(?:got|gotten|landed|accepted|took|taken) "
        rf"(?:the|a|an) (?:new )?(?P<title>{_ROLE}) (?:role|job|position)\b{_AT_ORG}",
        # "I've taken on the tech lead role", "I stepped up as engineering manager", "I was hired as a designer"
        rf"\bI(?:'ve| have)? (?:just |recently |finally |officially )?(?:took on|taken on|stepped into|assumed) "
        rf"(?:the |a |an )(?:new )?(?P<title>{_ROLE}) (?:role|position|job)\b{_AT_ORG}",
        rf"\bI(?:'ve| have)? (?:just |recently |finally |officially )?stepped up as {_TITLE}{_AFTER_TITLE}{_AT_ORG}",
        rf"\bI(?:'ve| have)? (?:just |recently |finally )?(?:been|was|got) hired as {_TITLE}{_AT_ORG}",
        # "I'm starting as a designer on Monday", "I start as tech lead next week", "I joined Hooli as a designer"
        rf"\bI(?:'m| am) starting (?:(?:a |my )?new (?:job|role|position) )?as {_TITLE}{_AT_ORG}",
        rf"\bI (?:start|begin) (?:(?:a |my )?new (?:job|role|position) )?as {_TITLE}{_AT_ORG}",
        rf"\bI(?:'ve| have)? (?:just |recently |finally |officially )*joined {_ORG} as {_TITLE}",
        # "They promoted me to tech lead", "I got the promotion to engineering manager", "My title changed to ..."
        rf"\b(?:[Tt]hey|[Mm]y (?:boss|manager|company|team)) (?:just |finally |officially )?promoted me to {_TITLE}"
        rf"{_AT_ORG}",
        rf"\bI (?:just |finally |recently )?(?:got|received|earned|accepted) (?:the |a |my )?promotion to {_TITLE}"
        rf"{_AT_ORG}",
        rf"\b[Mm]y (?:job |official )?(?:title|role|position) (?:has |just |officially )*changed to {_TITLE}"
        rf"{_AFTER_TITLE}",
        # "I'm moving into a product manager role", "I'm stepping into the tech lead position"
        rf"\bI(?:'m| am) (?:now |officially )?(?:moving|stepping|switching|transitioning) (?:in)?to (?:a |an |the )"
        rf"(?:new )?(?P<title>{_ROLE}) (?:role|position|job)\b{_AT_ORG}",
        # "Tech lead is my title now", "Designer is my official title"
        rf"^(?:[Aa] |[Aa]n )?(?P<title>{_ROLE}) is (?:now )?my (?:new |official |job |current )*(?:title|role|job)"
        rf"(?=\s*(?:$|[,.;:!)])|\s+(?:now|these days)\b)",
        # "New role: tech lead!"
        rf"^[Nn]ew (?:role|title|job title|position)\s*[:-]\s*(?:a |an )?(?P<title>{_ROLE})\s*[.!]*$",
        # "I work as backend engineer" (no article)
        rf"\bI work (?:remotely |full[- ]time |part[- ]time )?as (?!(?:a|an|the|my|our|part of) )(?P<title>{_ROLE})\b"
        rf"{_AFTER_TITLE}",
        # "I'm tech lead now" (no article, "now" after it)
        rf"\bI(?:'m| am) (?:now |officially )?(?P<bare_title>{_ROLE}) now\b",
    )
    for pattern in titles:
        # a title that opens the sentence is capitalised ("Tech lead is my title now")
        m = re.search(pattern, clause[:1].lower() + clause[1:] if pattern.startswith("^") else clause)
        if m and not _guarded(clause, m):
            groups = m.groupdict()
            title = groups.get("title") or groups.get("the_title") or groups.get("bare_title")
            if title is None:  # every pattern names one of the three groups
                continue
            if not groups.get("title") and title in _BARE_RISKY_ROLES:
                continue  # "I'm the owner of this bug", "I'm the lead on it", "I'm head now"
            _job_title(rule, title)
            if m.groupdict().get("org"):
                _employer(rule, _trim_org(m.group("org")))
            break
    employers = (
        # "I'm employed by Globex", "I'm working for Initech now"
        (rf"\bI(?:'m| am) (?:now |currently |still )?(?:employed|working) (?:by|at|for) (?P<org>{_ORG}){_AFTER_ORG}",
         False),
        # "My employer is Globex", "My new employer is ..."
        (rf"\b[Mm]y (?:new |current )?employer is (?:now )?(?P<org>{_ORG}){_AFTER_ORG}", False),
        # "I've worked for Globex since 2020", "I've been working at Hooli for two years"
        (rf"\bI(?:'ve| have) (?:worked|been working|been employed) (?:at|for|by) (?P<org>{_ORG}){_SINCE_FOR}", False),
        # "I've just started at Globex", "I started work at Hooli on Monday"
        (rf"\bI(?:'ve| have)? (?:just |recently |finally )?(?:started|began|begun) (?:work(?:ing)? )?at "
         rf"(?P<org>{_ORG}){_AFTER_ORG}", True),
        # "Today was my first day at Globex", "My first week at Hooli was intense"
        (rf"\b[Mm]y first (?:day|week) (?:of work |on the job )?at (?P<org>{_ORG})(?:{_AFTER_ORG}|(?=\s+(?:was|is|went|"
         r"felt|has|starts|started|begins)\b))", True),
        # "I got a job at Globex", "I landed a new position with Hooli", "I got hired at Initech"
        (rf"\bI(?:'ve| have)? (?:just |finally |recently )?(?:got|landed|gotten) (?:a |the |my )?(?:new )?"
         rf"(?:job|position|role) (?:at|with) (?P<org>{_ORG}){_AFTER_ORG}", True),
        (rf"\bI(?:'ve| have)? (?:just |finally |recently )?(?:got|been|was) hired (?:at|by) (?P<org>{_ORG})"
         rf"{_AFTER_ORG}", True),
    )
    for pattern, new in employers:
        m = re.search(pattern, clause)
        if m and not _guarded(clause, m):
            if new and re.search(r"\b(?:started|began|begun|first|got|landed|hired)\b.*\b(?:left|quit)\b",
                                 rule.sentence.text):
                continue  # "I started at Acme in 2019 and left in 2022"
            if _FOR_A_WHILE.search(clause[m.end():]):
                continue  # "I'm working at the Acme stand this week"
            org = _trim_org(m.group("org"))
            when = rule.date_in(clause[m.end():]) if new else None
            _employer(rule, org, valid_from=when.day if when and when.precision == "day" else None, new=new)
            break


# Teams one plays or volunteers in, not teams one is employed in ("I'm on the rowing team at Harvard").
_HOBBY_TEAM = re.compile(
    r"\b(?:football|soccer|rugby|hockey|basketball|baseball|softball|volleyball|cricket|rowing|swim(?:ming)?|track|"
    r"cross-country|debate|chess|quiz|trivia|bowling|cheer(?:leading)?|dance|running|cycling|climbing|tennis|golf|"
    r"netball|lacrosse|handball|badminton|ski(?:ing)?|varsity|church|choir|band|book|reading|hiking|volunteer(?:ing)?|"
    r"pub|sports?|intramural|fantasy|darts|poker|gaming|esports|alumni|parents?|pta|fan)\b",
    re.I,
)
_TEAM = r"(?:team|squad|group|department|division|unit|org|organization|practice)"
_SCHOOL = re.compile(r"\b(?:University|College|School|Academy|Institute|Kindergarten|Nursery)\b")
# The user changing or leaving a job, said in the conversation ("I left Acme", "I got a new job", "I resigned").
_JOB_CHANGE = re.compile(
    rf"\b(?:[Nn]ew (?:job|role|employer|position|company)|switched (?:jobs|companies|employers)|"
    rf"changed (?:jobs|companies|employers)|job change|left my (?:job|old job|company)|quit my (?:job|old job)|"
    rf"resigned|laid off|handed in my notice|gave (?:my )?notice|my last day at)\b|"
    rf"\bI(?:'ve| have)? (?:just |finally )?(?:left|quit) "
    rf"(?!my\b|the\b|it\b|this\b|that\b){_CAP}"
)
_SPAN = re.compile(r"\bfor (?:a|an|one|two|three|four|\d+|a few|a couple of) (?:days?|weeks?|months?)\b", re.I)
# What may follow "an offer from X" for it to be a job the user took: a start, a role, a move to join.
_OFFER_TAKEN = re.compile(
    rf"^\s*,?\s*(?:and (?:I )?(?:will |'ll |am going to |)(?:start|begin|join)|starting|to (?:join|work|start)|"
    rf"as (?:a |an |the |their )?(?:new )?{_ROLE}\b)"
)


def _employer_more(rule: _Rule, clause: str) -> None:
    """Employers said through a team, an offer, a contract or "I'm now at X" (see each pattern)."""
    context = rule.context
    found: list[tuple[re.Match[str], str]] = []  # (match, how: "offer", "starting", "joined" or "")
    # "I accepted an offer from Hooli and start Monday", "I took a job offer from Globex", "I signed Initech's offer"
    # (not "I accepted an offer from Santander for a loan": an offer needs "job" or a start after it)
    m = re.search(rf"\bI(?:'ve| have)? (?:just |finally |officially |now )*(?:accepted|took|taken|signed) "
                  rf"(?:(?:a|an|the|their|my) )?(?:new )?(?P<job>(?:job|work|full-time|permanent|employment) )?offer "
                  rf"(?:from|with|at) (?P<org>{_ORG})(?P<rest>(?=\s*(?:$|[,.;:!)]|-\s)|\s+(?:and|starting|to|as|last|"
                  rf"this|yesterday|today|earlier|in|on)\b).*)$", clause) or re.search(
        rf"\bI(?:'ve| have)? (?:just |finally |officially |now )*(?:accepted|took|taken|signed) (?P<org>{_ORG})'s "
        rf"(?:new )?(?P<job>(?:job |work )?)offer(?P<rest>(?=\s*(?:$|[,.;:!)]|-\s)|\s+(?:and|starting|to|as)\b).*)$",
        clause)
    if m and (m.group("job") or _OFFER_TAKEN.match(m.group("rest"))):
        found.append((m, "offer"))
    # "I signed with Hooli last week and start in May" (a contract signed, with a start: not "signed with a label")
    m = re.search(rf"\bI(?:'ve| have)? (?:just |finally |officially )?signed (?:on )?with (?P<org>{_ORG})(?P<rest>.*)$",
                  clause)
    if m and re.search(r"\band (?:I )?(?:will |'ll )?(?:start|begin)\b", m.group("rest")):
        found.append((m, "offer"))
    # "I'm on the platform team at Hooli", "I work in the data group at Globex", "I lead the design team at Initech",
    # "I joined the payments team at Pied Piper", "I'm on Globex's platform team"
    m = re.search(rf"\bI(?:'m| am|'ve been| have been) (?:now |currently |still |also )?(?:on|in|part of|a member of) "
                  rf"(?:the |a |an |our )?(?P<team>(?:[\w&-]+ ){{0,3}}){_TEAM} (?:at|with|over at|for) "
                  rf"(?P<org>{_ORG}){_AFTER_ORG}", clause) or re.search(
        rf"\bI (?:now |currently |still )?(?:work|lead|manage|run|head) (?:on |in |with )?(?:the |a |an |our )?"
        rf"(?P<team>(?:[\w&-]+ ){{0,3}}){_TEAM} (?:at|with|for) (?P<org>{_ORG}){_AFTER_ORG}", clause) or re.search(
        rf"\bI(?:'m| am) (?:now |currently |still |also )?(?:on|in|part of) (?P<org>{_ORG})'s "
        rf"(?P<team>(?:[\w&-]+ ){{0,3}}){_TEAM}\b", clause)
    if m and not _HOBBY_TEAM.search(m.group("team") or ""):
        found.append((m, ""))
    m = re.search(rf"\bI(?:'ve| have)? (?:just |recently |finally )?joined (?:the |a |an )?"
                  rf"(?P<team>(?:[\w&-]+ ){{0,3}}){_TEAM} (?:at|with|over at) (?P<org>{_ORG}){_AFTER_ORG}", clause)
    if m and not _HOBBY_TEAM.search(m.group("team") or ""):
        found.append((m, "joined"))
    # "I contract for Globex", "I'm freelancing for Hooli", "I do consulting work for Initech"
    m = re.search(rf"\bI(?:'m| am)? (?:now |currently |still |mostly )?(?:contract(?:ing)?|freelanc(?:e|ing)|"
                  rf"consult(?:ing)?|do (?:contract|freelance|consulting) work) (?:for|at) (?P<org>{_ORG}){_AFTER_ORG}",
                  clause)
    if m:
        found.append((m, ""))
    # "My new job is at Hooli", "I'm starting at Hooli next week", "I start a new job with Globex on Monday" (not a
    # school: "I'm starting at Stanford University in the fall")
    m = re.search(rf"\b[Mm]y (?P<new>new |current )?(?:job|role|position) is (?:now )?(?:at|with) (?P<org>{_ORG})"
                  rf"{_AFTER_ORG}", clause)
    if m:
        found.append((m, "joined" if m.group("new") == "new " else ""))
    m = re.search(rf"\bI(?:'m| am| will be|'ll be) starting (?P<job>(?:(?:a|my) )?new (?:job|role|position) )?"
                  rf"(?:at|with) (?P<org>{_ORG}){_AFTER_START_ORG}", clause) or re.search(
        rf"\bI (?:start|begin) (?P<job>(?:(?:a|my) )?new (?:job|role|position) )?(?:at|with) (?P<org>{_ORG})"
        rf"{_AFTER_START_ORG}", clause)
    if m and (m.group("job") or not _SCHOOL.search(m.group("org"))):
        found.append((m, "starting"))
    # "I've been with Acme Robotics for three years": "with" a person is no employer, so only an organisation's name
    m = re.search(rf"\bI(?:'ve| have) been with (?P<org>{_ORG}){_SINCE_FOR}", clause)
    if m and (any(w in ORG_WORDS for w in _trim_org(m.group("org")).split()) or _trim_org(m.group("org"))
              in context.organizations):
        found.append((m, ""))
    # "I've been at Globex since 2019", "I've spent five years at Initech", "I'm a Hooli employee", "My employer,
    # Globex, ...", "At Globex, I'm a backend engineer" / "At Hooli I lead the data team"
    m = re.search(rf"\bI(?:'ve| have) been (?:working )?at (?P<org>{_ORG}) since (?:\d{{4}}|last year)\b", clause) \
        or re.search(rf"\bI(?:'ve| have) (?:now )?spent (?:the (?:last|past) )?(?:\w+ ){{1,2}}(?:years?|months?) "
                     rf"(?:at|with|working (?:at|for)) (?P<org>{_ORG}){_AFTER_ORG}", clause) \
        or re.search(rf"\bI(?:'m| am) (?:now |currently )?(?:a|an) (?P<org>{_ORG}) (?:employee|staffer|engineer|"
                     rf"developer|designer|manager)\b", clause) \
        or re.search(rf"\b[Mm]y (?:new |current )?(?:employer|company), (?P<org>{_ORG}), ", clause)
    if m and not _SCHOOL.search(m.group("org")):
        found.append((m, ""))
    # "I'm joining Globex next month", "I'll be joining Hooli as a designer" (not "I'm joining Sam for dinner")
    m = re.search(rf"\bI(?:'m| am|'ll be| will be) (?:officially |now )?joining (?P<org>{_ORG}){_AFTER_START_ORG}",
                  clause)
    if m and not _joined_company(rule, m.group("org"), clause[m.end():]) and not _SCHOOL.search(m.group("org")):
        found.append((m, "starting"))
    # "I got an offer from Hooli and said yes"
    m = re.search(rf"\bI (?:just )?(?:got|received|had) (?:a |an |the |their )?(?:new |job )?offer (?:from|with) "
                  rf"(?P<org>{_ORG})(?:,? and (?:I )?(?:accepted(?: it)?|took it|said yes|signed)|,? which I "
                  rf"(?:accepted|took))\b", clause)
    if m:
        found.append((m, "offer"))
    # "Globex is where I work now", "My company is Hooli", "I work for a startup called Pied Piper"
    m = re.search(rf"(?:^|\b(?:and|but|so) )(?P<org>{_ORG}) is where I (?:now |currently )?"
                  r"(?:work|am working|'m working)(?=\s*(?:$|[,.;:!)])|\s+(?:now|these days|nowadays|as)\b)", clause) \
        or re.search(
        rf"\b[Mm]y (?:new |current )?(?:company|workplace) is (?:now )?(?P<org>{_ORG})"
        r"(?=\s*(?:$|[,.;:!)])|\s+(?:now|these days)\b)", clause) or re.search(
        rf"\bI (?:now |currently )?work (?:at|for) (?:a |an )?(?:\w+ )?(?:company|startup|firm|agency|bank|studio|"
        rf"consultancy|lab|shop|business) (?:called|named) (?P<org>{_ORG}){_AFTER_ORG}", clause)
    if m:
        found.append((m, ""))
    # "I'm now at Globex", "I'm at Hooli these days": an employer only when the conversation says the user changed
    # jobs, or the name is an organisation's ("I'm now at the station", "I'm at Heathrow now" give none)
    m = re.search(rf"\bI(?:'m| am) (?P<now>now |currently )?at (?P<org>{_ORG})"
                  r"(?=\s*(?:$|[,.;:!)]|-\s)|\s+(?P<after>now|these days|nowadays)\b)", clause)
    if m and (m.group("now") or m.group("after")):
        org = _trim_org(m.group("org"))
        if any(w in ORG_WORDS for w in org.split()) or org in context.organizations or context.job_change:
            found.append((m, ""))
    found += _employer_in_the_sentence(rule, clause)
    for m, how in found:
        org = _trim_org(m.group("org"))
        rest = clause[m.end():]
        # a state said for a while is temporary ("I'm contracting for Hooli this week"); an event's time is its date
        # ("I start at Hooli today"), but not a span ("I joined the team at Hooli for a month")
        temporary = _SPAN.search(rest) if how else _FOR_A_WHILE.search(rest)
        if _guarded(clause, m) or temporary or not org or org in context.people:
            continue
        if org.split()[0] in DEMONYMS or any(w in NOT_PLACES for w in org.split()):
            continue
        if how in ("offer", "starting"):  # the start may be days away: the fact holds from when it was said
            content = f"The user accepted a job at {org}." if how == "offer" else f"The user starts a new job at {org}."
            _employer(rule, org, new=True, content=content)
        else:
            when = rule.date_in(clause[m.end():]) if how == "joined" else None
            _employer(rule, org, valid_from=when.day if when and when.precision == "day" else None, new=bool(how))
        break


def _employer_in_the_sentence(rule: _Rule, clause: str) -> list[tuple[re.Match[str], str]]:
    """Employers said across the clauses of a sentence, read once on its first clause: "At Globex, I'm a backend
    engineer" / "At Hooli I lead the data team", "Globex offered me a job and I took it" (the clauses split before
    "I", so the name and the statement are in different clauses)."""
    sentence = _QUOTED.sub(" ", rule.sentence.text).strip()
    if not sentence.startswith(clause):
        return []
    m = re.match(rf"^[Aa]t (?P<org>{_ORG}),? I(?: (?:now |currently )?work as |(?:'m| am) (?:now )?(?:a|an|the) "
                 rf"{_ROLE}\b| (?:lead|manage|run|head) (?:the |a |our )?(?:[\w&-]+ ){{0,3}}{_TEAM}\b)", sentence) \
        or re.match(rf"^(?P<org>{_ORG}) (?:just |finally )?offered me (?:a|the|their) (?:\w+ ){{0,3}}"
                    rf"(?:job|role|position)\b[^.;!?]*?,? and I (?:accepted(?: it)?|took it|said yes|signed)\b",
                    sentence)
    if not m or _SCHOOL.search(m.group("org")) or any(g.search(m.group(0)) for g in (HYPOTHETICAL, NEGATION, REPORTED)):
        return []
    return [(m, "offer" if "offered me" in m.group(0) else "")]


_BARE_RISKY_ROLES = frozenset({"owner", "head", "lead", "director", "officer", "student", "coach", "writer", "editor"})


def _job_title(rule: _Rule, title: str) -> None:
    rule.add("identity", title, f"The user works as a {title}.", slot="job_title", importance=0.7, tags=("work",))


def _years_back(said: date, number: str, unit: str) -> date | None:
    from memlake.distill.dates import NUMBERS

    n = int(number) if number.isdigit() else NUMBERS.get(number.lower())
    if not n:
        return None
    months = n * 12 if unit.startswith("year") else n
    index = said.year * 12 + said.month - 1 - months
    return date(index // 12, index % 12 + 1, min(said.day, 28))


def _employer(rule: _Rule, org: str, valid_from: date | None = None, new: bool = False,
              content: str | None = None) -> None:
    if not org or org.split()[0] in NOT_NAMES:
        return
    content = content or (f"The user started a new job at {org}." if new else f"The user works at {org}.")
    rule.add("fact", org, content, slot="employer", importance=0.8, tags=("work",), valid_from=valid_from)
    rule.entity(org, "organization")
    rule.relation(USER_SUBJECT, "works_at", org, valid_from=(valid_from or rule.said).isoformat())
    if org not in rule.context.organizations:
        rule.context.organizations.append(org)


def _home(rule: _Rule, clause: str) -> None:
    m = re.search(rf"\b(?:I|[Ww]e) (?:now |currently |still )?live in (?P<city>{_NAME})", clause) or re.search(
        rf"\b(?:I(?:'m| am)|[Ww]e(?:'re| are)) (?:now |currently |still )?living in (?P<city>{_NAME})", clause)
    if m and not _guarded(clause, m):
        city = _trim_name(m.group("city"))
        until = None
        rest = clause[m.end():]
        if re.match(r"\s+until then\b", rest):
            earlier = [d for d in rule.dates if d.start < rule.sentence.text.find(clause)]
            until = earlier[-1] if earlier else _previous_date(rule)
        elif re.match(r"\s+until\b", rest):
            until = rule.date_in(rest)
        if not _TEMPORARY.match(rest):
            _city(rule, city, f"The user lives in {city}.", valid_until=until.day if until else None)
    # "I've been living in Oslo for a few years", "I've lived in Porto since 2019" (not "I've lived in Rome" alone)
    m = re.search(rf"\bI(?:'ve| have) (?:been living|lived) in (?P<city>{_NAME}){_SINCE_FOR}", clause) or re.search(
        rf"\bI(?:'ve| have) been living in (?P<city>{_NAME})(?=\s*(?:$|[,.;!]|\s+(?:now|these days)\b))", clause)
    if m and not _guarded(clause, m):
        city = _trim_name(m.group("city"))
        _city(rule, city, f"The user lives in {city}.")
    m = re.search(rf"\b(?:I(?:'m| am)|[Ww]e(?:'re| are)) (?:now |currently |still )?based in (?P<city>{_NAME})", clause)
    if m and not _guarded(clause, m):
        city = _trim_name(m.group("city"))
        _city(rule, city, f"The user lives in {city}.")
    _home_more(rule, clause)
    # "Our flat in Porto is tiny": the user's home, as the subject of a present-tense clause
    m = re.match(rf"^(?:[Mm]y|[Oo]ur) (?:new )?(?:flat|apartment|house|home|place) in (?P<city>{_NAME}) "
                 r"(?:is|has|feels|looks|gets)\b", clause)
    if m:
        city = _trim_name(m.group("city"))
        _city(rule, city, f"The user lives in {city}.", confidence=0.8)
    # "I moved to Oslo", "We've relocated from Berlin to Lisbon", "We finally made the move to Porto"
    m = re.search(rf"\b(?:(?:I|[Ww]e)(?:'ve| have)? (?:just |finally |recently |now |officially |also )*|"
                  rf"^(?:[Jj]ust|[Ff]inally|[Rr]ecently) )(?:moved|relocated|made the (?:big |long |final |permanent )?"
                  rf"(?:move|jump|leap)) (?:house |home )?(?:back |over |out |away )?(?:from {_NAME} )?to "
                  rf"(?P<city>{_NAME})", clause)
    if m and not _guarded(clause, m):
        city = _trim_name(m.group("city"))
        rest = clause[m.end():]
        if not _TEMPORARY.match(rest):
            when = rule.date_in(rest)
            day = when.day if when and when.precision == "day" else None
            content = f"The user moved to {city}" + (f" around {human(when)}." if when else ".")
            _city(rule, city, content, valid_from=day)
            if when:
                rule.key_date(when, f"The user moved to {city}.")
    m = re.search(rf"\b(?:I'm|I am|[Ww]e're|[Ww]e are) moving (?:from (?P<from>{_NAME}) )?to (?P<to>{_NAME})",
                  clause)
    if m and not _guarded(clause, m):
        origin = _trim_name(m.group("from") or "")
        target = _trim_name(m.group("to"))
        when = rule.date_in(clause[m.end():])
        what = f"move from {origin} to {target}" if origin else f"move to {target}"
        content = f"The user plans to {what}" + (f" ({_when_phrase(when)})." if when else ".")
        rule.add("commitment", what, content, importance=0.7, tags=("home", "move"))
        for place in (origin, target):
            if place:
                rule.entity(place, "place")
        if when:
            rule.key_date(when, f"The user plans to {what}.")


# What may follow a city that ends a statement of home: the end, punctuation, "now", "these days".
_AFTER_HOME = r"(?=\s*(?:$|[,.;:!)]|-\s)|\s+(?:now|these days|nowadays|for good|permanently|for|since)\b)"
_HOME_PATTERNS = (
    # "We've settled in Dublin now", "I've finally settled down in Porto" (not "We settled in for the movie")
    rf"\b(?:I|[Ww]e)(?:'ve| have|'re| are|'m| am)? (?:now |finally |just |all |fully |happily |officially |"
    rf"properly |been )*settled (?:down )?(?:in|into (?:life|(?:my|our) new (?:flat|apartment|house|home|place)) in) "
    rf"(?P<city>{_NAME})",
    # "Now living in Oslo", "Living in Rome these days" (a sentence of its own, not "Living in Rome must be nice")
    rf"^(?:(?:[Nn]ow|[Cc]urrently|[Ss]till) )?(?:[Ll]iving|[Bb]ased) in (?P<city>{_NAME}){_AFTER_HOME}",
    # "I rent a flat in Lisbon", "We're renting in Porto now"
    rf"\b(?:(?:I|[Ww]e) (?:now |currently |still )?rent|(?:I(?:'m| am)|[Ww]e(?:'re| are)) (?:now |currently |still )?"
    rf"renting) (?:(?:a|an|our|my) )?(?:(?:new |small |little |tiny |big |nice )?(?:flat|apartment|place|house|room|"
    rf"studio|condo|loft) )?in (?P<city>{_NAME})",
    # "We call Lisbon home now", "Porto is our home now", "Home is Oslo these days", "My home is in Prague" (not "Sam
    # is home now": a person at home)
    rf"\b(?:I|[Ww]e)(?:'ve| have)? (?:now |proudly |happily )?call(?:ed)? (?P<city>{_NAME}) home{_AFTER_HOME}",
    rf"^(?P<city>{_NAME}) has been (?:my |our )?home{_AFTER_HOME}",
    rf"^(?P<city>{_NAME}) is (?:now )?(?:my|our) (?:new )?home{_AFTER_HOME}",
    rf"^(?:(?:[Mm]y|[Oo]ur) )?(?:new )?[Hh]ome(?: for (?:me|us)| base)? is (?:now )?(?:in )?(?P<city>{_NAME})"
    rf"{_AFTER_HOME}",
    # "We've made Lisbon our home", "I'm a Porto resident now"
    rf"\b(?:I|[Ww]e)(?:'ve| have)? (?:now |finally |just )?made (?P<city>{_NAME}) (?:my|our) (?:new |permanent )?"
    r"home\b",
    rf"\bI(?:'m| am) (?:now |officially )?(?:a|an) (?P<city>{_NAME}) (?:resident|local)\b",
    # "Hello from our new flat in Porto!", "We got the keys to our new place in Oslo" (a new home, said as such)
    rf"\b(?:[Mm]y|[Oo]ur) new (?:flat|apartment|house|home|place|condo|studio) in (?P<city>{_NAME})",
    # "Lisbon, where I live, is lovely"
    rf"(?:^|\bin )(?P<city>{_NAME}),? where (?:I|we) (?:now |currently )?live\b",
    # "I've been in Oslo for two years now", "We've been in Porto since 2019" (not "for two weeks": a stay)
    rf"\b(?:I|[Ww]e)(?:'ve| have) been (?:living |based )?in (?P<city>{_NAME}) (?:now )?(?:for (?:a|one|two|three|four|"
    rf"five|six|seven|eight|nine|ten|many|several|a few|a couple of|\d+|over a|almost a|nearly a|more than a) "
    rf"(?:years?|decades?)|since (?:\d{{4}}|last year|childhood))\b",
)


def _home_more(rule: _Rule, clause: str) -> None:
    """Home cities said in other words than live / moved to / based in (see `_HOME_PATTERNS`)."""
    for pattern in _HOME_PATTERNS:
        m = re.search(pattern, clause)
        if not m or _guarded(clause, m):
            continue
        rest = _SINCE_WHEN.sub(" ", clause[m.end():])
        city = _trim_name(m.group("city"))
        if _TEMPORARY.match(rest) or _FOR_A_WHILE.search(rest) or city in rule.context.people or "'s" in m.group(
                "city"):
            continue
        _city(rule, city, f"The user lives in {city}.")
        return


def _when_phrase(mention: DateMention) -> str:
    return human(mention) if mention.precision == "month" else f"around {mention.day.isoformat()}"


def _previous_date(rule: _Rule) -> DateMention | None:
    """The last date said earlier in the same message ("... at the start of June. I live in Berlin until then.")."""
    message = rule.sentence.message
    text = _display(message.content)
    position = text.find(rule.sentence.display)
    mentions = [d for d in find_dates(text[: max(position, 0)], message.created_at)]
    return mentions[-1] if mentions else None


def _city(rule: _Rule, city: str, content: str, valid_from: date | None = None,
          valid_until: date | None = None, confidence: float = 0.9) -> None:
    if not city or city.split()[0] in NOT_NAMES or any(w in NOT_PLACES or w in SKILL_WORDS or w in ORG_WORDS
                                                       for w in city.split()):
        return  # "We moved to Kubernetes", "I moved over to Acme Robotics"
    if city in rule.context.organizations or city in rule.context.people:
        return
    rule.add("fact", city, content, slot="home_city", confidence=confidence, importance=0.8, tags=("home",),
             valid_from=valid_from, valid_until=valid_until)
    rule.entity(city, "place")
    rule.relation(USER_SUBJECT, "lives_in", city, valid_from=(valid_from or rule.said).isoformat(),
                  valid_until=valid_until.isoformat() if valid_until else None)


_DIET = "(?P<diet>" + "|".join(DIETS) + ")"
_LATELY = r"(?=\s+(?:lately|recently|these days|nowadays|(?:my|for my) (?:whole|entire) life|all my life)\b)"
# A meal is no diet: "I've eaten vegan for lunch", "I'm eating vegan for dinner".
_MEAL = re.compile(r"^\W*(?:for|at|with) (?:breakfast|lunch|dinner|brunch|supper|a snack|dessert)\b", re.I)
_DIET_PATTERNS = (
    # "I'm vegan", "I'm a strict vegetarian now" (not "I'm a vegan chef")
    rf"\bI(?:'m| am) (?:now |currently |still |also |strictly |fully |100% )*(?:a )?(?:strict |full )?{_DIET}\b"
    r"(?!-| (?!(?:and|now|too|so|but|since|for|these|nowadays|again|myself|actually|as of|starting)\b)[a-z])",
    # "I've been vegetarian for years", "I have been vegan since 2019"
    rf"\bI(?:'ve| have) been (?:a |strictly |fully )?{_DIET}\b(?:{_SINCE_FOR}|{_LATELY})",
    # "I've been eating vegan since last year", "I've been on a keto diet for a month now"
    rf"\bI(?:'ve| have) been (?:eating|following a|on a) (?:strictly |strict |fully |only )?{_DIET}\b"
    rf"(?: diet| food| meals)?(?:{_SINCE_FOR}|{_LATELY})",
    # "Since January I've been vegetarian", "For years now, I've been vegan"
    rf"^(?:[Ss]ince|[Ff]or) [^,]{{1,30}}?,? I(?:'ve| have) been (?:a |strictly |fully )?{_DIET}\b",
    # "I've eaten vegetarian for years", "I've only eaten vegan food since 2019"
    rf"\bI(?:'ve| have) (?:only |strictly |exclusively )?eaten (?:a |an )?(?:strictly |only |fully )?{_DIET}\b"
    rf"(?: diet| food| meals)?{_SINCE_FOR}",
    # "I'm eating vegan these days", "I'm only eating keto now" (not "I'm eating vegan this week")
    rf"\bI(?:'m| am) (?:now |currently |only |strictly |exclusively )*eating (?:strictly |only |fully )?{_DIET}\b"
    rf"(?: food| meals)?(?=\s*(?:$|[,.;!]|\s+(?:now|these days|nowadays|lately|since|for)\b))",
    # "I've adopted a vegan diet", "I started a keto diet", "I've started eating vegetarian"
    rf"\bI(?:'ve| have)? (?:just |recently |finally |now |officially )?(?:adopted|started|begun|began|started on|"
    rf"committed to) (?:a |an )?(?:strict |strictly |fully )?{_DIET}(?: diet| lifestyle)\b",
    rf"\bI(?:'ve| have)? (?:just |recently |finally |now |officially )?(?:started|begun|began) eating "
    rf"(?:strictly |only |fully )?{_DIET}\b(?: food| meals)?(?!\s+(?:sometimes|occasionally|once|at|for|when)\b)",
    # "As a vegetarian, I ...", "As a strict vegan I never ..." (not "As a vegan chef, ...")
    rf"^[Aa]s an? (?:strict |lifelong |long-time |committed )?{_DIET}\b(?=,|\s+I\b|\s*$)",
    # "I've decided to go vegan", "I'm going vegetarian" (not "I'm going vegan for Lent": see the guards)
    rf"\bI(?:'ve| have)? (?:just |finally |now )?decided to (?:go|become|be|turn|eat) (?:a |fully )?{_DIET}\b(?!-)",
    rf"\bI(?:'m| am) (?:now |officially )?going (?:fully )?{_DIET}\b(?=\s*(?:$|[,.;!]|\s+(?:now|from now on|"
    rf"for good|as of)\b))",
    # "Vegan here!", "Strict vegetarian here, any recipes?" (a self-introduction)
    rf"^(?:(?:a |strict |strictly |fully |lifelong |long-time )*){_DIET} here\b(?=\s*(?:$|[,.;:!]))",
    # "My diet is vegan now", "My diet is strictly kosher"
    rf"\b[Mm]y (?:new |current |usual )?diet is (?:now |strictly |fully |entirely )?(?:a |an )?{_DIET}\b",
    # "I've gone vegan", "I went pescatarian last month", "I switched to a keto diet", "I became vegetarian"
    rf"\bI(?:'ve| have)? (?:just |recently |finally |officially |now |fully )?(?:gone|went|turned|become|became|"
    rf"switched to|converted to|changed to|moved to|transitioned to|gone back to|went back to|returned to) "
    rf"(?:a |being )?(?:fully |strictly |strict )?"
    rf"{_DIET}\b(?!-)",
    # "I'm on a keto diet", "I follow a vegan diet", "I keep kosher", "I eat halal"
    rf"\bI(?:'m| am)? (?:now |currently |still |strictly )?(?:on|follow|following|stick to|keep|keeping) "
    rf"(?:a |an )?(?:strict |strictly |fully |mostly )?{_DIET}(?: diet| lifestyle|(?<=kosher)|(?<=halal))\b",
    rf"\bI (?:now |only |strictly |exclusively )*eat (?:a |an )?(?:strictly |only |fully )?{_DIET}"
    r"(?: diet| food| meals)?(?=\s*(?:$|[,.;!]|\s+(?:now|these days|nowadays|since|for)\b))",
)


def _diet(rule: _Rule, clause: str) -> None:
    for pattern in _DIET_PATTERNS:
        m = re.search(pattern, clause, re.I)
        rest = clause[m.end():] if m else ""
        # "I've been vegan for a while" goes on; "I went vegan for a while" is over
        ongoing = bool(m and re.match(r"\W*for (?:quite )?a (?:long )?while\b", rest, re.I)
                       and re.match(r"I(?:'ve| have) (?:\w+ )?(?:been|eaten)\b", m.group(0), re.I))
        rest = _SINCE_WHEN.sub(" ", rest)
        if m and not _guarded(clause, m) and (ongoing or not (_TEMPORARY.match(rest) or _FOR_A_WHILE.search(rest))) \
                and not re.match(r"^\W*(?:until|till)\b", rest) and not _MEAL.match(rest):
            diet = m.group("diet").lower()
            rule.add(SLOT_TYPES["diet"], diet, f"The user is {diet}.", slot="diet", importance=0.7, tags=("food",))
            break
    m = re.search(r"\ballergic to (?P<obj>[\w ,-]+)", clause, re.I)
    allergen = _cut_object(m.group("obj").split(",")[0]) if m else ""
    if m and allergen and re.search(r"\bI(?:'m| am)\b", clause[: m.start()]) and not _guarded(clause, m):
        rule.add("fact", allergen, f"The user is allergic to {allergen}.", importance=0.9,
                 tags=("health", "allergy", "food"))


_LIKE_VERBS = {"prefer": "prefers", "like": "likes", "love": "loves", "enjoy": "enjoys", "adore": "adores"}
_DISLIKE_VERBS = {"hate": "hates", "dislike": "dislikes", "detest": "detests"}


def _preferences(rule: _Rule, clause: str) -> None:
    m = re.search(r"\bI (?:really |also |absolutely |much |generally )?(?P<verb>prefer|like|love|enjoy|adore|hate|"
                  r"dislike|detest) " + _UNTIL_OBJ + r"(?P<rest>.*)$", clause)
    if m and not _guarded(clause, m):
        obj = _cut_object(m.group("obj"))
        obj = _with_especially(obj, m.group("rest"))
        verb = m.group("verb")
        if obj and not PRONOUN_OBJECTS.match(obj) and len(obj.split()) <= 8:
            third = _third_person(obj)
            if verb in _LIKE_VERBS:
                rule.add("preference", third, f"The user {_LIKE_VERBS[verb]} {third}.", importance=0.6,
                         tags=_preference_tags(obj))
            else:
                rule.add("preference", f"dislikes {third}", f"The user {_DISLIKE_VERBS[verb]} {third}.",
                         importance=0.6, tags=("dislike", *_preference_tags(obj)))
    m = re.search(r"\bI (?:don't|do not|never) (?P<verb>drink|eat|like|enjoy|use|watch|smoke) " + _UNTIL_OBJ, clause)
    if m and not _guarded(clause, m):
        obj = _cut_object(m.group("obj"))
        verb = m.group("verb")
        if obj and not PRONOUN_OBJECTS.match(obj) and len(obj.split()) <= 6:
            third = _third_person(obj)
            value = f"no {third}" if verb in ("drink", "eat", "smoke", "use", "watch") else f"dislikes {third}"
            rule.add("preference", value, f"The user doesn't {verb} {third}.", importance=0.6,
                     tags=("dislike", *_preference_tags(obj)))
    m = re.search(r"\bI(?:'m| am) (?:really |very |also )?into " + _UNTIL_OBJ, clause)
    if m and not _guarded(clause, m):
        obj = _cut_object(m.group("obj"))
        if obj and not PRONOUN_OBJECTS.match(obj) and len(obj.split()) <= 6:
            third = _third_person(obj)
            rule.add("preference", third, f"The user is into {third}.", importance=0.5, tags=_preference_tags(obj))


# A span of time that makes a statement temporary, anywhere after it ("I went vegan in 2019 for a month").
_FOR_A_WHILE = re.compile(
    r"\b(?:for|during) (?:a |an |one |two |three |four |\d+ |a couple of |a few |the )?(?:days?|weeks?|weekends?|"
    r"months?|while|lent|veganuary|dry january|trip|holidays?)\b|\b(?:this|that) (?:week|weekend|month)\b|"
    r"\b(?:today|tonight)\b",
    re.I,
)
# When a state began, not how long it lasts: "as of this month", "since last week", "starting today".
_SINCE_WHEN = re.compile(r"\b(?:as of|since|starting|from|beginning) (?:this|last|today|tonight)\b(?: \w+)?", re.I)
# What makes a statement about now temporary ("I'm working at the café today", "I went vegan for a month").
_TEMPORARY = re.compile(
    r"^\W*(?:(?:just |only )?(?:for|during) (?:a |an |one |two |three |four |\d+ |a couple of |a few |the )?"
    r"(?:days?|weeks?|weekends?|months?|while|lent|january|veganuary|trip|holidays?|summer|conference)\b|"
    r"(?:today|tonight|this (?:week|weekend|morning|afternoon|evening|month))\b|"
    r"(?:sometimes|occasionally|once)\b)",
    re.I,
)


def _with_especially(obj: str, rest: str) -> str:
    m = re.match(r"\s*,\s*(?:(?:especially|particularly|mostly) (?P<a>[\w -]+?)|(?P<b>[\w -]+?) "
                 r"(?:especially|in particular))\s*(?:[.;!?]|$)", rest)
    if not m:
        return obj
    return f"{obj}, especially {(m.group('a') or m.group('b')).strip()}"


def _preference_tags(obj: str) -> tuple[str, ...]:
    lowered = obj.lower()
    tags = []
    if re.search(r"\b(?:tea|coffee|food|dish|cuisine|meat|fish|wine|beer|chocolate|spicy|sweet|cheese)\b", lowered):
        tags.append("food")
    if re.search(r"\b(?:answers?|responses?|explanations?|examples?|code|replies|tone)\b", lowered):
        tags.append("communication")
    if re.search(r"\b(?:cycling|running|hiking|swimming|climbing|yoga|football|tennis|sport|pottery|reading)\b",
                 lowered):
        tags.append("hobby")
    return tuple(tags)


def _people(rule: _Rule, clause: str) -> None:
    for m in re.finditer(rf"\b[Mm]y (?P<rel>{'|'.join(PARTNER_WORDS)}) (?P<name>{_NAME})", clause):
        name = _trim_name(m.group("name"))
        if name and name.split()[0] not in NOT_NAMES and not _guarded(clause, m) and not _ended(rule, clause):
            _partner(rule, name)
    for m in re.finditer(rf"\b[Mm]y {SIBLING_ADJECTIVES}(?P<rel>{'|'.join(SIBLING_WORDS)}) (?P<name>{_NAME})", clause):
        name = _trim_name(m.group("name"))
        if name and name.split()[0] not in NOT_NAMES and not _guarded(clause, m):
            _sibling(rule, m.group("rel").lower(), name)
    _partner_or_sibling_named(rule, clause)
    _partner_with(rule, clause)
    for m in re.finditer(rf"\b[Mm]y (?P<rel>{'|'.join(OTHER_RELATIVES)}) (?P<name>{_NAME})", clause):
        name = _trim_name(m.group("name"))
        if name and name.split()[0] not in NOT_NAMES and not _guarded(clause, m):
            rel = m.group("rel").lower()
            rule.add("relationship", f"{rel}: {name}", f"{name} is the user's {rel}.", subject=name,
                     importance=0.6, tags=("people",))
            rule.entity(name, "person")
            rule.relation(USER_SUBJECT, "works_with" if rel in ("colleague", "coworker", "co-worker", "manager",
                                                                "boss", "mentor") else "knows", name)
    for m in re.finditer(rf"(?P<name>{_NAME}) is (?P<det>the|our|my) (?P<role>{_ROLE})\b", clause):
        name = _trim_name(m.group("name"))
        if not name or name.split()[0] in NOT_NAMES or _guarded(clause, m):
            continue
        role = m.group("role")
        rule.add("identity", role, f"{name} is the {role} the user works with.", subject=name, slot="job_title",
                 importance=0.5, tags=("work", "people"))
        rule.entity(name, "person")
        rule.relation(USER_SUBJECT, "works_with", name, confidence=0.8)


_PARTNER = "(?:" + "|".join(PARTNER_WORDS) + ")"
# What may follow a partner's name: what may follow any name, or when and how long ("I married Sam in 2019").
_AFTER_PARTNER = (rf"(?:{_AFTER_NAME}|(?=\s+(?:in|on|last|this|since|for|back|recently|yesterday|a|two|three|four|"
                  r"five|six|seven|eight|nine|ten)\b))")
_SIBLING = "(?:" + "|".join(SIBLING_WORDS) + ")"
# A relationship that is over, said in the same sentence ("I married Sam in 2019 but we divorced in 2022").
_ENDED = re.compile(r"\b(?:divorced?|divorcing|broke up|break up|breaking up|split up|separated|separating|passed away|"
                    r"died|widow(?:ed|er)?|ex-\w+|late (?:wife|husband|partner))\b", re.I)
_RELATIONSHIP_VERBS = (
    r"(?:married|engaged) to|dating|in a relationship with|together with|getting married to|"
    # "I've been seeing Noor for a year" (not "I'm seeing Dr Lee tomorrow": see `_AFTER_PARTNER`)
    r"seeing someone(?: new)?,?(?: called| named)?"
)


# The user's own relationship ending: "Jonas and I broke up", "I split up with Sam", "We got divorced", "my ex".
_BREAKUP = re.compile(
    rf"(?:^(?:I|[Ww]e|{_NAME} and I|[Mm]y (?:\w+ )?(?:{'|'.join(PARTNER_WORDS)}|ex) and I)\b.*\b(?:broke up|split up|"
    r"separated|got divorced|divorced|called it off|ended (?:it|things))\b"
    rf"|\b[Mm]y ex(?:-(?:{'|'.join(PARTNER_WORDS)}))?(?![\w-]))"
)
# "I'm with Sam now": a partner only when the conversation says a relationship of the user's ended, the name
# ends the clause (or "now", "these days" follows) and names a person: not an employer ("I'm with Acme now"),
# not where or with whom the user is ("I'm with Sam at the cafe"), not agreement ("I'm with you on that").
_WITH_PARTNER = re.compile(
    rf"\bI(?:'m| am) (?:now |back |currently )?with (?P<name>{_NAME})"
    r"(?=\s*(?:$|[,.;:!)]|-\s|–)|\s+(?:now|these days|nowadays)\b)"
)
ORG_WORDS = frozenset(
    """Inc Ltd LLC GmbH AG SA Corp Corporation Company Co Labs Lab Group Bank Systems Technologies Tech Solutions
    Health Foods Industries Enterprises Imports Partners Capital Ventures Studio Studios Media Robotics University
    College School Hospital Agency Institute Foundation Consulting Software Games Motors Airlines Insurance
    Holdings Services Networks Analytics Digital Pharma Therapeutics Energy Logistics""".split()  # noqa: SIM905
)


def _partner_with(rule: _Rule, clause: str) -> None:
    """ "Jonas and I broke up; I'm with Sam now" -> partner Sam (see `_WITH_PARTNER`)."""
    if not rule.context.breakup:
        return
    m = _WITH_PARTNER.search(clause)
    if not m or _guarded(clause, m) or "'s" in m.group("name") or _ended(rule, clause):
        return
    name = _trim_name(m.group("name"))
    if (_a_person(name) and not any(w in ORG_WORDS for w in name.split())
            and name not in rule.context.organizations and name not in rule.context.projects):
        _partner(rule, name)


def _partner_or_sibling_named(rule: _Rule, clause: str) -> None:
    """Partners and siblings named in other words than "my partner Jonas" / "my sister Leela"."""
    partner = (
        # "My partner is Sam", "My wife's name is Ines", "My new girlfriend is Noor"
        rf"\b[Mm]y (?:new |current )?{_PARTNER}(?:'s name is | is (?:now |called )?)(?P<name>{_NAME}){_AFTER_NAME}",
        # "My boyfriend, Sam, is a chef", "my wife of ten years, Ines, ..." (an apposition closed by a comma; "my
        # girlfriend, Toby and I" is a list); closed by the end of the sentence: see `_partner_in_apposition`
        rf"\b[Mm]y (?:new |current )?{_PARTNER}(?: of (?:\w+ ){{1,2}}(?:years?|months?))?, (?P<name>{_NAME}), "
        r"(?!and\b|or\b)",
        # "Sam is my partner", "Noor is my girlfriend now" (not "my partner's brother", "my partner in crime")
        rf"(?:^|\b(?:and|but|so) )(?P<name>{_NAME})(?: is|'s) (?:now )?my (?:new |current )?{_PARTNER}"
        r"(?=\s*(?:$|[,.;!)]|\s+(?:now|and|but|of \w+ years)\b))",
        # "I'm married to Sam", "I'm dating Chen now", "I've been in a relationship with Ines for two years"
        rf"\bI(?:'m| am|'ve been| have been) (?:now |happily |currently |still )?(?:{_RELATIONSHIP_VERBS}) "
        rf"(?P<name>{_NAME}){_AFTER_PARTNER}",
        # "I married Sam", "I got engaged to Noor", "I started dating Alex", "I've started seeing Chen"
        rf"\bI(?:'ve| have)? (?:just |recently |finally )?(?:married|got married to|got engaged to|started dating|"
        rf"been dating|started seeing) (?P<name>{_NAME}){_AFTER_PARTNER}",
        rf"\bI(?:'ve| have) been seeing (?P<name>{_NAME}){_SINCE_FOR}",
        # "I have a new girlfriend, Noor", "I've got a boyfriend named Sam"
        rf"\bI(?:'ve| have)? (?:got |now have |have )?a (?:new )?{_PARTNER}(?:,| named| called) (?P<name>{_NAME})"
        rf"{_AFTER_PARTNER}",
        # "Sam and I got engaged", "Chen and I have been together for six years"
        rf"^(?P<name>{_NAME}) and I (?:just |recently |finally )?(?:got engaged|got married|are engaged|are married|"
        r"are dating|have been together|'ve been together|have been dating|'ve been dating|moved in together|"
        r"are a couple|have been married|'ve been married|have been a couple|'ve been a couple|"
        r"(?:are|have been|'ve been) in a relationship|started dating|"
        # "Sam and I are together now", "Noor and I got together in 2019" (not "are together at the cafe", "got
        # together for coffee", "got together last week to plan the trip": company, not a couple)
        r"(?:are|are back|got back) together(?=\s*(?:$|[,.;!)])|\s+(?:now|again|since|these days|officially)\b)|"
        r"got together (?:in \d{4}|\w+ years? ago)(?=\s*(?:$|[,.;!)])))\b",
    )
    for pattern in partner:
        m = re.search(pattern, clause)
        if m and not _guarded(clause, m) and "'s" not in m.group("name") and not _ended(rule, clause):
            name = _trim_name(m.group("name"))
            if _a_person(name):
                _partner(rule, name)
            break
    else:
        _partner_in_apposition(rule, clause)
    sibling = (
        rf"\b[Mm]y {SIBLING_ADJECTIVES}(?P<rel>{_SIBLING})(?:'s name is | is (?:called )?)(?P<name>{_NAME})"
        rf"{_AFTER_NAME}",
        rf"(?:^|\b(?:and|but|so) )(?P<name>{_NAME}) is my {SIBLING_ADJECTIVES}(?P<rel>{_SIBLING})"
        r"(?=\s*(?:$|[,.;!)]|\s+(?:and|but)\b))",
    )
    for pattern in sibling:
        m = re.search(pattern, clause)
        if m and not _guarded(clause, m) and "'s" not in m.group("name"):
            name = _trim_name(m.group("name"))
            if _a_person(name):
                _sibling(rule, m.group("rel").lower(), name)
            break


def _partner_in_apposition(rule: _Rule, clause: str) -> None:
    """ "I live with my partner, Jonas.", "Sam, my partner, cooked": an apposition that ends or opens the sentence
    (not a clause: "My girlfriend, Toby and I are going camping" is split before "I", and Toby is one of a list)."""
    sentence = _QUOTED.sub(" ", rule.sentence.text).strip()
    # "Sam, my partner, cooked dinner": the sentence opens with the name (the clauses split it before "my")
    m = re.match(rf"^(?P<name>{_NAME}), my (?:new |current )?{_PARTNER}(?: of (?:\w+ ){{1,2}}(?:years?|months?))?, ",
                 sentence)
    if m and sentence.startswith(clause) and "'s" not in m.group("name"):
        name = _trim_name(m.group("name"))
        if _a_person(name) and not _ENDED.search(sentence):
            _partner(rule, name)
        return
    m = re.search(rf"\b[Mm]y (?:new |current )?{_PARTNER}(?: of (?:\w+ ){{1,2}}(?:years?|months?))?, (?P<name>{_NAME})"
                  r"\s*[.!]?$", clause)
    if not m or not re.sub(r"[\s.!]+$", "", sentence).endswith(m.group("name").rstrip(".!")):
        return
    if _guarded(clause, m) or "'s" in m.group("name") or _ended(rule, clause):
        return
    name = _trim_name(m.group("name"))
    if _a_person(name):
        _partner(rule, name)


def _ended(rule: _Rule, clause: str) -> bool:
    """True when the sentence says the relationship of `clause` is over: in the clause itself, or in a later
    clause ("my partner Jonas | and I broke up"; "I married Sam in 2019 | but we divorced")."""
    if _ENDED.search(clause):
        return True
    clauses = _clauses(rule.sentence.text)
    later = clauses[clauses.index(clause) + 1:] if clause in clauses else []
    return any(_ENDED.search(c) and re.match(r"^(?:I|[Ww]e|[Tt]hey|[Ss]he|[Hh]e)\b", c) for c in later)


def _a_person(name: str) -> bool:
    words = name.split()
    return bool(words) and not any(w in NOT_NAMES or w in DEMONYMS or w in NOT_PLACES or w in SKILL_WORDS
                                   for w in words)


def _partner(rule: _Rule, name: str) -> None:
    rule.add("relationship", name, f"The user's partner is {name}.", slot="partner", importance=0.8, tags=("family",))
    rule.entity(name, "person")
    rule.relation(USER_SUBJECT, "partner_of", name)


def _sibling(rule: _Rule, rel: str, name: str) -> None:
    rule.add("relationship", name, f"The user's {rel} is {name}.", slot="sibling", importance=0.7, tags=("family",))
    rule.entity(name, "person")
    rule.relation(USER_SUBJECT, "sibling_of", name)


def _about_people(rule: _Rule, clause: str) -> None:
    """What the user says about a person they named: preferences, home city, birthdays."""
    context = rule.context
    m = re.match(rf"^(?:(?P<pronoun>She|He|she|he)\b|(?:[Mm]y (?:\w+ ){{0,2}})?(?P<name>{_CAP}(?: {_CAP})?))"
                 r"(?P<is>'s| is)? ", clause)
    if not m:
        return
    if m.group("pronoun"):
        subject = context.only_person()
        confidence = 0.75
    else:
        subject = context.person(_trim_name(m.group("name") or ""))
        confidence = 0.9
    if not subject:
        return
    rest = clause[m.end():] if not m.group("is") else clause[m.start("is"):]
    n = re.match(r"(?:really |also )?(?P<verb>prefers|likes|loves|enjoys|hates|dislikes) " + _UNTIL_OBJ, rest)
    if n:
        obj = _cut_object(n.group("obj"))
        if obj and not PRONOUN_OBJECTS.match(obj):
            value = obj if n.group("verb") not in ("hates", "dislikes") else f"dislikes {obj}"
            rule.add("preference", value, f"{subject} {n.group('verb')} {obj}.", subject=subject,
                     confidence=confidence, importance=0.4, tags=("people",))
        return
    n = re.match(r"(?:doesn't|does not) (?P<verb>like|eat|drink) " + _UNTIL_OBJ, rest)
    if n:
        obj = _cut_object(n.group("obj"))
        if obj and not PRONOUN_OBJECTS.match(obj):
            verb = n.group("verb")
            value = f"dislikes {obj}" if verb == "like" else f"no {obj}"
            rule.add("preference", value, f"{subject} doesn't {verb} {obj}.", subject=subject,
                     confidence=confidence, importance=0.4, tags=("people", "dislike"))
        return
    n = re.match(r"(?:'s| is) (?:really |very )?into " + _UNTIL_OBJ, rest)
    if n:
        obj = _cut_object(n.group("obj"))
        if obj and not PRONOUN_OBJECTS.match(obj):
            rule.add("preference", obj, f"{subject} is into {obj}.", subject=subject, confidence=confidence,
                     importance=0.4, tags=("people", *_preference_tags(obj)))
        return
    n = re.match(rf"(?:still |now )?lives in (?P<city>{_NAME})", rest)
    if n:
        city = _trim_name(n.group("city"))
        if city and city.split()[0] not in NOT_NAMES:
            rule.add("fact", city, f"{subject} lives in {city}.", subject=subject, slot="home_city",
                     confidence=confidence, importance=0.4, tags=("people", "home"))
            rule.entity(city, "place")
            rule.relation(subject, "lives_in", city, confidence=confidence)
        return
    n = re.match(r"turns (?P<age>\d{1,3})\b(?P<rest>.*)$", rest)
    if n:
        when = rule.date_in(n.group("rest"))
        if when:
            rule.add("event", f"turns {n.group('age')}", f"{subject} turns {n.group('age')} in {human(when)}."
                     if when.precision == "month" else f"{subject} turns {n.group('age')} on {human(when)}.",
                     subject=subject, confidence=confidence, importance=0.5, tags=("people", "birthday"))
            rule.key_date(when, f"{subject} turns {n.group('age')}.")


def _decision(rule: _Rule, clause: str) -> None:
    m = re.search(r"\b(?P<who>I|[Ww]e)(?: have|'ve)? (?:just |finally |now )?decided (?P<how>to|on) " + _UNTIL_OBJ,
                  clause)
    if not m:
        m = re.search(r"\b(?P<who>I|[Ww]e)(?:'re| are|'m| am) going with (?P<how>)" + _UNTIL_OBJ, clause)
    if not m or _guarded(clause, m):
        return
    what = m.group("obj").strip()
    if (len(what.split()) < 2 and not m.group("how")) or PRONOUN_OBJECTS.match(what) or re.match(
            r"^(?:to )?(?:\w+ )?(?:this|that|these|those|it)\b", what, re.I):
        return
    subject = USER_SUBJECT
    p = re.search(rf"\s+for (?P<project>(?:[Pp]roject )?{_CAP})\s*$", what)
    if p:
        project = rule.context.project(p.group("project"))
        if project:
            subject = project
            what = what[: p.start()].strip()
    who = "The user" if m.group("who") == "I" else "The user's team"
    verb = "decided to" if m.group("how") == "to" else "decided on"
    if not m.group("how"):
        verb = "decided on"
    third = _third_person(what)
    scope = f" for {subject}" if subject != USER_SUBJECT else ""
    content = f"{who} {verb} {third}{scope}."
    rule.add("decision", third, content, subject=subject, importance=0.7, tags=("decision",))
    rule.found.decisions.append(content)


def _commitment(rule: _Rule, clause: str) -> None:
    m = re.search(r"\bI(?:'m| am) (?:going|planning) to " + _UNTIL_OBJ, clause) or re.search(
        r"\bI (?:plan|intend|promised|have promised|'ve promised|am committed|committed) to " + _UNTIL_OBJ, clause
    )
    if m and not _guarded(clause, m):
        what = m.group("obj").strip()
        if TRIVIAL_PLAN_VERBS.match(what) or TECH_WORDS.search(what) or len(what.split()) < 2:
            return
        when = rule.date_in(what)
        plain = what
        if when and when.precision == "month" and re.search(r"\bin \w+$", what[: when.end]):
            plain = what[: when.start] + f"in {human(when)}" + what[when.end:]
        third = _third_person(plain)
        rule.add("commitment", _third_person(what), f"The user plans to {third}.", importance=0.6,
                 tags=("plan",))
        rule.found.action_items.append(f"The user plans to {third}.")
        if when:
            rule.key_date(when, f"The user plans to {_third_person(what)}.")
    m = re.search(r"\bI (?:signed up|registered|enrolled) for " + _UNTIL_OBJ, clause)
    if m and not _guarded(clause, m):
        what = m.group("obj").strip()
        if not TECH_WORDS.search(what):
            rule.add("commitment", f"signed up for {_third_person(what)}",
                     f"The user signed up for {_third_person(what)}.", importance=0.6, tags=("plan",))


_EVENT_VERBS = (
    "ran", "finished", "completed", "graduated from", "graduated", "got married", "got engaged", "got promoted",
    "passed", "won", "kicked off", "launched", "visited", "adopted", "bought", "sold", "had a baby",
)


def _event(rule: _Rule, clause: str) -> None:
    verbs = "|".join(re.escape(v) for v in sorted(_EVENT_VERBS, key=len, reverse=True))
    m = re.search(rf"\b(?P<who>I|[Ww]e) (?:just |finally )?(?P<verb>{verbs})\b(?!')(?P<obj>[^,.;!?]*)", clause)
    if m and not _guarded(clause, m):
        when = rule.date_in(m.group("obj"))
        if when is None:
            return
        obj = m.group("obj")[: when.start].strip()
        obj = re.sub(r"\s+(?:on|in|at)$", "", obj).strip()
        if TECH_WORDS.search(obj) or not obj and m.group("verb") in ("ran", "finished", "completed", "passed"):
            return
        verb = m.group("verb")
        subject = USER_SUBJECT
        named = re.search(rf"\b[Pp]roject (?P<name>{_CAP})", obj)
        who = "The user" if m.group("who") == "I" else "The user's team"
        if named:
            subject = rule.context.project(named.group("name")) or USER_SUBJECT
        when_text = f"on {when.day.isoformat()}" if when.precision == "day" else f"in {human(when)}"
        third = _third_person(obj)
        content = f"{who} {verb} {third} {when_text}." if third else f"{who} {verb} {when_text}."
        rule.add("event", f"{verb} {third}".strip(), content, subject=subject, importance=0.5, tags=("event",),
                 valid_from=when.day if when.precision == "day" else None)
        rule.key_date(when, content)
    m = re.search(rf"\b(?P<project>[Pp]roject {_CAP}) (?P<verb>launched|shipped|went live|was released)"
                  r"(?P<obj>[^,.;!?]*)", clause)
    if m and not _guarded(clause, m):
        when = rule.date_in(m.group("obj"))
        project = rule.context.project(m.group("project"))
        if when and project and when.precision == "day":
            content = f"{project} {m.group('verb')} on {when.day.isoformat()}."
            rule.add("event", f"{m.group('verb')} on {when.day.isoformat()}", content, subject=project,
                     importance=0.6, tags=("project", "launch"), valid_from=when.day)
            rule.key_date(when, content)


_DEADLINE_NOUN = (r"(?:(?P<adjective>new|revised|updated|final|official|target|current) )?"
                  r"(?P<what>launch|deadline|release|go-live|due date|ship date|target date|date|target)(?: date)?")
_PROJECT_NAME = rf"(?:[Pp]roject )?{_CAP}"
_RESCHEDULED = (r"(?:moved|pushed|postponed|rescheduled|delayed|shifted|brought forward|pulled in|bumped|changed|"
                r"slipped|slid|pushed out|put back|deferred)(?: back| out| up| forward)?")
_RESCHEDULING = (r"(?:moving|pushing|postponing|rescheduling|delaying|shifting|bumping|deferring)(?: back| out| up|"
                 r" forward)?")
# "slipped a week to June 2", "moved by two weeks to June 2"
_BY_HOW_MUCH = r"(?:(?:by )?(?:a|one|two|three|four|another|a few|a couple of) (?:days?|weeks?|months?) )?"
_DEADLINE_FRAMES = (
    # "The Heron launch is on March 4", "Our deadline for Project Heron is May 3", "The launch moved to June 2"
    re.compile(
        rf"\b(?:[Tt]he |[Oo]ur )?(?:(?P<project>{_PROJECT_NAME}) )?{_DEADLINE_NOUN}"
        rf"(?: (?:for|of) (?P<project2>{_PROJECT_NAME}))? (?:is (?:now |still )?(?:on |set for |scheduled for |"
        rf"planned for |due |due on |due by |by )?|(?:is |was |has |has been |have been |got |just )*(?:now )?"
        rf"{_RESCHEDULED} (?:to|until|for) (?:on )?)(?P<rest>.*)$"
    ),
    # "Project Heron launches on May 3", "Project Heron is due on May 3", "Heron now ships on June 1", "Project Heron
    # is now scheduled for June 2", "Project Falcon will now go live on May 3"
    re.compile(
        rf"\b(?P<project>{_PROJECT_NAME}) (?:now |still |officially )?(?P<verb>launches|ships|goes live|releases|"
        r"goes out|is (?:now |still |officially )?(?:launching|shipping|going live|releasing|going out)|"
        r"will (?:now |still |officially )?(?:launch|ship|go live|be released|be live|release)|"
        r"is (?:now |still |officially )?(?:scheduled|set|slated|planned|due|expected) to (?:launch|ship|go live|"
        r"be released|release)|"
        r"is (?:now |still |officially )?(?:scheduled|planned|set|slated|targeted|expected|due)(?= (?:on|by|for)\b)|"
        r"is (?:now |still |officially )?due|"
        r"is (?:still |now )?on track (?:for|to (?:launch|ship|go live|be released|release)(?: on)?)) "
        r"(?:on |by |for )?(?P<rest>.*)$"
    ),
    # "We launch Project Heron on May 3", "We're shipping Heron on June 1", "Launching Project Osprey on May 3!"
    re.compile(
        r"(?:(?:\b(?:[Ww]e|I)(?:'ll| will|'re| are|'m| am)?(?: going to| planning to| set to| scheduled to| aiming to|"
        r" due to)?|\b[Tt]he plan is to) "
        r"(?:now |still |officially )?(?P<verb>launch|ship|release|go live with|launching|shipping|releasing)|"
        r"^(?:(?:[Nn]ow|[Oo]fficially) )?(?:[Ll]aunching|[Ss]hipping|[Rr]eleasing|[Gg]oing live with)) "
        rf"(?P<project>{_PROJECT_NAME}) (?:on |by )?(?P<rest>.*)$"
    ),
    # "Project Heron slipped to June 2", "Project Falcon has been pushed back to July 1", "Project Osprey's launch was
    # delayed by two weeks to June 20" (not "Project Heron wasn't moved ...": no negated auxiliary is read)
    re.compile(
        rf"\b(?P<project>{_PROJECT_NAME})(?:'s (?:launch|release|deadline|go-live|due date|ship date))? "
        rf"(?:(?:has|had|was|is|got|has been|have been|just|now|officially|already|again|also) )*{_RESCHEDULED} "
        rf"(?:again )?{_BY_HOW_MUCH}(?:to|until|till|for) (?:on )?(?P<rest>.*)$"
    ),
    # "We pushed the Project Heron launch to May 3", "They moved the launch back to June 2", "We pushed Heron to ...",
    # "We're pushing Project Heron to May 3"
    re.compile(
        rf"\b(?:[Ww]e|I|[Tt]hey)(?:'ve| have|'re| are|'m| am)? (?:just |now |officially )?(?:{_RESCHEDULED}|"
        rf"{_RESCHEDULING}) "
        rf"(?:(?:the |our )?(?:(?P<project>{_PROJECT_NAME})(?:'s)? )?{_DEADLINE_NOUN}"
        rf"(?: (?:for|of) (?P<project2>{_PROJECT_NAME}))?|(?P<project3>{_PROJECT_NAME}))"
        rf"(?: back| out| up| forward)? {_BY_HOW_MUCH}(?:to|until|for) (?:on )?(?P<rest>.*)$"
    ),
    # "June 2 is the new launch date for Project Heron"
    re.compile(
        r"^(?P<rest>.+?) is (?:now )?(?:the|our) (?:new |revised |updated |final |official |target )*"
        r"(?:launch |release |ship |go-live |due |target )?(?:date|deadline) (?:for|of) (?:the )?"
        rf"(?P<project>{_PROJECT_NAME})(?: (?:launch|release))?\s*[.!]?$"
    ),
    # "We're targeting June 2 for Project Heron", "We're aiming for June 2 for the Project Heron launch"
    re.compile(
        r"\b(?:[Ww]e|I)(?:'re| are|'m| am)? (?:now |still |officially )?(?:targeting|aiming for|planning for|"
        r"looking at|target|aim for|plan for) (?P<rest>.+?) for (?:the )?"
        rf"(?P<project>{_PROJECT_NAME})(?: (?:launch|release|deadline|go-live))?\s*[.!]?$"
    ),
)


def _deadline(rule: _Rule, clause: str, correction: str | None = None) -> bool:
    for frame, pattern in enumerate(_DEADLINE_FRAMES):
        m = pattern.search(clause)
        if not m or _guarded(clause, m) or _CONDITION.search(m.group("rest")):
            continue  # "We launch Heron on May 3 if QA passes" is no date yet
        # "pushed to June 2" is the nearest June 2, not last year's: a deadline's tense is not its verb's
        when = rule.date_in(m.group("rest"), context="")
        if not when or when.precision != "day" or when.start > 3:
            continue
        groups = m.groupdict()
        named = next((groups[k] for k in ("project", "project2", "project3") if groups.get(k)), None)
        named = re.sub(r"'s$", "", named.rstrip(".")) if named else None
        # "The Heron launch": Heron is the project; a bare capitalised word before a verb may be anything
        project = rule.context.project(named) if frame == 0 else _known_project(rule, named)
        if not project or (groups.get("what") in ("date", "target date", "target") and not named
                           and groups.get("adjective") not in ("new", "revised", "updated")):
            continue  # "Our wedding date is June 3" says nothing of the conversation's project; "the new date" may
        what = groups.get("what") or ("deadline" if "due" in (groups.get("verb") or "") else "launch")
        what = "deadline" if what in ("date", "target date", "target") else what
        _add_deadline(rule, project, what, when, correction)
        return True
    return False


def _known_project(rule: _Rule, name: str | None) -> str | None:
    """`name` as a project: "Project X", or a name the conversation already calls a project."""
    if not name:
        return None
    if re.match(r"^[Pp]roject\s+\S", name):
        return rule.context.project(name)
    return next((p for p in rule.context.projects if p.split(" ", 1)[1] == name), None)


def _add_deadline(rule: _Rule, project: str, what: str, when: DateMention, correction: str | None) -> None:
    value = when.day.isoformat()
    if correction:
        old = find_dates(correction, rule.sentence.message.created_at)
        old_text = f", not {old[0].day.isoformat()}" if old else ""
        rule.add("correction", value, f"Correction: the {project} {what} is on {value}{old_text}.",
                 subject=project, slot="project_deadline", confidence=0.95, importance=0.8,
                 tags=("project", "deadline", "correction"))
    else:
        rule.add(SLOT_TYPES["project_deadline"], value, f"The {project} {what} is on {value}.", subject=project,
                 slot="project_deadline", importance=0.7, tags=("project", "deadline"))
    rule.entity(project, "project")
    rule.key_date(when, f"The {project} {what}.")


def _correction(rule: _Rule) -> bool:
    """'Actually, X, not Y': a candidate of type correction carrying X. True when it took the sentence."""
    text = _QUOTED.sub(" ", rule.sentence.text)
    m = re.search(r"\b[Aa]ctually,?\s+(?P<rest>[^;]+?),?\s+not\s+(?P<old>[^,.;!?]+?)(?:\s+-.*)?(?:[.;!?]|$)", text)
    if not m:
        return False
    rest, old = m.group("rest").strip(), m.group("old").strip()
    if _deadline(rule, rest, correction=old):
        return True
    before = len(rule.found.candidates)
    for clause in _clauses(rest):
        for reader in (_home, _job, _diet):
            reader(rule, clause)
    slot_candidates = [c for c in rule.found.candidates[before:] if c.slot]
    if slot_candidates:
        rule.found.candidates[before:] = [
            c.model_copy(update={"type": "correction", "confidence": 0.95,
                                 "content": c.content.rstrip(".") + f" (not {_third_person(old)})."})
            for c in slot_candidates
        ]
        return True
    del rule.found.candidates[before:]
    third, third_old = _third_person(rest), _third_person(old)
    if not re.search(r"\b(?:I|I'm|my|we|our)\b", rest, re.I):
        return False  # a correction of the assistant or of a topic, not a fact about the user
    rule.add("correction", third, f"Correction: {third}, not {third_old}.", confidence=0.85, importance=0.7,
             tags=("correction",))
    return True


def _skills(rule: _Rule, clause: str) -> None:
    m = re.search(rf"\bI (?:mostly |also |really |already )?know (?P<skills>{_CAP}(?:(?:, | and | or ){_CAP})*)",
                  clause)
    if m and not _guarded(clause, m):
        for skill in re.split(r", | and | or ", m.group("skills")):
            skill = skill.strip(" .,")
            if skill in SKILL_WORDS:
                rule.add("skill", skill, f"The user knows {skill}.", importance=0.5, tags=("skill",))
    m = re.search(r"\bI(?:'m| am) (?:fluent|proficient|experienced|an expert) (?:in|at|with) " + _UNTIL_OBJ, clause)
    if m and not _guarded(clause, m):
        skill = _cut_object(m.group("obj"))
        if skill and not PRONOUN_OBJECTS.match(skill):
            rule.add("skill", skill, f"The user is proficient in {skill}.", importance=0.5, tags=("skill",))
    m = re.search(rf"\bI speak (?P<langs>{_CAP}(?:(?:, | and ){_CAP})*)", clause)
    if m and not _guarded(clause, m):
        for lang in re.split(r", | and ", m.group("langs")):
            if lang.strip(" .") in SKILL_WORDS:
                rule.add("skill", lang.strip(" ."), f"The user speaks {lang.strip(' .')}.", importance=0.5,
                         tags=("language",))


def _actions(rule: _Rule, clause: str) -> None:
    m = re.search(r"\b(?:I'll|I will|I need to|I have to|[Rr]emind me to) " + _UNTIL_OBJ, clause)
    if m and not _guarded(clause, m):
        what = m.group("obj").strip()
        if len(what.split()) >= 2:
            verb = "will" if m.group(0).startswith(("I'll", "I will")) else "needs to"
            rule.found.action_items.append(f"The user {verb} {_third_person(what)}.")


_READERS = (_name, _job, _job_more, _employer_more, _home, _diet, _preferences, _people, _about_people, _decision,
            _commitment, _event, _deadline, _skills, _actions)


# --- summary, topics, salience ----------------------------------------------------------------

def _quote(text: str, limit: int = 160) -> str:
    text = text.strip()
    if len(text) > limit:
        text = text[: limit - 1].rsplit(" ", 1)[0] + "…"
    return text


def _summary(conversation: Conversation, sentences: list[_Sentence], found: _Found) -> str:
    parts: list[str] = []
    if conversation.title:
        title = conversation.title.strip()
        parts.append(title if title.endswith((".", "!", "?")) else title + ".")
    statements = list(dict.fromkeys(found.summary_sentences))
    asked = next((s.display for s in sentences if s.question and len(s.text.split()) >= 4), None)
    first_user = next((s.display for s in sentences if not s.question and len(s.text.split()) >= 4), None)
    said = statements[:1] or ([first_user] if first_user else [])
    for text in said:
        parts.append(f'The user said: "{_quote(text)}"')
    if asked:
        parts.append(f'The user asked: "{_quote(asked)}"')
    if len(parts) < 3 and len(statements) > 1:
        parts.append(f'The user said: "{_quote(statements[1])}"')
    if len(parts) < 3:
        answer = next((m for m in conversation.messages if m.role == "assistant" and _display(m.content).strip()),
                      None)
        if answer:
            first = _SENTENCE_END.split(_display(answer.content).strip())[0].rstrip(":")
            if len(first.split()) >= 3:
                parts.append(f'The assistant answered: "{_quote(first)}"')
    if not parts:
        first = next((m for m in conversation.messages if m.content.strip()), None)
        parts.append(f'A conversation starting: "{_quote(_display(first.content) if first else "")}"')
    return " ".join(parts[:3])


_WORD = re.compile(r"[A-Za-zÀ-ÿ][\w'+#.-]*[\w+#]|[A-Za-zÀ-ÿ]")
TOPIC_STOPWORDS = STOPWORDS | frozenset(
    """keep keeps kept set setting settings ask asked asks went end ends big news remember love loves loved
    find finds found today tonight tomorrow yesterday help want wants wanted work works working worked done
    doing make makes made take takes took come comes came look looks looking see sees seen run runs ran
    start starts started fine nice happy glad sounds sound okay works put puts call calls let lets instead
    usually often always never sometimes maybe probably actually really pretty quite enough small large
    part parts plus next last week weeks month months year years minutes hours morning evening afternoon
    anyone someone everyone something anything everything other others same different able example examples
    way ways tip tips thing stuff far near ahead later soon early late""".split()  # noqa: SIM905
)


def _topics(conversation: Conversation, context: _Context, limit: int = 5) -> list[str]:
    """Labels for what the conversation is about: its projects, then its most frequent words and word pairs."""
    counts: Counter[str] = Counter()
    surface: dict[str, Counter[str]] = {}
    first_seen: dict[str, int] = {}
    weighted = [(conversation.title or "", 3)] + [
        (_QUOTED.sub(" ", _clean(m.content)), 2 if m.role == "user" else 1)
        for m in conversation.messages
        if m.role in ("user", "assistant")
    ]
    for text, weight in weighted:
        for sentence in re.split(r"[.,;:!?()\n]+", text):
            words = [w.strip(".-'") for w in _WORD.findall(sentence)]
            keys = [w.lower() for w in words]
            for i, key in enumerate(keys):
                if len(key) < 3 or key in TOPIC_STOPWORDS or key.isdigit():
                    continue
                grams = [(key, words[i])]
                if i + 1 < len(keys) and len(keys[i + 1]) >= 3 and keys[i + 1] not in TOPIC_STOPWORDS:
                    grams.append((f"{key} {keys[i + 1]}", f"{words[i]} {words[i + 1]}"))
                for gram, word in grams:
                    counts[gram] += weight
                    surface.setdefault(gram, Counter())[word] += 1
                    first_seen.setdefault(gram, len(first_seen))
    # A pair said at least twice (or in the title) stands for its words.
    pairs = [g for g in counts if " " in g and counts[g] >= 3 and sum(surface[g].values()) >= 2]
    for pair in pairs:
        for word in pair.split():
            counts[word] -= counts[pair]
    ranked = sorted((g for g in counts if (" " not in g or g in pairs) and counts[g] > 0),
                    key=lambda g: (-counts[g], first_seen[g]))
    topics = [p.lower() for p in context.projects]
    for gram in ranked:
        if len(topics) >= limit:
            break
        word = surface[gram].most_common(1)[0][0]
        label = word if any(ch.isupper() for ch in word[1:]) else gram
        taken = {w for t in topics for w in t.lower().split()}
        if label.lower() not in (t.lower() for t in topics) and not set(gram.split()) <= taken:
            topics.append(label)
    return topics[:limit]


def _salience(candidates: list[FactCandidate], found: _Found, conversation: Conversation) -> float:
    score = 0.15 + 0.12 * min(len(candidates), 5) + (0.1 if found.decisions else 0.0)
    score += 0.05 * min(len(found.key_dates), 2)
    if any(c.type in ("identity", "correction", "decision") or c.slot in ("home_city", "employer")
           for c in candidates):
        score += 0.1
    return round(min(score, 0.95), 2)


# --- dedupe -----------------------------------------------------------------------------------

def _dedupe(candidates: list[FactCandidate]) -> list[FactCandidate]:
    seen: dict[tuple[str, str, str | None, str], FactCandidate] = {}
    for c in candidates:
        key = (c.type, c.subject.lower(), c.slot, c.value.lower())
        if key in seen:
            old = seen[key]
            ids = old.message_ids + [m for m in c.message_ids if m not in old.message_ids]
            seen[key] = old.model_copy(update={"message_ids": ids})
        else:
            seen[key] = c
    return list(seen.values())


def _dedupe_dates(dates: list[KeyDate]) -> list[KeyDate]:
    out: dict[tuple[str, str], KeyDate] = {}
    for d in dates:
        key = (d.date, d.message_ids[0] if d.message_ids else "")
        out.setdefault(key, d)
    return sorted(out.values(), key=lambda d: d.date)


def _dedupe_relations(relations: list[Relation]) -> list[Relation]:
    out: dict[tuple[str, str, str], Relation] = {}
    for r in relations:
        out.setdefault((r.source.lower(), r.relation, r.target.lower()), r)
    return list(out.values())


def _drop_short_duplicates(entities: list[Entity]) -> list[Entity]:
    """'Acme' goes when 'Acme Robotics' is there too; 'Tomás' when 'Tomás Ruiz' is."""
    names = [e.name for e in entities]
    return [e for e in entities
            if not any(other != e.name and other.startswith(e.name + " ") for other in names)]


def _unique(values: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for v in values:
        if v.lower() not in seen:
            seen.add(v.lower())
            out.append(v)
    return out
