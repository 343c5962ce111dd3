"""Sentences and clauses of a user's message as the rules read them, and the small text helpers they share."""

from __future__ import annotations

import re
from dataclasses import dataclass

from memlake.chunks import SENTENCE_END
from memlake.distill.models import Message
from memlake.distill.offline.vocabulary import (
    CONDITION,
    DIETS,
    HYPOTHETICAL,
    NAME,
    NEGATION,
    NOT_NAMES,
    ORG,
    REPORTED,
    ROLE_NOUNS,
    STOPWORDS,
)

_CODE_BLOCK = re.compile(r"```.*?(?:```|$)", re.S)
_INLINE_CODE = re.compile(r"`[^`]*`")
QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|«[^»]*»")
_URL = re.compile(r"https?://\S+")
# Stage directions in brackets ("[shares a photo of a beach]", "[laughs]") are no words of the user's.
_BRACKETED = re.compile(r"\[[^\]]*\]")
_CLAUSE_SPLIT = re.compile(
    r",?\s+(?:and|but|so)\s+(?=(?:(?:now|then|also|still) )?(?:I|I'm|I've|I'll|we|we're|my)\b)|"
    # (a dash before "a"/"an" names what came before: "a new project - a thriller set in Ohio")
    r";\s*|,\s+so\s+|\s+-\s+(?!an? )|\s+–\s+(?!an? )|\s*—\s*|"
    r",\s+(?=(?:I|I'm|I've|I'll|I'd|we|we're|my|My)\b)|,\s+(?=and\s+(?:I|I'm|I've|we|we're|my|it|they|he|she)\b)|"
    # a time that leads a new statement in: "I've gone off oat milk, these days I drink my coffee black"
    r",\s+(?=(?:these days|nowadays|lately|now)\s+(?:I|I'm|I've|we|we're)\b)"
)
_OBJECT_CUT = re.compile(
    r"\s+(?:and|but|or)\s+(?=(?:would|I|we|it|you|want|need|can|will|should|'d|am|have|has|she|he|they)\b)|"
    r"\s+(?:because|since|so|when|if|which|while|though|although|as|for now|unless|until)\b.*$|"
    r"\s+(?:now|anyway|anymore|too|as well|these days)\s*$",
    re.I,
)


@dataclass
class Sentence:
    text: str  # what the rules read: no code, no URLs
    display: str  # what summaries and key dates quote
    message: Message
    question: bool


def display_text(text: str) -> str:
    return re.sub(r"[ \t]+", " ", _CODE_BLOCK.sub(" ", text).replace("’", "'"))


def rule_text(text: str) -> str:
    text = _BRACKETED.sub(" ", _URL.sub(" ", _INLINE_CODE.sub(" ", display_text(text)))).strip()
    return _WITHOUT_APOSTROPHE.sub(lambda m: _WITH_APOSTROPHE[m.group(0).lower()], text)


# Contractions typed without their apostrophe, common in chat ("I dont eat meat", "im vegan"): read as the contractions
# they are, so a negation is one and "dont" takes no third-person "s". ("ill", "id", "wont", "cant" are words too.)
_NT_STEMS = ("do", "does", "did", "could", "would", "should", "is", "are", "was", "were", "have", "has", "had")
_WITH_APOSTROPHE = {**{f"{stem}nt": f"{stem}n't" for stem in _NT_STEMS}, "im": "I'm", "ive": "I've"}
_WITHOUT_APOSTROPHE = re.compile(rf"\b(?:(?:{'|'.join(_NT_STEMS)})nt|(?:im|ive)(?= [a-z]))\b", re.I)


# In a message typed all in lowercase, capitals say nothing, so it is read as if typed with them: "i" is "I", a
# sentence opens with a capital, and so does the name a verb or a preposition takes as its object ("moved to porto",
# "work for hooli", "go by sasha", "dating noor"). A word that is no name stops the run: a function word, a time or
# filler word, a common place word, a role or a diet, an -ing, -ed or -ly word.
_NAME_LEAD = re.compile(r"\b(?:to|at|in|for|with|by|from|joined|left|quit|dating|seeing|married|marry|"
                        r"(?:call|calls|called) me|named|called)\s+", re.I)
