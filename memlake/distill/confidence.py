"""A fact's confidence: how far what was read can be trusted, from how it was read; and which facts are shown.

One formula, worked out here only (docs/decisions.md, 2026-11-28 "confidence and candidates"):

- **prior** of one reading (`reading_prior`): on the model path, the confidence the model returned. From the offline
  distiller (`offline_prior`, worked out as it reads and stored as the candidate's `confidence`):

      prior = min(PRIOR_CAP, family * SPECIFIC_FACTOR ** specific * DOUBT_FACTOR ** doubts)

  `family` is the rule family that read it: a slot reader (a typed value: home city, employer, partner, ...)
  `SLOT_PRIOR`, a plain first-person sentence `SENTENCE_PRIOR`, a sentence about someone else `OTHERS_PRIOR`, a
  guess (tag `inferred`) `INFERRED_PRIOR`. `specific` is 1 when the fact names something (a proper noun, a named
  entity other than a date or time, a number). `doubts` counts the signs of a misreading (`reading_doubts`), each
  read from the parse (`memlake.nlp`) of the fact as shown or of the sentence it was read from:
  it points at the chat (a demonstrative, an indefinite pronoun, or a personal pronoun that is neither the user nor
  a thing the fact named before it, its own clause's subject not counted: "how it helped", "with them", "something
  just as nice", "their friends love them"); it is a fragment (no verb with a subject, or "the user" read as a
  modifier of the next word: "The user almosts forgot"); it names nothing (its object a bare "a/an + adjective +
  noun": "hit a major snag"); it is a passing moment (an event or state told in the past, the perfect or as going on,
  naming nothing and no day, taking no clause, its objects pronouns or nouns with at most an article or possessive:
  "just got back from their walk", "lost their keys again", "is gaining strength"; the simple present of a habit or
  a state, a dated event and an event with a named or described object stay facts); its company is unnamed ("The
  user and others"); it is hedged (a modal of possibility: would, could, might, should,
  may) or its sentence makes it conditional ("if", "unless"); in a chat with an assistant, its sentence asks the
  assistant to do something (an imperative: "Rewrite this: ...", "... please rewrite"), so the text is material,
  not the user's life. One doubt puts a fact said once below the shown threshold whatever its family.
  Episodes of offline distillers before `PRIOR_FROM_READING_SINCE` carry no such prior: theirs is the family's.
  Said in a chat with an assistant, the prior is then multiplied by `ASSISTANT_CHAT_FACTOR`: there the user thinks
  aloud, asks about plans that are not theirs and pastes other people's text, so what reads as a fact about them is
  less often one (a higher bar).
- **repetition** (`fact_confidence`): each conversation that said it again is one more independent reading,
  combined as a noisy-or of the best prior: 1 - (1 - prior) ** conversations. Said once in a conversation or ten
  times in it counts once.
- **the user's word**: a fact the user remembered, corrected or confirmed (an override) is shown whatever its
  confidence.

A fact is **shown** (the profile, the facts of the context block, `recall`, `Memory.facts()` now) when its
confidence is at least the `shown_confidence` setting, or the user's word backs it; the others are candidates:
kept, in history, listed by `memlake facts --candidates`, and shown once said again or confirmed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import polars as pl

from memlake.distill.models import INFERRED
from memlake.nlp import parse

if TYPE_CHECKING:
    from spacy.tokens import Doc, Token

# Priors of the offline distiller's rule families, and the assistant-chat factor: set by family, not fitted (on
# LoCoMo 0-4 the families do not differ in matched share); the `shown_confidence` threshold over them was swept
# on the development data (LoCoMo 0-4, RealMem 0-4; docs/decisions.md), never on the held-out halves.
SLOT_PRIOR = 0.9
SENTENCE_PRIOR = 0.7
OTHERS_PRIOR = 0.6
INFERRED_PRIOR = 0.5
ASSISTANT_CHAT_FACTOR = 0.8
# Signals of how a fact was read (`offline_prior`): measured on the judged development samples (docs/decisions.md,
# 2026-11-28 "a prior from reading signals"), where a fact with any doubt was right about a third as often as one
# without; a fact naming something was not more often right among the user's own facts, so the lift is small, but it
# lets a named, specific fact about someone else be shown after one saying.
SPECIFIC_FACTOR = 1.15
# A fact told in the simple present of the user, whole in one clause ("uses Shopify for their shop"), is a habit or a
# state, not a moment: with a name in it, it is shown after one saying even in a chat with an assistant (2026-11-29).
LASTING_FACTOR = 1.15
DOUBT_FACTOR = 0.6
PRIOR_CAP = 0.95
OFFLINE_DISTILLER = "memlake-offline"  # the prefix of every offline distiller version
PRIOR_FROM_READING_SINCE = 23  # the first offline distiller version whose candidates carry `offline_prior`
USER_SUBJECTS = frozenset({"", "user", "the user"})


def reading_prior(
    returned: float | None, *, distiller: str | None, slot: str | None, subject: str | None,
    tags: Iterable[str] = (), assistant_chat: bool = False,
) -> float:
    """The confidence of one reading of a fact, before repetition: see the module docstring."""
    known = returned is not None and returned == returned  # not None, not NaN
    if distiller and distiller.startswith(OFFLINE_DISTILLER) and not (known and _reads_its_prior(distiller)):
        prior = family_prior(slot=slot, subject=subject, tags=tags)
    else:  # the model path, or an offline reading with its prior: what it returned (0.8 when it said nothing)
        prior = min(1.0, max(0.0, float(returned))) if known else 0.8  # type: ignore[arg-type]
    return prior * ASSISTANT_CHAT_FACTOR if assistant_chat else prior


def _reads_its_prior(distiller: str) -> bool:
    version = distiller[len(OFFLINE_DISTILLER):].strip("-")
    return version.isdigit() and int(version) >= PRIOR_FROM_READING_SINCE


def family_prior(*, slot: str | None, subject: str | None, tags: Iterable[str] = ()) -> float:
    """The prior of the offline rule family that read a fact (see the module docstring)."""
    if INFERRED in set(tags):
        return INFERRED_PRIOR
    if slot:
        return SLOT_PRIOR
    return SENTENCE_PRIOR if (subject or "").strip().lower() in USER_SUBJECTS else OTHERS_PRIOR


def offline_prior(content: str, sentence: str, *, slot: str | None, subject: str | None, tags: Iterable[str] = (),
                  assistant_chat: bool = False, framed: bool = False) -> float:
    """The prior of one offline reading: its family's, lifted when it names something, lowered for each doubt
    (module docstring). `content` is the fact as shown, `sentence` the user's sentence it was read from ("" when
    unknown: no doubt is then read from it); `assistant_chat` only decides whether a request in it counts; `framed`
    that the turn it was read in, or one before it, set up a pretend frame (`sets_a_frame`)."""
    fact = parse(content)
    lift = SPECIFIC_FACTOR if names_something(fact) else 1.0
    lift *= LASTING_FACTOR if tells_a_lasting_fact(fact) else 1.0
    doubts = len(reading_doubts(fact, parse(sentence) if sentence.strip() else None, assistant_chat=assistant_chat,
                                framed=framed))
    return round(min(PRIOR_CAP, family_prior(slot=slot, subject=subject, tags=tags) * lift * DOUBT_FACTOR ** doubts), 6)


# Named-entity types that say nothing specific of their own: the distiller adds the day a thing was said.
_NOT_SPECIFIC_ENTITIES = frozenset({"DATE", "TIME", "ORDINAL"})
# The words a fact in the third person uses for the user (and "others" for the people a "we" left unnamed).
_THE_USER = frozenset({"user", "they", "them", "their", "theirs", "themselves", "themself", "others"})
# Modals of possibility: a hedge, not a fact ("can" is an ability, "will" a plan, both kept as said).
_HEDGES = frozenset({"would", "could", "might", "should", "may", "'d"})
_CONDITIONS = frozenset({"if", "unless"})
_SUBJECT_LABELS = frozenset({"nsubj", "nsubjpass", "csubj", "csubjpass", "expl"})


def names_something(fact: Doc) -> bool:
    """Whether the fact names a thing of its own: a proper noun, a named entity other than a date, or a number."""
    in_dates = {t.i for e in fact.ents if e.label_ in _NOT_SPECIFIC_ENTITIES for t in e}
    return any(t.i not in in_dates and (t.pos_ in ("PROPN", "NUM") or t.ent_type_) and t.lower_ not in _THE_USER
               for t in fact)


def reading_doubts(fact: Doc, sentence: Doc | None, *, assistant_chat: bool = False,
                   framed: bool = False) -> list[str]:
    """The signs that a fact was misread or is no fact to show (the module docstring), each as a short reason."""
    doubts = ["said inside a pretend frame"] if framed else []
    root = next((t for t in fact if t.dep_ == "ROOT"), None)
    if any(_points_at_the_chat(t, sentence) for t in fact) or _a_thing_the_chat_shows(fact, sentence):
        doubts.append("points at the chat")
    if (root is None or root.pos_ not in ("VERB", "AUX") or not _has_a_subject(root) or _the_user_garbled(fact)
            or _cut_from_markup(fact) or _read_from_a_label(sentence)):
        doubts.append("a fragment")
    elif _names_nothing(root):
        doubts.append("names nothing")
    elif _a_passing_moment(root) or _going_on_back_then(root):
        doubts.append("a passing moment")
    if any(t.lower_ == "others" and t.dep_ == "conj" and t.head.dep_.startswith("nsubj") for t in fact):
        doubts.append("unnamed company")
    if any(t.tag_ == "MD" and t.lower_ in _HEDGES for t in fact):
        doubts.append("hedged")
    if sentence is not None:
        if any(t.dep_ == "mark" and t.lower_ in _CONDITIONS and t.head.dep_ == "advcl" for t in sentence):
            doubts.append("conditional")
        if assistant_chat and any(_a_request(t) for t in sentence):
            doubts.append("a request to the assistant")
    return doubts


def tells_a_lasting_fact(fact: Doc) -> bool:
    """The user does or is something now, as a habit or a state: "The user" is the subject of a verb in the simple
    present taking no other verb (not "wants to ...", "is going to ...") nor an auxiliary, and none of its objects is
    a thing "the"/"this" points back at ("likes the breakdown"): "uses Shopify for their shop", "runs a bakery in
    Porto", "prefers trains over planes"."""
    root = next((t for t in fact if t.dep_ == "ROOT"), None)
    if root is None or root.tag_ != "VBZ" or root.lemma_ in ("be", "have"):  # "has some news": the moment's
        return False
    if not any(c.dep_ == "nsubj" and c.lower_ == "user" for c in root.children):
        return False
    if any(c.dep_ in ("xcomp", "ccomp", "advcl", "aux", "auxpass", "neg") for c in root.children):
        return False
    objects = [c for c in root.children if c.dep_ in ("dobj", "dative", "attr")]
    objects += [o for p in root.children if p.dep_ == "prep" for o in p.children if o.dep_ == "pobj"]
    return bool(objects) and not any(
        o.pos_ == "PRON" or (o.pos_ == "NOUN" and any(c.dep_ == "det" and "Def" in c.morph.get("Definite")
                                                      or "Dem" in c.morph.get("PronType") for c in o.children))
        for o in objects)


