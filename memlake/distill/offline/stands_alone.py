"""Does a fact say what it is about without the chat around it? The last check before any fact with no slot is kept.

A fact is read from one sentence, or one clause of it, and is remembered apart from both. `worth_keeping` looks at
the predicate alone; this check looks at the fact's structure beside the sentence it was read from (issue 23: a
hand-judged sample of held-out facts was 0.66 right, and nearly every wrong one did not stand alone):

- a thing pointed at but not named in the fact: "that"/"those"/"these" before a noun ("bought that lamp"), "like
  that" ("boots like that"), or an object "it"/"them" with no thing named before it in the predicate ("check it
  out", "love them");
- a vague head as what the fact is about: "something", "anything", "stuff", "one <...> thing";
- what a verb acts on left out: a comparison with nothing to compare ("is doing better already", "be more careful"),
  a verb and its particle with nothing after them ("will tag along"), a verb that needs an object at the end
  ("painting helps too");
- passing talk of a stretch of time as the subject ("The user's week's been good");
- a clause cut from the condition or time that gives it its meaning ("always bakes bread" of "When I'm anxious, I
  always bake bread"): the whole sentence, read as a fact of its own, keeps it.
"""

from __future__ import annotations

import re

from memlake.distill.offline.worth_keeping import AUXILIARIES as _AUXILIARIES
from memlake.distill.offline.worth_keeping import EVALUATIVE
from memlake.text import STOPWORDS, content_words

# "that lamp", "those shoes", "these boots": a determiner pointing at a thing the chat shows, when one word and then
# the end, a preposition or a conjunction follow it. After a noun "that" opens a relative clause ("a screenplay that
# appeared"), so only a "that" right after the predicate's verb or a preposition counts (`_pointed_at`).
_POINTED_AT = re.compile(
    r"\b(?P<before>[\w'-]+)\s+(?:that|those|these)\s+(?!(?:is|are|was|were|has|have|had|will|would|can|could|i|they|"
    r"we|he|she|it|the|a|an|my|their|his|her|our|you|your)\b)[a-z][\w']*(?=\s*(?:$|[.,;:!?)]|\s-\s|\s(?:in|on|at|"
    r"from|with|for|of|to|and|or|but|last|yesterday|today|this|when|while)\b))",
    re.I)
_PREPOSITIONS = frozenset("in on at from with for of to about like into onto by near after before".split())  # noqa: SIM905
# "RPGs like that", "something like this": a comparison with what only the chat shows.
_LIKE_THAT = re.compile(r"\blike (?:that|this|those|these)\b(?!\s+(?:of|is|was|are|one))", re.I)
# An object "it"/"them" (after a verb or a preposition, not opening a clause of its own: "it's", "it was").
_OBJECT_PRONOUN = re.compile(r"\b(?P<before>[a-z]+)\s+(?P<pronoun>it|them)\b(?!'s|\s+(?:is|was|has|had|will|would|"
                             r"are|were|have|can|could|gets|got|makes|made|took|takes)\b)", re.I)
# Words before an "it"/"them" that open a clause or join two, not a verb or a preposition acting on it.
_NOT_ACTING = frozenset("and or but so because that when while if as since than then".split())  # noqa: SIM905
# A thing named before the pronoun: a determiner and a word, a capitalised name, a plural noun, a title in quotes.
_A_THING = re.compile(r"\b(?:a|an|the|my|their|his|her|our|its|some|this|these|those|\d+)\s+[\w-]+|\buser's [\w-]+|"
                      r"(?<!^)\b[A-Z][\w-]+|\b[a-z]{3,}s\b|\"[^\"]+\"", re.M)
# What a fact is about, named only as a vague head.
_VAGUE_HEAD = re.compile(r"(?P<before>(?:[\w'-]+\s+){0,2})\b(?P<head>something|anything|stuff|things?)\b"
                         r"(?!\s+(?:called|named|like|such as|about [A-Z\"]))", re.I)
