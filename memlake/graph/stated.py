"""Relations people state in a sentence: subject, predicate, object read from the parse between the names it holds
and the speaker ("I went to Paris", "my sister Anna", "we adopted a cockatiel named Kiwi").

The predicate is the verb's lemma with its preposition ("go to", "work at"), normalised to a small vocabulary
(`VERB_RELATIONS`: visited, works_at, lives_in, from, member_of, has_pet, bought, started, likes, ...); a relative
noun before a name ("my sister Anna") gives a kinship relation. Precision first: only a statement is read (not a
question, not denied, not wished, planned or hedged: "want to go to Paris", "might visit Rome", "I'm going to
Tokyo"), the subject must be the speaker ("I", "we") or a name the sentence holds (never "she", whom the parse
cannot say), and a relation whose object must be of a type (lives_in a place) is read only from a name of that
type. Each relation carries a confidence from how it was said; `SHOWN_CONFIDENCE` and above is shown, the rest are
candidates.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from memlake.nlp.language_model import parse
from memlake.nlp.names import ANIMAL_NOUNS, TRIP_NOUNS, WORK_NOUNS, Name

if TYPE_CHECKING:
    from spacy.tokens import Token

# A relation stated at or above this confidence is shown; below it, a candidate kept until said again.
SHOWN_CONFIDENCE = 0.7

# (verb lemma, preposition or "" for a direct object) -> the relation; "any" object type unless `OBJECT_TYPES` says.
VERB_RELATIONS = {
    ("go", "to"): "visited", ("visit", ""): "visited", ("travel", "to"): "visited", ("fly", "to"): "visited",
    ("drive", "to"): "visited", ("come", "to"): "visited", ("attend", ""): "attended", ("go", ""): "visited",
    ("work", "at"): "works_at", ("work", "for"): "works_at", ("intern", "at"): "works_at",
    ("volunteer", "at"): "volunteers_at", ("volunteer", "for"): "volunteers_at",
    ("live", "in"): "lives_in", ("move", "to"): "lives_in", ("study", "at"): "studies_at",
    ("join", ""): "member_of", ("play", "in"): "member_of", ("play", "for"): "member_of", ("sing", "in"): "member_of",
    ("adopt", ""): "has_pet", ("rescue", ""): "has_pet", ("get", ""): "has_pet",
    ("buy", ""): "bought", ("start", ""): "started", ("found", ""): "started", ("open", ""): "started",
    ("read", ""): "reads", ("watch", ""): "watched", ("play", ""): "plays", ("meet", ""): "met",
    ("marry", ""): "partner_of", ("date", ""): "partner_of",
    ("be", "from"): "from", ("come", "from"): "from", ("grow", "in"): "from",
    ("take", "to"): "visited", ("spend", "in"): "visited", ("stay", "in"): "visited", ("stay", "at"): "visited",
    ("listen", "to"): "listened_to",
    ("be", "in"): "visited", ("be", "to"): "visited", ("take", "in"): "visited", ("explore", ""): "visited",
    ("explore", "in"): "visited",
    ("love", ""): "likes", ("like", ""): "likes", ("enjoy", ""): "likes", ("adore", ""): "likes",
}
# The type a relation's object must have to be read at all.
OBJECT_TYPES = {
    "visited": {"place", "organization", "event"}, "attended": {"event", "organization"},
    "works_at": {"organization"}, "volunteers_at": {"organization"}, "studies_at": {"organization"},
    "lives_in": {"place"}, "member_of": {"organization"}, "has_pet": {"animal"}, "reads": {"work", "person"},
    "watched": {"work"}, "plays": {"work"}, "met": {"person"}, "partner_of": {"person"}, "from": {"place"},
    "listened_to": {"work", "person"}, "likes": {"work", "place", "organization", "tool", "event"},
}
# Relative nouns before a name, as the relation of the speaker to it.
RELATIVE_RELATIONS = {
    **dict.fromkeys(("sister", "brother", "sibling", "twin"), "sibling_of"),
    **dict.fromkeys(("wife", "husband", "partner", "boyfriend", "girlfriend", "fiance", "fiancé", "fiancée",
                     "spouse"), "partner_of"),
    **dict.fromkeys(("mom", "mum", "mother", "dad", "father"), "child_of"),
    **dict.fromkeys(("son", "daughter", "kid", "child"), "parent_of"),
    **dict.fromkeys(("friend", "bestie", "buddy"), "friend_of"),
    **dict.fromkeys(("cousin", "aunt", "uncle", "niece", "nephew", "grandma", "grandpa", "grandmother",
                     "grandfather"), "relative_of"),
    **dict.fromkeys(("boss", "manager", "coworker", "colleague"), "works_with"),
}
# Verbs of being somewhere whose object must be a place, whatever the relation allows ("I was in Kraków" is a visit;
# "I was in the Riverside Orchestra" is none; "took this photo in Peru").
PLACE_ONLY_VERBS = frozenset({("be", "in"), ("be", "to"), ("take", "in")})
# The verbs that make a trip's noun (`TRIP_NOUNS`: "a road trip to Montana", "a jazz festival in Montreal") the
# speaker's, done ("took a trip", "went on a vacation", "went to a festival"; not "planning a trip").
TRIP_VERBS = frozenset({"take", "go", "have", "make", "do", "enjoy", "love", "attend", "spend"})
# Verbs whose present progressive tells what someone is doing these days, not a plan ("I'm reading Dune").
ONGOING_VERBS = frozenset({"read", "play", "watch", "listen", "work", "live", "volunteer", "study", "love", "enjoy"})
_CONDITIONS = frozenset({"if", "when", "whenever", "once", "until", "unless"})
_HEDGES = frozenset({"will", "would", "could", "should", "might", "may", "must", "shall", "'ll", "'d"})
_WISH_VERBS = frozenset({"want", "hope", "plan", "wish", "like", "love", "need", "try", "intend", "consider"})


@dataclass(frozen=True)
class Stated:
    """One relation read from a sentence: source (the speaker's "I", or a name), relation, target name."""

    source: str  # "I" for the speaker, else a name as said
    relation: str  # from the vocabulary
    relation_text: str  # the verb's lemma and preposition, as read ("go to"), or the relative noun
    target: str
    target_type: str
    confidence: float


def relations_in(sentence: str, names: list[Name]) -> list[Stated]:
    """The relations `sentence` states between the speaker and its `names` (from `names_in` of the same text)."""
    if not names or sentence.rstrip().endswith("?"):
        return []
    doc = parse(sentence)
    found: list[Stated] = []
    by_root = {}
    for name in names:
        span = doc.char_span(name.start, name.end, alignment_mode="expand")
        if span is not None:
            by_root[span.root.i] = name
    for i, name in by_root.items():
        stated = _kinship(doc[i], name) or _verb_relation(doc[i], name, by_root)
        if stated is not None:
            found.append(stated)
    return found


def _kinship(token: Token, name: Name) -> Stated | None:
    """ "my sister Anna", "our snake Susie": the speaker's relative or pet, by the noun before the name."""
    doc = token.doc
    first = doc.char_span(name.start, name.end, alignment_mode="expand")
    if first is None or first.start == 0:
        return None
    noun = doc[first.start - 1] if doc[first.start - 1].lower_ not in ("named", "called", ",") else (
        doc[first.start - 2] if first.start > 1 else None)
    if noun is None:
        return None
    owner = next((t for t in doc[max(0, noun.i - 2):noun.i] if t.lower_ in ("my", "our")), None)
    if owner is None:
        return None
    lemma = noun.lemma_.lower()
    if lemma in RELATIVE_RELATIONS and name.type == "person":
        return Stated("I", RELATIVE_RELATIONS[lemma], noun.lower_, name.text, name.type, 0.85)
    if lemma in ANIMAL_NOUNS and name.type == "animal":
        return Stated("I", "has_pet", noun.lower_, name.text, name.type, 0.85)
    return None


def _verb_relation(token: Token, name: Name, names_by_root: dict[int, Name]) -> Stated | None:
    """ "I went to Paris", "Anna works at Google": the verb the name hangs from, and its subject."""
    prep = ""
    if token.dep_ == "compound" and token.head.lemma_.lower() in WORK_NOUNS:
        token = token.head  # "enjoyed the Hamilton musical": the musical is what was enjoyed
    head = token.head
    if token.dep_ == "pobj" and head.dep_ == "prep":
        prep, head = head.lower_, head.head
    elif token.dep_ not in ("dobj", "oprd"):
        return None
    if token.dep_ == "oprd" and head.lemma_ in ("name", "call") and head.dep_ == "acl":
        token, head = head.head, head.head.head  # "adopted a cockatiel named Kiwi": the cockatiel is adopted
    if head.pos_ == "NOUN" and prep in ("to", "in") and head.lemma_.lower() in TRIP_NOUNS:
        return _trip(head, prep, name, names_by_root)
    if head.pos_ not in ("VERB", "AUX"):
        return None
    if (head.lemma_.lower(), prep) in PLACE_ONLY_VERBS and name.type != "place":
        return None
    relation = VERB_RELATIONS.get((head.lemma_.lower(), prep))
    if relation is None or name.type not in OBJECT_TYPES.get(relation, {name.type}) or _not_a_statement(head):
        return None
    subject, confidence = _subject(head, names_by_root)
    if subject is None:
        return None
    return Stated(subject, relation, f"{head.lemma_.lower()} {prep}".strip(), name.text, name.type, confidence)


def _trip(noun: Token, prep: str, name: Name, names_by_root: dict[int, Name]) -> Stated | None:
    """ "We took a road trip to Montana", "I went to a jazz festival in Montreal": a place the speaker went, by the
    trip's noun and the verb that makes it theirs and done."""
    verb = noun.head.head if noun.dep_ == "pobj" else noun.head
    if name.type != "place" or verb.pos_ != "VERB" or verb.lemma_.lower() not in TRIP_VERBS or _not_a_statement(verb):
        return None
    subject, confidence = _subject(verb, names_by_root)
    if subject is None:
        return None
    return Stated(subject, "visited", f"{noun.lemma_.lower()} {prep}", name.text, name.type, confidence)


def _not_a_statement(verb: Token) -> bool:
    """Denied, hedged, a condition, only wished or planned: "didn't go", "might visit", "if I go", "want to go", "I'm
    going to Tokyo" (chat's present progressive of a move or a visit is most often a plan)."""
    auxes = [c for c in verb.children if c.dep_ in ("aux", "auxpass", "neg")]
    if any(a.dep_ == "neg" or a.lower_ in _HEDGES for a in auxes):
        return True
    if any(c.dep_ in ("mark", "advmod") and c.lower_ in _CONDITIONS for c in verb.children):
        return True  # "when I'm in Kraków", "if I go to Lisbon": a condition, not what happened
    if verb.tag_ == "VBG" and any(a.lemma_ == "be" for a in auxes) and verb.lemma_.lower() not in ONGOING_VERBS:
        return True
    if verb.dep_ == "xcomp" and verb.head.lower_ in ("going", "gon", "gonna"):
        return True  # "going to visit Rome", "gonna stay in Galway": a plan
    return verb.dep_ == "xcomp" and verb.head.lemma_.lower() in _WISH_VERBS


def _subject(verb: Token, names_by_root: dict[int, Name]) -> tuple[str | None, float]:
    """The verb's subject as a relation's source: "I" (0.8), "we" (0.7: the speaker among others), a name the
    sentence holds (0.75); anyone else (a pronoun, a common noun) is no source."""
    for token in (verb, *verb.ancestors):
        subject = next((c for c in token.children if c.dep_ in ("nsubj", "nsubjpass")), None)
        if subject is not None:
            word = subject.lower_
            if word == "i":
                return "I", 0.8
            if word == "we":
                return "I", 0.7
            name = names_by_root.get(subject.i)
            return (name.text, 0.75) if name is not None and name.type == "person" else (None, 0.0)
        if token.dep_ not in ("conj", "xcomp"):
            break
    return None, 0.0