_NOT_A_NAME_WORD = STOPWORDS | frozenset(
    """today tonight tomorrow yesterday last next ago since until lol haha lmao omg btw fyi tbh though too again
    maybe later soon sometime anytime whenever asap pls plz thx
    week weeks month months year years weekend morning evening afternoon night summer winter spring autumn fall
    home work school uni college office bed gym church town city country place flat house apartment job team
    company life love hope fact general town downtown hospital shop store bar cafe restaurant touch charge
    monday tuesday wednesday thursday friday saturday sunday january february march april may june july august
    september october november december""".split()  # noqa: SIM905
) | frozenset(ROLE_NOUNS) | frozenset(DIETS)


def _a_name_word(word: str) -> bool:
    return (word not in _NOT_A_NAME_WORD and word.isalpha() and len(word) > 1
            and not word.endswith(("ing", "ed", "ly")))


def with_capitals(text: str) -> str:
    """`text` typed all in lowercase, with the capitals the rules read (see `_NAME_LEAD`); any other text as it
    is."""
    if any(ch.isupper() for ch in text):
        return text
    text = re.sub(r"\bi\b", "I", text)
    text = re.sub(r"(^|[.!?]\s+)([a-z])", lambda m: m.group(1) + m.group(2).upper(), text)
    out, end = [], 0
    for lead in _NAME_LEAD.finditer(text):
        if lead.start() < end:
            continue
        words = re.match(r"[a-z][\w'-]*(?: [a-z][\w'-]*){0,2}", text[lead.end():])
        run = []
        for word in words.group(0).split() if words else []:
            if not _a_name_word(word):
                break
            run.append(word)
        if run:
            named = " ".join(w.capitalize() for w in run)
            out.append(text[end: lead.end()] + named)
            end = lead.end() + len(" ".join(run))
    return "".join(out) + text[end:]


def message_text(message: Message) -> str:
    """The text of a message its sentences are split from (`Sentence.display` is a piece of it)."""
    return display_text(with_capitals(message.content))


def split_sentences(message: Message) -> list[Sentence]:
    out = []
    for piece in SENTENCE_END.split(message_text(message)):
        piece = piece.strip()
        if not piece:
            continue
        text = rule_text(piece).strip()
        if not text:
            continue  # a stage direction alone ("[shares a photo of a beach]") says nothing of the user's
        statement = _statement_before_a_request(text)
        if statement:  # "I prefer window seats, can you remember that?": the user says something, then asks
            out.append(Sentence(statement, piece, message, False))
            continue
        out.append(Sentence(text, piece, message, piece.endswith("?") or text.endswith("?")
                            or bool(_UNMARKED_QUESTION.match(text))))
    return out


# A question typed without its mark, as chat often is: "how much money is my client seeking", "can you help me plan
# it" ("When I was a kid, ..." and "What I love is ..." are statements: the word after says which).
_UNMARKED_QUESTION = re.compile(r"^(?:(?:how|what|why|where|when|who|which|whose) (?:much|many|long|often|is|are|was|"
                                r"were|do|does|did|can|could|should|would|will|has|have)|(?:can|could|would|will|do|"
                                r"does|did|is|are|should|shall) (?:you|I|we|there|it)) ", re.I)


# A question put after a statement, as its own last clause: "..., can you remember that?", "..., right?"
# ("..., is that too much?", "..., is it normal?": a question about the statement, which still stands)
_TRAILING_REQUEST = re.compile(r",\s*(?:(?:and|so|but) )?(?:(?:can|could|would|will|do|did) you\b[^,?]*|ok(?:ay)?|"
                               r"(?:is|isn't) (?:that|it|this)\b[^,?]*|right|yeah|alright|please)\s*\?+$", re.I)
# A statement opens with the user as its subject (after a word that only leads in: "Also I prefer ...").
_STATEMENT_OPENING = re.compile(r"^(?:(?:also|and|so|oh|btw|by the way|well|ok|okay|actually|fyi)\b,?\s+)*"
                                r"(?:I|I'm|I've|I'd|we|we're|we've|my|our)\b", re.I)