# Words that count or point without naming a kind: "one good thing", "some cool stuff", "crazy things".
_COUNTING = frozenset("one a an some few other many all lots lot of".split())  # noqa: SIM905
# An occasion or undertaking named only by "the", with nothing after it saying which: "made the event a hit", "loved
# the class" (only the chat says which; "the trip to Rome" and "the class at the gym" say it).
_THE_OCCASION = re.compile(r"\bthe (?:event|events|trip|show|game|project|class|course|party|meeting|concert|festival|"
                           r"competition|tournament|match|performance|workshop|program|conference|experience|tour|"
                           r"lessons?|thing|place|one)(?=\s*(?:$|[.,;:!?]|\s(?:with|on|and|but|or|so|last|this|"
                           r"yesterday|a|an|so|really|too|again)\b))", re.I)
# A comparison with nothing to compare: "is doing better already", "got better", "be more careful".
_BARE_COMPARISON = re.compile(
    r"\b(?:is|are|am|was|were|be|been|being|doing|getting|got|gets|get|feel|feels|feeling|felt)\s+"
    r"(?:(?:so|much|way|even|a lot|a bit|a little|far|lots)\s+)*(?P<comparison>better|worse|(?:more|less)\s+[a-z]+)"
    r"(?P<after>(?:\s+[\w-]+)*)\s*[.!]*$", re.I)
# "along" with nothing after it ("will tag along", "came along"): along with what, only the chat says. (Other
# particles make whole verbs of their own: "coming out", "help out", "coming up".)
_BARE_PARTICLE = re.compile(r"\balong(?P<after>(?:\s+[\w-]+)*)\s*[.!]*$", re.I)
# Verbs that act on something: at a fact's end, with only adverbs after them, what they act on is left out.
_TAKES_AN_OBJECT = re.compile(r"(?<!they )(?<!they're )(?<!we )(?<!I )(?<!who )(?<!that )(?<!which )"
                              r"\b(?:helps?|helped|helping|needs?|needed|misses|missed|fixed|uses?|used|enjoys?|"
                              r"enjoyed|loves?|loved|likes?|liked|hates?|hated|tries|tried|finished|started|began|"
                              r"joined|bought|got|made|took|brought|found|checked|recommends?|recommended)"
                              r"(?P<after>(?:\s+[\w-]+)*)\s*[.!]*$", re.I)
# Words that lead to a thing without being one: "more careful in the future", "helps with" (but "like them" has one).
_LINKING = frozenset("the in at on for of with to".split())  # noqa: SIM905
# "return" with no place: from where or to where, only the chat says ("plans to return on 2024-07-20").
_RETURN = re.compile(r"\breturn(?:s|ed|ing)?\b(?!\s+(?:to|from|home|the|a|an|my|their|[A-Z]))")
# Words that may follow a verb, a particle or a comparison without naming anything.
_ADVERBS = frozenset(
    """too also already again still now lately recently soon today tonight yesterday tomorrow this week weekend
    month year last next so much really a lot bit little as well more than ever before all the time in future
    these days right away at once for sure anyway though though""".split()  # noqa: SIM905
)
# "The user's week's been good", "The user's weekend was quiet": how a stretch of time went is passing talk.
_TIME_AS_SUBJECT = re.compile(r"^The user's (?:day|week|weekend|morning|evening|night|month|year|summer|holiday|"
                              r"holidays|vacation)(?:'s|\s+(?:is|was|has|had|went|were|have|looks|seems|got|been)\b)",
                              re.I)  # ("The user's morning coffee" is the coffee)
# A condition or time frame a sentence hangs its statement on: "when I'm stressed", "if it rains", "as a kid".
# ("if"/"unless" only opening the sentence: "who knows if I'll ever get a pet" asks, it sets no condition.)
_FRAME = re.compile(r"(?:\b(?:when|whenever|while|until|once|every time|as soon as)|^(?:if|unless))\s+(?:I|I'm|we|"
                    r"we're|my|it|it's|things|life)\b[^,.;:!?]*|\bas a (?:kid|child|teen|teenager|student)\b", re.I)


