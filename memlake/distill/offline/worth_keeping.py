"""Is a statement worth remembering, and does it stand alone? The check every self-statement passes through.

A fact is read from one sentence but is remembered apart from it, so it must say what it is about by itself. These
checks look at the predicate's structure, not at any phrasing the rules were written on (issue 23: rules tuned on
some speakers kept half-wrong facts from others):

- its place or thing is only in the chat or an earlier sentence: "goes there now and then", "longing to go back",
  "hooked ever since", or a verb that needs an object with only a time after it ("started on Monday");
- its subject is a thing only the chat shows ("The eagle symbolizes freedom"), or it is a verdict on a moment that
  is over ("Talking with the volunteers was awesome");
- it names nothing: once its verb, time words and evaluations are set aside, only vague nouns are left ("learned a
  new skill", "was playing a game", "wants to create something extraordinary", "is putting in their best effort").
"""

from __future__ import annotations

import re

from memlake.text import STOPWORDS

# "there" as a place the sentence does not name ("there is" opens a statement; a place named before it is its own).
_THERE = re.compile(r"^(?:(?![A-Z][a-z]).)*\bthere\b(?!\s*(?:is|are|was|were|'s|has|have|had)\b)")
# "back" or "away" with no place after it ("longing to go back", "stayed away"); "back home", "back to Ohio" say
# where, and "passed away" is a death.
_BACK = re.compile(r"\b(?:back|(?<!passed )away)\b(?!\s*(?:to|from|home|in|at|into|on|up|then|when|with|for)\b)(?!-)",
                   re.I)
# "ever since", "since then", "back then", "then" at the end: since or when what, only the chat says.
_SINCE_WHAT = re.compile(r"\b(?:ever since|since then|back then|since|then)\s*$", re.I)

# Nouns that name no particular thing: with nothing else named, the fact says nothing worth keeping.
VAGUE_NOUNS = frozenset(
    """something anything everything nothing stuff thing things skill skills project projects game games effort
    efforts one ones lot lots bit moment moments experience experiences idea ideas activity activities hobby hobbies
    goal goals plan plans time times day days impact difference progress change changes step steps way ways work
    kind sort type part piece journey adventure adventures challenge challenges setback setbacks spot
    memories people events hurdles obstacles problems issues kinds sorts situation situations someone somebody
    anyone detail details everywhere anywhere somewhere unknown tour tours trip trips picture pictures photo
    photos pic pics""".split()  # noqa: SIM905
)
# A work taken in ("read a book", "watched a show") is a thing only when it is named ("read a book about Rome"); one
# written or made is the user's own ("is writing a book").
_WORKS = frozenset(
    """book books movie movies film films show shows song songs series article articles podcast podcasts novel novels
    episode episodes video videos""".split()  # noqa: SIM905
)
_TAKING_IN = frozenset(
    """read reading reads watched watch watches watching saw seen heard listened listening listens""".split()  # noqa: SIM905
)
# Words that rate or size a thing without saying what it is.
EVALUATIVE = frozenset(
    """new big great best better good amazing awesome extraordinary huge little small special cool fun nice wonderful
    incredible fantastic real whole same similar other few several many sure certain perfect exciting interesting
    important tough hard difficult wild crazy busy happy glad excited proud ready fine bad worst lovely beautiful
    stunning super pretty really definitely totally absolutely going gonna trying try tried keep keeping
    make making made get getting got do doing done""".split()  # noqa: SIM905
)
# Words that say when, not what.
_TIME_WORDS = frozenset(
    """lately recently now today tonight yesterday tomorrow week weeks weekend weekends month months year years ago
    last next this morning evening night afternoon soon ever since always often sometimes later earlier currently
    monday tuesday wednesday thursday friday saturday sunday january february march april may june july august
    september october november december spring summer autumn fall winter""".split()  # noqa: SIM905
)
# Verbs whose meaning needs the thing or place they act on: "started" what, "went" where.
_NEEDS_OBJECT = frozenset(
    """start started starts starting begin began begins beginning finish finished finishes finishing join joined
    joins joining leave left leaves leaving quit quits quitting try tried tries trying return returned returns
    returning go went goes going gone come came comes coming arrive arrived arrives arriving""".split()  # noqa: SIM905
)
# Verbs that say only that something is done, made or had: what they act on is what a fact names.
_LIGHT_VERBS = frozenset(
    """create creating make do go get give take have be put find show bring start meet""".split()  # noqa: SIM905
)
AUXILIARIES = re.compile(r"^(?:(?:is|are|am|was|were|has|have|had|been|be|will|'ll|does|did|do|would|just|also|"
                          r"really|finally|recently|still|now|already|actually|always|usually|often|mostly)\s+)*",
                          re.I)

# A predicate left with a noun after its "is"/"has" ("has a dog", "is a nurse") has no verb of its own to set aside.
_OPENS_A_NOUN = re.compile(r"^(?:a|an|the|my|their|his|her|our|one|two|three|four|five|some|\d+)\b(?!%)", re.I)