def _statement_before_a_request(text: str) -> str | None:
    """The statement that opens a question like "Also I actually prefer window seats on flights, can you remember
    that?": what the user states is read as a statement, the request after it as the question it is."""
    request = _TRAILING_REQUEST.search(text)
    if not request:
        return None
    statement = text[: request.start()].strip()
    if "?" in statement or not _STATEMENT_OPENING.match(statement):
        return None
    return statement + "."


# "I'm so excited to tell you I started a yoga class", "Wanted to let you know that I'm running again": the
# telling is to the other side, what is told is about the user.
_TELLING_YOU = re.compile(r"^[^.!?]*?\b(?:tell|let) (?:you|ya)(?: know)?(?: that)?,?\s+"
                          r"(?=(?:I|I'm|I've|I'd|we|we're|we've|my|our)\b)", re.I)


def without_telling(text: str) -> str:
    """What the user tells, without "I wanted to tell you (that)" before it."""
    return _TELLING_YOU.sub("", text, count=1)


# A comment on the telling, not on what is told ("by the way", "to be honest", "btw"), where it stands apart: opening
# the sentence, or before a comma or the end of a clause. "I hate cilantro by the way, so ..." tells a dislike of
# cilantro; "honestly" inside a clause ("I honestly love it") stays, the preference reader knows it.
_ASIDE = (r"(?:by the way|btw|to be honest|tbh|to be fair|for what it'?s worth|fwiw|just so you know|fyi|"
          r"if I'?m honest|as I said|as I mentioned|honestly|frankly)")  # not "anyway": "in any case" says something
_ASIDE_OPENING = re.compile(rf"^(?:{_ASIDE})\b\s*[,:]?\s*", re.I)
_ASIDE_IN_PASSING = re.compile(rf"\s*,?\s+(?:{_ASIDE})\b(?=\s*(?:[,.;:!?]|$))", re.I)


def without_asides(text: str) -> str:
    """The sentence without a comment on the telling at its edges: "I hate cilantro by the way, so no recipes" ->
    "I hate cilantro, so no recipes"."""
    return _ASIDE_IN_PASSING.sub("", _ASIDE_OPENING.sub("", text))


def without_addressee(text: str, names: set[str]) -> str:
    """The sentence without the other side called by name: "Gina, I just opened a studio" and "I love the idea,
    Gina!" say nothing about Gina. A name after a preposition or "and" stays: "I went hiking with Gina"."""
    for name in names:
        said = re.escape(name)
        text = re.sub(rf"^{said}\s*[,!]\s*", "", text)
        text = re.sub(rf",\s*{said}\s*(?=[.!?]*$)", "", text)
        text = re.sub(rf"(?<!\b(?:to|of|at|by|as|or|in|on))(?<!\b(?:and|for))(?<!\b(?:with|from|like|than|"
                      rf"into|onto))(?<!\babout)\s+{said}\s*(?=[.!?]+$)", "", text)
    return text


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


_TIME_LEAD = re.compile(r"(?i)(?:(?:last|this|next|on|in|over|during|early|late|every) \w+(?: \w+)?|yesterday|"
                        r"recently|lately|a while back|(?:a|\w+) (?:days?|weeks?|months?|years?) ago)")


def split_clauses(text: str) -> list[str]:
    text = QUOTED.sub(" ", text)
    text = re.sub(r"^(?:(?:hi|hello|hey|thanks|ok|okay|great|good|perfect|big news|oh|well|also|and|so|now|yeah|yes|"
                  r"um+|uh+|erm|anyway|update|news|heads up)\b[!,.:]*\s*)+", "", text, flags=re.I)
    pieces = [c.strip(" ,") for c in _CLAUSE_SPLIT.split(text) if c and c.strip(" ,")]
    joined: list[str] = []
    for piece in pieces:
        # "Sam and I got engaged" ("My colleagues and I went"): a coordinated subject, not two clauses. The check
        # of the text is built per clause, so only when the rest holds: built for every clause, its one-off patterns
        # evicted the readers' compiled ones from `re`'s cache (a pass compiled 2,101 times; docs/decisions.md).
        companion = joined and (re.fullmatch(NAME, joined[-1]) and joined[-1].split()[0] not in NOT_NAMES
                                or re.fullmatch(r"[Mm]y (?:[a-z-]+ ){0,2}[a-z-]+", joined[-1]))
        if companion and re.match(r"I\b", piece) and re.search(
                rf"\b{re.escape(joined[-1])},? and {re.escape(piece[:12])}", text):
            joined[-1] = f"{joined[-1]} and {piece}"
        elif joined and _TIME_LEAD.fullmatch(joined[-1]):  # "Last week, we had a blast": when, not a clause
            joined[-1] = f"{joined[-1]}, {piece}"
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