def why_not_standalone(content: str, sentence: str) -> str | None:
    """Why a fact ("The user took that pic in Tokyo.") read from `sentence` does not stand alone, or None when it
    does."""
    text = re.sub(r"[.!?]+$", "", content.strip())
    predicate = _predicate(text)
    if _pointed_at(predicate) or _LIKE_THAT.search(predicate):
        return "points at a thing only the chat shows"
    if _unresolved_pronoun(text, predicate, sentence):
        return "an 'it' or 'them' the fact names nothing for"
    if _unresolved_they(predicate, sentence):
        return "a 'they' the fact names no one or nothing for"
    if _vague_head(text) or _THE_OCCASION.search(predicate):
        return "about something it does not name"
    if _left_out_object(predicate):
        return "what its verb acts on is left out"
    if _TIME_AS_SUBJECT.match(text):
        return "how a stretch of time went: passing talk"
    return None  # (a fact cut from its condition or time has it back already: `with_its_frame`, run before)


def _predicate(text: str) -> str:
    """The fact without its subject ("The user", "The user's dogs", "Seeing the user's students succeed"): from the
    first word after "the user"/"they" or, failing that, the whole text."""
    m = re.match(r"^(?:.*?\b(?:[Tt]he user(?:'s [\w-]+)?|[Tt]he user and (?:others|[\w-]+)))\s+(?P<rest>.*)$", text)
    return m.group("rest") if m else text


def _pointed_at(predicate: str) -> bool:
    verb = _AUXILIARIES.sub("", predicate).split(" ", 1)[0].lower()
    return any(m.group("before").lower() in _PREPOSITIONS or m.group("before").lower() == verb
               for m in _POINTED_AT.finditer(predicate))


def _unresolved_pronoun(text: str, predicate: str, sentence: str) -> bool:
    """An object "it"/"them" with no thing named before it: in the predicate after its verb ("fixed their bike and
    rode it"), or in the fact's own subject when a clause with a subject of its own says it ("The user's morning
    coffee is sacred, they take it black"); a clause opening with its verb ("..., check it out") speaks to the chat."""
    for m in _OBJECT_PRONOUN.finditer(predicate):
        if m.group("before").lower() in _NOT_ACTING:
            continue
        pronoun = m.group("pronoun").lower()
        if not re.search(rf"\b{pronoun}\b", sentence, re.I) or (pronoun == "them" and re.search(r"\bme\b", sentence)):
            continue  # the user's own "me", put in the third person ("my family motivates them")
        before = predicate[:m.start("pronoun")]
        clause = re.split(r",|\s[-\u2013\u2014]\s", before)[-1].strip()
        opens_with_its_verb = not re.match(r"^(?:they|they're|we|he|she|the user)\b", clause, re.I)
        if pronoun == "it" and " " in before and opens_with_its_verb and len(clause.split()) <= 2:
            named_before = clause  # "check it": a verb with nothing before it in its clause
        else:
            named_before = text[:len(text) - len(predicate)] + (before.split(" ", 1)[1] if " " in before else "")
        if not _A_THING.search(named_before):
            return True
    return False


def _unresolved_they(predicate: str, sentence: str) -> bool:
    """A "they" of the sentence's own ("I love how they take me places") with nothing plural named before it in the
    fact. (With no "I" in the sentence but its subject, a "they" in the fact is the sentence's, not the user's.)"""
    if not re.search(r"\bthey\b", sentence, re.I) or len(re.findall(r"\bI\b", sentence)) > 1:
        return False
    m = re.search(r"\bthey\b", predicate, re.I)
    after_verb = predicate[:m.start()].split(" ", 1)[1] if m and " " in predicate[:m.start()] else ""
    return m is not None and not re.search(r"\b[a-z]{3,}s\b|\b[A-Z][\w-]+ and [A-Z]", after_verb)