def _has_a_subject(root: Token) -> bool:
    """Whether the clause has a subject: on the verb, or on an auxiliary the parser took for the verb's ("The user
    loves checking out parks" is parsed with "loves" as an auxiliary of "checking", the subject on it)."""
    heads = [root, *(c for c in root.children if c.dep_ in ("aux", "auxpass"))]
    return any(c.dep_ in _SUBJECT_LABELS for head in heads for c in head.children)


def _points_at_the_chat(token: Token, sentence: Doc | None) -> bool:
    """A word standing for what only the chat shows: "that pic", "there", "something", "it" with nothing named
    before it in the fact, or "them"/"their" the user said of others (the user's own are "me"/"my" as said)."""
    kinds = token.morph.get("PronType")
    if "Dem" in kinds or ("Ind" in kinds and token.pos_ == "PRON"):
        return token.dep_ not in ("expl", "mark") and token.tag_ != "WDT"  # not "there is", not "a thing that ..."
    if token.pos_ != "PRON" or "Prs" not in kinds:
        return False
    number = token.morph.get("Number")  # "it" stands for a thing, "them" for things or people: named before it,
    own_subject = _subject_of_its_clause(token)  # and not as its own clause's subject ("friends love them")
    named_before = any(t.pos_ in ("NOUN", "PROPN") and t.lower_ not in _THE_USER and t.i not in own_subject
                       and (not number or t.morph.get("Number") == number or t.pos_ == "PROPN")
                       for t in token.doc[:token.i])
    if token.lower_ not in _THE_USER:  # it, he, she, we, you, ...
        return not named_before
    said_so = sentence is not None and any(t.lower_ == token.lower_ for t in sentence)
    return said_so and not named_before