# A calendar day or month said ("on 3 March", "June 1st", "2023-05-01"): a plan or a move on a day is worth keeping.
_A_DAY = re.compile(r"\b(?:\d{1,2}(?:st|nd|rd|th)?|\d{4}-\d{2}(?:-\d{2})?)\b|"
                    r"\b(?:January|February|March|April|May|June|July|August|September|October|November|December)\b")

# A feeling as the whole state said: "is really upset seeing ...", "was so nervous I forgot ..." (with a named place or
# person it says what it is about: "is nervous about flying to Tokyo").
_FEELING = re.compile(r"^(?:(?:is|am|are|was|were|has been|have been)\s+(?:feeling\s+)?|feels?\s+|felt\s+)"
                      r"(?:(?:so|really|super|pretty|very|"
                      r"quite|a bit|a little|kinda|totally|still|just|also|even|more|even more)\s+)*"
                      r"(?:upset|sad|angry|mad|frustrated|low|"
                      r"nervous|stressed|anxious|scared|afraid|worried|bummed|overwhelmed|heartbroken|touched|moved|"
                      r"shocked|surprised|disappointed|annoyed|tired|exhausted|emotional|pumped|hyped|buzzing|"
                      r"thrilled|excited|happy|glad|proud|grateful|thankful|relieved|inspired|motivated)\b", re.I)
# "can picture waking up to nature", "can totally relate": a reply to the other side's story, nothing of the user's.
_PICTURES = re.compile(r"^can (?:totally |really |definitely |so |just )?(?:picture|imagine|relate|see|tell|understand|"
                       r"feel|hear|believe)\b", re.I)
# "Talking with the volunteers was awesome", "Winning felt so good": how a moment that is over felt.
_PAST_VERDICT = re.compile(r"\b(?:was|were|felt)\s+(?:(?:so|really|super|pretty|just|absolutely|truly|very|such)\s+)*"
                           r"(?:an?\s+)?(?P<last>\w+)(?:\s+(?:for|to)\s+(?:me|us|them|the user))?$", re.I)
# "The eagle symbolizes freedom", "The motivated people around me ...": a thing the chat or an earlier sentence
# introduced ("The Eiffel Tower" names itself).
_DEFINITE_SUBJECT = re.compile(r"^The [a-z]")


def why_not_worth_keeping(predicate: str, *, opens_with_subject: bool = False) -> str | None:
    """Why the predicate of a statement ("goes there now and then", "learned a new skill") is no fact to keep, or
    None when it names what it is about. With `opens_with_subject` the text opens with its own subject ("Family is
    the most important thing for me"), which names something."""
    cut = re.sub(r"[.!?]+$", "", predicate.strip())
    if _THERE.search(cut) or _BACK.search(cut) or _SINCE_WHAT.search(cut):
        return "points at a place or time only the chat names"
    if _FEELING.match(cut) and not re.search(r"\b[A-Z][a-z]", cut[1:]):
        return "a feeling of the moment"
    if _PICTURES.match(cut):
        return "pictures what the other side tells"
    verdict = _PAST_VERDICT.search(cut)
    if verdict and verdict.group("last").lower() in EVALUATIVE:
        return "a verdict on a moment that is over"
    if opens_with_subject:
        return "a thing only the chat shows, as its subject" if _DEFINITE_SUBJECT.match(cut) else None
    verb, named = _verb_and_what_it_names(cut)
    if not named and verb in _NEEDS_OBJECT:
        return "a verb that needs its thing or place, with only a time after it"
    if not named and not _A_DAY.search(cut):  # "I'm flying out on 3 March": a dated plan
        return "names nothing: only vague nouns, evaluations and time words"
    return None


def _verb_and_what_it_names(predicate: str) -> tuple[str | None, list[str]]:
    """The predicate's main verb (None when it opens with a noun: "has a dog", "had a setback") and the words left that
    name something: not the verb, light verbs ("create", "get"), vague nouns, evaluations, time words or numbers."""
    rest = AUXILIARIES.sub("", predicate)
    said = re.findall(r"[\w%-]+", rest)
    if not said:
        return None, []
    verb = None if _OPENS_A_NOUN.match(rest) else said[0].lower()
    vague = VAGUE_NOUNS | _WORKS if verb in _TAKING_IN else VAGUE_NOUNS  # "read a book": which, nothing says
    named = []
    for i, word in enumerate(said):
        lowered = word.lower()
        if i == 0 and verb is not None:
            continue
        if lowered in ("that", "which", "who") and i > 0 and said[i - 1].lower() in vague:
            break  # "an experience that reminded them of ...": what a vague thing did does not name it
        if lowered in _LIGHT_VERBS:
            continue  # "wants to create something", "got to meet": what it acts on is what counts
        if lowered in STOPWORDS or lowered in vague or lowered in EVALUATIVE or lowered in _TIME_WORDS \
                or len(lowered) < 2 or re.fullmatch(r"[\d%-]+(?:st|nd|rd|th)?", lowered):
            continue
        named.append(lowered)
    return verb, named