def _vague_head(text: str) -> bool:
    """A vague head with only counting words and evaluations before it ("something comforting", "one good thing",
    "cool stuff"), not a kind it names ("fantasy stuff", "the user's art stuff") and not a
    praising tail after a dash ("- really inspiring stuff")."""
    for m in _VAGUE_HEAD.finditer(text):
        if re.search(r"\s[-\u2013\u2014]\s", text[:m.start()]):
            continue
        if m.start() == 0:
            continue  # a vague subject tells that something happened ("Something cool happened to the user")
        modifiers = [w.lower() for w in m.group("before").split()]
        counted = any(w in _COUNTING for w in modifiers)
        if m.group("head").lower() in ("thing", "things") and not counted:
            continue  # "the most important thing", "make things happen", "the user's thing": no vague object
        if modifiers and modifiers[-1] not in _COUNTING and modifiers[-1] not in EVALUATIVE and \
                modifiers[-1] not in _ADVERBS and modifiers[-1] not in STOPWORDS:
            continue  # "fantasy stuff": a kind
        if all(w in STOPWORDS or w in EVALUATIVE or w in _ADVERBS or w in _COUNTING or w.endswith("ly")
               for w in modifiers[-1:]):
            return True
    return False


def _only_adverbs(words: str) -> bool:
    said = [w.lower() for w in re.findall(r"[\w-]+", words)]
    return all(w in _ADVERBS or w in _LINKING for w in said)


def _left_out_object(predicate: str) -> bool:
    if _RETURN.search(predicate):
        return True
    for pattern in (_BARE_COMPARISON, _BARE_PARTICLE, _TAKES_AN_OBJECT):
        m = pattern.search(predicate)
        if m and _only_adverbs(m.group("after")):
            word_before = re.findall(r"[\w'-]+", predicate[:m.start()])[-1:]
            if pattern is _TAKES_AN_OBJECT and word_before and (word_before[0].lower() in _PREPOSITIONS or
                                                               word_before[0].lower() in ("a", "an", "the")):
                continue  # "kids in need", "a use": a noun, not a verb
            return True
    return False


def with_its_frame(content: str, sentence: str) -> str:
    """The fact with the condition or time its sentence hung it on put back, in the third person, when the fact
    lost it: "The user always bakes bread." of "When I'm anxious, I always bake bread." is "The user always bakes
    bread when they're anxious." Otherwise the fact as it was."""
    lost = _lost_frames(content, sentence)
    if not lost:
        return content
    return f"{content.rstrip(' .!')} {' '.join(_in_the_third_person(frame) for frame in lost)}."


def _in_the_third_person(text: str) -> str:
    for first, third in ((r"\bI'm\b", "they're"), (r"\bI am\b", "they are"), (r"\bI was\b", "they were"),
                         (r"\bI've\b", "they've"), (r"\bI'd\b", "they'd"), (r"\bI'll\b", "they'll"), (r"\bI\b", "they"),
                         (r"\bmy\b", "their"), (r"\bme\b", "them"), (r"\bmyself\b", "themselves")):
        text = re.sub(first, third, text, flags=re.I)
    text = text.strip(" ,")
    return text[:1].lower() + text[1:]


def _lost_frames(content: str, sentence: str) -> list[str]:
    """The conditions or times ("When I'm stressed", "as a kid") the sentence hangs its statement on whose words the
    fact does not keep."""
    kept = set(content_words(content.lower()))
    lost = []
    for frame in _FRAME.finditer(sentence):
        words = [w for w in content_words(frame.group(0).lower()) if w not in ("i'm", "it's", "we're")]
        if words and not any(w in kept for w in words):
            lost.append(frame.group(0))
    return lost