def _a_thing_the_chat_shows(fact: Doc, sentence: Doc | None) -> bool:
    """The sentence pointed at a thing with "this", "that", "these" or "those" and no word saying which ("This guitar
    means so much to me"), and the fact reads that thing and names nothing else: the reading turned the demonstrative
    into "the user's guitar", but which one only the chat (a photo, an earlier message) shows. A thing the sentence
    describes ("this apple pie", "this amazing tart"), a fact saying what it is ("This promotion is a reward for ...")
    or naming something, and a day ("this weekend"), are no such pointing."""
    if sentence is None or names_something(fact):
        return False
    pointed = {t.lemma_.lower() for t in sentence if t.pos_ == "NOUN" and not t.ent_type_ and t.dep_ != "npadvmod"
               and [c.dep_ for c in t.children] == ["det"] and "Dem" in next(t.children).morph.get("PronType")}
    return any(t.pos_ == "NOUN" and t.lemma_.lower() in pointed and not _said_what_it_is(t) for t in fact)


def _said_what_it_is(noun: Token) -> bool:
    """The noun is the subject of "is" with what it is or is like ("The user's promotion is a reward for ...")."""
    return (noun.dep_ in _SUBJECT_LABELS and noun.head.lemma_ == "be"
            and any(c.dep_ in ("attr", "acomp") for c in noun.head.children))