# A change told with the user as object: an organisation took the user on ("Northwind hired me in March", "Pied
# Piper has taken me on"), or the user was moved ("I got transferred to Oslo", "we were relocated to Porto"). Told
# again with the user as subject, it reads as the same change: "I joined Northwind", "I moved to Oslo". Only when
# "me" ends the object ("hired me a new assistant" is a favour, not a job).
_TOOK_ME_ON = re.compile(
    rf"^(?P<org>{ORG}) (?:has |have |had )?(?:just |finally |recently |officially )*(?:hired|recruited|employed|"
    r"poached|"
    r"(?:taken|took|brought) me on|brought me in|signed)(?: me)?"
    r"(?=\s*(?:$|[,.;:!)]|-\s)|\s+(?:as|in|on|at|last|this|back|earlier|recently|yesterday|today|after|from|for (?:a|"
    r"the|my) (?:new )?(?:role|position|job))\b)"
)
_WAS_HIRED = re.compile(rf"\bI(?:'ve been| have been| was| got)(?: just| finally| recently| officially)* (?:hired|"
                        rf"recruited|taken on|brought on|headhunted|poached) (?:by|at) (?P<org>{ORG})")
_WAS_MOVED = re.compile(r"\b(?P<who>I|[Ww]e)(?:'ve been| have been|'d been| had been| was| were| got)(?: just| "
                        r"finally| recently| officially)* (?:relocated|transferred|posted|moved) to\b")
_ME_AND = re.compile(rf"^[Mm]e and (?P<name>{NAME}) (?=[a-z])")
# A change from the old value to the new ("moved from Oslo to Porto", "pushed Heron from June 3 to June 17", "went from
# vegetarian to vegan"): the slot readers read the change to the new value; the old one was said before.
_FROM_THE_OLD = re.compile(
    r"\b(?P<verb>moved|switched|went|changed|transitioned|shifted|pushed|slipped|slid|delayed|postponed|bumped)"
    r"(?P<object>(?: [\w']+){0,3}?) from (?!now\b|home\b)[^.;!?]+? (?P<to>to|into|until) (?=\S)")
# Adverbs between the subject and a past that only colour it ("I officially started at", "we've actually moved"): the
# readers see the past next to its subject.
_ADVERBS_BEFORE_A_PAST = re.compile(
    r"\b(?P<who>I|[Ww]e)(?P<aux>'ve| have| had|'d)? (?:(?:officially|actually|basically|literally|honestly|finally|"
    r"recently|eventually|also|already|just) )+(?=(?:[a-z]+ed|began|begun|became|become|went|gone|got|took|taken|"
    r"left|quit)\b)")


def with_the_user_as_subject(clause: str) -> str:
    """`clause` with the user as the subject of a change told with the user as object (see `_TOOK_ME_ON`), and "me
    and Sam" as "Sam and I"; any other clause as it is."""
    m = _TOOK_ME_ON.match(clause)
    if m and re.search(r"\bme\b", m.group(0)):
        rest = re.sub(rf"^ from (?:the )?{ORG}", "", clause[m.end():])  # ("poached me from Initech": where from)
        clause = f"I joined {m.group('org')}{rest}"
    clause = _ADVERBS_BEFORE_A_PAST.sub(lambda w: f"{w.group('who')}{w.group('aux') or ''} ", clause)
    # ("went from A to B" is a change, "switched to B"; "went to Porto" alone would be a journey)
    clause = _FROM_THE_OLD.sub(lambda w: "switched to " if w.group("verb") == "went" and not w.group("object") else
                               f"{w.group('verb')}{w.group('object')} {w.group('to')} ", clause)
    clause = _WAS_HIRED.sub(lambda w: f"I joined {w.group('org')}", clause)
    clause = _WAS_MOVED.sub(lambda w: f"{w.group('who')} moved to", clause)
    return _ME_AND.sub(lambda w: f"{w.group('name')} and I ", clause)