def _cut_from_markup(fact: Doc) -> bool:
    """The fact keeps one end of a markup span and not the other ("... Overwhelming Climate Anxiety**."): it was cut
    from a heading or a bold label, not read from a sentence."""
    runs, in_run = 0, False
    for token in fact:
        marking = bool(token.text) and set(token.text) <= _MARKUP
        runs += marking and not in_run
        in_run = marking
    return runs % 2 == 1


_MARKUP = frozenset("*`#_")


def _read_from_a_label(sentence: Doc | None) -> bool:
    """The sentence is a label and what it labels ("Form description: Customized Business Provisions"): its head is
    a noun before a colon, no verb of a clause; a fact read from it made a verb of a title."""
    root = next((t for t in sentence if t.dep_ == "ROOT"), None) if sentence is not None else None
    return (root is not None and root.pos_ in ("NOUN", "PROPN")
            and any(t.text == ":" and t.i > root.i for t in sentence))


def _subject_of_its_clause(pronoun: Token) -> set[int]:
    """The words of the subject of the clause a pronoun is the object of: the pronoun cannot stand for them (a clause
    naming its own subject again says "themselves", "itself")."""
    if pronoun.dep_ not in ("dobj", "dative", "pobj"):
        return set()
    verb = pronoun.head.head if pronoun.dep_ == "pobj" else pronoun.head
    return {t.i for s in verb.children if s.dep_ in _SUBJECT_LABELS for t in s.subtree}


def _names_nothing(root: Token) -> bool:
    """The clause's object is "a/an" and adjectives before a common noun, and nothing else in it says which."""
    objects = [c for c in root.children if c.dep_ in ("dobj", "attr")]
    if len(objects) != 1 or objects[0].pos_ != "NOUN":
        return False
    noun = objects[0]
    article = next((c for c in noun.children if c.dep_ == "det"), None)
    return (article is not None and "Ind" in article.morph.get("Definite")
            and all(c.dep_ in ("det", "amod") for c in noun.children)
            and not any(c.dep_ in ("prep", "xcomp", "ccomp", "advcl") for c in root.children))


def _the_user_garbled(fact: Doc) -> bool:
    """"The user" read as a modifier of the word after it ("The user almosts forgot ..."): the reading garbled the
    sentence, and the clause's subject is no longer the user."""
    return any(t.lower_ == "user" and t.dep_ == "compound" for t in fact)


# What a clause takes that tells more than the moment: an activity or a reason ("started shooting a video", "to
# relax"), what the user is or is like ("is a nurse", "is busy getting ready"), whom it was for.
_TELLS_MORE = frozenset({"xcomp", "ccomp", "advcl", "attr", "acomp", "dative", "oprd", "csubj"})


def _a_passing_moment(root: Token) -> bool:
    """An event or a state of the moment, nothing lasting in it: told in the past, the perfect or as going on (not
    the simple present of a habit or a state, not a passive "is drawn to"), naming nothing and no day, taking no
    clause, and its objects only pronouns or bare nouns with at most an article or a possessive ("just got back
    from a walk", "lost their keys again", "is gaining strength", "was packing their bags")."""
    if root.tag_ not in ("VBD", "VBG", "VBN") or any(c.dep_ == "auxpass" for c in root.children):
        return False
    if any(c.dep_ in _TELLS_MORE for c in root.children) or names_something(root.doc):
        return False
    if any(e.label_ == "DATE" for e in root.doc.ents):
        return False
    objects = [c for c in root.children if c.dep_ == "dobj"]
    objects += [o for p in root.children if p.dep_ == "prep" for o in p.children if o.dep_ == "pobj"]
    return all(o.pos_ == "PRON" or (o.pos_ == "NOUN" and not o.ent_type_
                                    and all(c.dep_ in ("det", "poss") for c in o.children)) for o in objects)


def _going_on_back_then(root: Token) -> bool:
    """Told as going on at a moment past ("was thinking more about ...", "were all ordering the spicy broth"): the
    past progressive sets a scene, it tells no lasting fact (what lasts is told in the simple past or present)."""
    return root.tag_ == "VBG" and any(c.dep_ == "aux" and c.tag_ == "VBD" for c in root.children)


def _a_request(token: Token) -> bool:
    """An imperative: a verb in its base form heading a clause with no subject and no auxiliary ("Rewrite this",
    "please translate"); not an infinitive ("to amend") nor a verb another one takes ("let me go")."""
    return (token.tag_ == "VB" and token.dep_ in ("ROOT", "advcl", "ccomp", "conj", "parataxis")
            and not any(c.dep_ in ("nsubj", "nsubjpass", "aux", "auxpass", "mark", "expl") for c in token.children)
            and not (token.dep_ == "ccomp" and token.head.lemma_ in ("let", "make", "help")))


# Verbs that set up a frame when the user asks for them ("let's pretend", "imagine you are", "practise with me"):
# what the user says in it is a part played, not their life. Read only as a request (no subject of its own, or
# "let's"), so "I practise yoga" is no frame.
_FRAME_VERBS = frozenset({"pretend", "imagine", "roleplay", "role-play", "practise", "practice", "simulate",
                          "rehearse"})


def sets_a_frame(turn: Doc) -> bool:
    """Whether a turn of the user's sets up role-play, practice or make-believe: a request to pretend, imagine or
    practise ("Let's pretend you're my landlord", "Imagine you are a recruiter"), or to speak as someone ("Reply as
    Simone", "Act as a hiring manager and interview me"): a verb asked for, with no subject of its own, that takes
    "as" and a role."""
    for token in turn:
        subjects = [c for c in token.children if c.dep_ in _SUBJECT_LABELS]
        asked = token.dep_ in ("ROOT", "conj", "ccomp", "xcomp") and all(s.lower_ in ("'s", "us") for s in subjects)
        if not asked or token.pos_ not in ("VERB", "PROPN", "NOUN") or not _first_word(token):
            continue
        if token.lemma_.lower() in _FRAME_VERBS or any(
                c.dep_ == "prep" and c.lower_ == "as" and any(o.dep_ in ("pobj", "nsubj") for o in c.children)
                for c in token.children):
            return True
    return False


def _first_word(verb: Token) -> bool:
    """Whether a requested verb opens its clause: before it only "please", "let's", "now", an address ("Hi Rex,") or
    punctuation, so "reply as" in "Simone, please reply as ..." is asked, and "as" in "... went as a pirate" is not."""
    return all(c.dep_ in ("intj", "punct", "advmod", "npadvmod", "cc", "aux", "neg", "dep")
               or (c.dep_ in _SUBJECT_LABELS and c.lower_ in ("'s", "us")) for c in verb.lefts)


def fact_confidence(prior: float, conversations: int) -> float:
    """A fact's confidence from its best reading's prior and the number of conversations that said it."""
    return round(1.0 - (1.0 - prior) ** max(1, conversations), 6)


def shown(threshold: float) -> pl.Expr:
    """Rows of `facts/facts` shown to the agent: confident enough, or backed by the user's word (an override)."""
    backed = (pl.col("source_interface") == "override") | (pl.col("override_ids").list.len() > 0)
    return (pl.col("confidence") >= threshold) | backed.fill_null(False)