def cut_object(raw: str) -> str:
    obj = _OBJECT_CUT.split(raw, maxsplit=1)[0]
    obj = re.sub(r"^(?:also|really|just|totally|absolutely|still|even)\s+", "", obj.strip(), flags=re.I)
    obj = re.sub(r"\s+(?:as well|too|also|a lot|so much|very much)$", "", obj.strip(" ,.;:!?"), flags=re.I)
    return obj.strip(" ,.;:!?").strip()


# The items after a first one cut at its comma: ", pottery, and hiking" / ", pottery and hiking in the hills", up to
# the end of the sentence; each item a few words and no new clause ("I love painting, and I sing" is two statements).
_LIST_ITEM = r"(?!(?:I|I'm|I've|we|it|it's|they|he|she|you|that|this|which|but|so|because)\b)[\w'-]+(?: [\w'-]+){0,4}"
_LIST_REST = re.compile(rf"^(?P<items>(?:\s*,\s*{_LIST_ITEM})*\s*,?\s+(?:and|or)\s+{_LIST_ITEM})\s*(?:[.!?]|$)")
_FIRST_ITEM = re.compile(r"^[\w'-]+(?: [\w'-]+){0,3}$")


def with_the_rest_of_a_list(obj: str, rest: str) -> str:
    """"painting" followed by ", pottery, and hiking." -> "painting, pottery, and hiking": a list is kept whole,
    never cut after its first item; any other object as it is."""
    m = _LIST_REST.match(rest)
    if not m or not _FIRST_ITEM.match(obj) or not re.match(r"^\s*,", rest):
        return obj
    return f"{obj}{m.group('items').rstrip()}"


def third_person(text: str) -> str:
    """`text` with the user's first person as the third: "my sister and I" -> "their sister and they", "I am" -> "they
    are". Case matters: "us" is the user and others, "US" a country; "We" opens a sentence."""
    return _FIRST_PERSON.sub(lambda m: _THIRD_PERSON.get(m.group(1).lower(), "their"), text)


_THIRD_PERSON = {"me": "them", "myself": "themselves", "mine": "theirs", "us": "them", "we": "they", "ours": "theirs",
                 "ourselves": "themselves", "i": "they", "i'm": "they're", "i am": "they are", "i've": "they've",
                 "i was": "they were", "we're": "they're", "we've": "they've"}  # (my, our: their)
_FIRST_PERSON = re.compile(r"\b(my|My|me|myself|mine|our|Our|us|ours|ourselves|I'm|I am|I've|I was|I|we're|We're|"
                           r"we've|We've|we|We)\b")


def sentence_case(text: str) -> str:
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."


def guarded(clause: str, match: re.Match[str]) -> bool:
    """True when what precedes the match makes it hypothetical, negated or reported."""
    prefix = clause[: match.start()]
    if CONDITION.search(clause[match.end():]):
        return True  # "I moved to Oslo, if you remember"? rare; "I'm vegan unless I travel": not a plain statement
    return bool(HYPOTHETICAL.search(prefix) or NEGATION.search(prefix) or REPORTED.search(prefix))


def trim_name(name: str) -> str:
    name = re.sub(r"'s\b.*$", "", name.strip())  # "my daughter Sara's birthday" -> "Sara"
    words = name.strip(" .,'’").split()
    while words and (words[-1] in NOT_NAMES or not words[-1][0].isupper()):
        words.pop()
    return " ".join(w.strip(".,") for w in words)


def trim_org(name: str) -> str:
    words = name.strip(" .,").split()
    while words and words[-1].lower() in ("and", "of", "&", "de"):
        words.pop()
    return " ".join(words).strip(" .,")
