"""A taste told with its change, in one sentence or two of a message: "I used to adore mushrooms but now I can't stand
them", "I've gone off tea", "I never enjoyed opera, but lately I've been loving it", "Anchovies used to be my least
favourite, now I can't get enough of them". Read over the parse (`memlake.nlp`): each clause of the user's that states
a taste gives its polarity (likes or dislikes), what it is of (a pronoun takes the thing of the taste before it), and
when it held: before ("used to", a plain past) or now. The taste now is written as current; the opposite one it
replaced is kept ended on the day it was said, so history holds both and the fold shows only the new one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memlake.distill.offline.readers.preferences import preference_tags
from memlake.distill.offline.readers.table import inflections, words_of
from memlake.distill.offline.reading import Rule
from memlake.distill.offline.sentences import third_person
from memlake.distill.offline.vocabulary import HYPOTHETICAL, REPORTED
from memlake.nlp import parse, tense_of

if TYPE_CHECKING:
    from spacy.tokens import Token

# Verbs of taste and the polarity each says (a denial turns it: "never liked" is a dislike).
LIKING = {"like": True, "love": True, "enjoy": True, "adore": True, "prefer": True,
          "hate": False, "dislike": False, "detest": False, "loathe": False}
# States of taste said with "be": "was really into podcasts", "was obsessed with jazz".
_KEEN = {"into": None, "obsessed": "with", "crazy": "about", "mad": "about", "fond": "of", "keen": "on"}
_POINTERS = frozenset({"it", "them", "that", "those", "these", "this"})
_USER = frozenset({"i", "we"})
_CUE_WORDS = frozenset({form for lemma in (*LIKING, "stand", "go") for form in inflections(lemma)}
                       | set(_KEEN) | {"favourite", "favorite", "enough", "off"})
# Words that tell a taste's change: "used to", "never", "gone off", "stopped"; and words of now ("now", "anymore"),
# which tell one only after a taste said in the past ("I always disliked board games but now I enjoy them").
_CHANGE_WORDS = frozenset({"used", "never", "stopped", "stop"})
_GO = frozenset(inflections("go")) | {"went", "gone"}
_NOW_WORDS = frozenset({"now", "anymore", "nowadays", "lately", "recently", "days"})
_PAST_TASTE = frozenset({form for lemma in LIKING for form in inflections(lemma) if form.endswith("ed")} | {"was"})


@dataclass
class _Taste:
    likes: bool
    thing: Token | None  # None: a pronoun or nothing, standing for the taste before it
    held: str  # "before" (a plain past), "ended" ("used to"), "now", "never" (a dislike that holds); "turned": now,
    # and the opposite taste ended


def may_tell_a_taste_change(text: str, after_a_taste: bool = True) -> bool:
    """Whether a sentence may tell a taste and its change, by its words alone; a word of now tells one only after a
    taste said before it in the message (`after_a_taste`) or said in the past in the same sentence. With the default,
    whether it may in some message: the distiller parses such sentences in its one batch."""
    words = {w.lower() for w in words_of(text)}
    tasted = not words.isdisjoint(_CUE_WORDS - _GO - {"off"})
    changed = not words.isdisjoint(_CHANGE_WORDS) or not words.isdisjoint(_NOW_WORDS) and (
        after_a_taste or not words.isdisjoint(_PAST_TASTE))
    return tasted and changed or "off" in words and not words.isdisjoint(_GO)


def read_taste_change(rule: Rule, since: int) -> None:
    """The tastes of a sentence whose change the message tells (see the module docstring); `since` is where the
    sentence's findings begin (what was kept of it as said about the same thing is replaced)."""
    said = _tastes_said_in_message(rule, since)
    if not may_tell_a_taste_change(rule.sentence.text, after_a_taste=bool(said)):
        return  # only a sentence that may tell a taste and its change is parsed ("gone off tea" tells both)
    tastes = [t for v in parse(rule.sentence.text) if (t := _taste_of(v)) is not None]
    told_now = any(t.held in ("now", "turned") for t in tastes)
    for taste in tastes:
        named = _words(taste.thing) if taste.thing is not None else None
        if taste.thing is not None and named is None and taste.thing.lower_ not in _POINTERS:
            continue  # "I never liked him": a person, whom only the chat shows
        thing = named or (said[-1][1] if said else None)  # "... now I love it": the thing of the taste before
        if not thing:
            continue
        if taste.held == "before" and not told_now:
            continue  # "I loved the show as a kid": a past taste alone says nothing of now
        reverses = any(likes != taste.likes and of == thing for likes, of in said)
        if taste.held == "now" and not reverses or taste.held == "never" and not named and not reverses:
            continue  # a taste with no change told: the preference readers read it
        _write(rule, taste, thing, since)
        said.append((taste.likes, thing))


def _taste_of(verb: Token) -> _Taste | None:
    """The taste a clause headed by `verb` states, if it is the user's and said as a fact."""
    if verb.pos_ not in ("VERB", "AUX", "ADJ") or verb.dep_ == "relcl" or tense_of(verb) == "future":
        # ("a beach that I love": the taste of what the clause hangs on, which the preference readers read)
        return None
    before = verb.doc[verb.sent.start:verb.i].text
    if HYPOTHETICAL.search(before) or REPORTED.search(before):
        return None
    used_to = verb.dep_ == "xcomp" and verb.head.lemma_ == "use"
    held = "ended" if used_to else "before" if tense_of(verb) == "past" and verb.tag_ == "VBD" else "now"
    denied = any(c.dep_ == "neg" for c in verb.children)
    lemma = verb.lemma_.lower()
    if lemma in LIKING and _user_says(verb) and not (verb.dep_ == "xcomp" and verb.head.lemma_ == "stop"):
        if any(c.lower_ == "never" for c in verb.children):
            held = "never"  # "I never liked horror films": a dislike that holds
        return _Taste(LIKING[lemma] != denied, _object(verb), held) if _object(verb) is not None else None
    if lemma == "stand" and denied and _user_says(verb) and _object(verb) is not None:  # "I can't stand them"
        return _Taste(False, _object(verb), held)
    if lemma == "get" and denied and any(c.lower_ == "enough" for c in verb.children) and _user_says(verb):
        enough = next(c for c in verb.children if c.lower_ == "enough")  # "I can't get enough of them"
        return _Taste(True, _object(enough), "now")
    if lemma == "go" and any(c.lower_ == "off" for c in verb.children) and _user_says(verb):
        off = next(c for c in verb.children if c.lower_ == "off")  # "I've gone off tea", "we went off sourdough"
        thing = _object(off) or _object(verb, bare=True)
        return _Taste(False, thing, "turned") if thing is not None else None
    if lemma == "stop" and _user_says(verb):  # "I stopped enjoying crime novels"
        liking = next((c for c in verb.children if c.dep_ == "xcomp" and c.lemma_.lower() in LIKING), None)
        return _Taste(not LIKING[liking.lemma_.lower()], _object(liking), "turned") if liking is not None else None
    if lemma == "be" and _user_says(verb) and not denied:  # "I was really into podcasts"
        for c in verb.children:
            word = c.lower_
            if word in _KEEN and (_KEEN[word] is None or c.dep_ in ("acomp", "oprd")):
                target = c if _KEEN[word] is None else next((p for p in c.children if p.lower_ == _KEEN[word]), None)
                return _Taste(True, _object(target) if target is not None else None, held) if target else None
    if lemma == "be" and used_to:  # "Anchovies used to be my least favourite (food)"
        favourite = next((t for t in verb.subtree if t.lower_ in ("favourite", "favorite")), None)
        owner = favourite is not None and any(t.lower_ == "my" for t in verb.subtree)
        thing = next((c for c in verb.head.children if c.dep_ == "nsubj" and c.pos_ in ("NOUN", "PROPN")), None)
        if owner and thing is not None:
            return _Taste(not any(t.lower_ == "least" for t in verb.subtree), thing, "ended")
    return None


def _user_says(verb: Token) -> bool:
    """Whether the user (I or we) is the verb's subject, also one shared with the clause before or left out."""
    for token in (verb, *verb.ancestors):
        subject = next((c for c in token.children if c.dep_ in ("nsubj", "nsubjpass")), None)
        if subject is not None:
            return subject.lower_ in _USER
        if token.dep_ not in ("conj", "xcomp") or token.head.i == token.i:
            return False
    return False


def _object(head: Token | None, *, bare: bool = False) -> Token | None:
    """What a verb or preposition takes: its object ("adore mushrooms", "off tea", "of them"), with `bare` also a
    noun hanging bare on the verb ("gone off tea", parsed as "tea" on "gone"); None for none."""
    if head is None:
        return None
    found = [c for c in head.children if c.dep_ in ("dobj", "pobj", "attr") or c.dep_ == "xcomp" and c.tag_ == "VBG"]
    found += [o for c in head.children if c.dep_ == "prep" and c.lower_ in ("of", "into", "off", "with", "about", "on")
              if (o := _object(c)) is not None]
    found += [c for c in head.children if bare and c.dep_ == "npadvmod" and not any(d.dep_ == "det"
                                                                                     for d in c.children)]
    return found[0] if found else None


def _words(thing: Token) -> str | None:
    """The phrase of what a taste is of ("the beach", "crime novels", "the idea of moving"), without a clause hanging
    on it; None for a pointer ("them", "that show": what only the chat shows)."""
    if thing.lower_ in _POINTERS or thing.pos_ == "PRON" or any(
            c.dep_ == "det" and c.lower_ in _POINTERS for c in thing.children):
        return None
    left_out = {u.i for t in thing.subtree if t.dep_ in ("relcl", "acl", "punct") for u in t.subtree}
    kept = [t for t in thing.subtree if t.i not in left_out]
    words = " ".join(t.text for t in kept)
    if kept[0].i == kept[0].sent.start and kept[0].pos_ != "PROPN":
        words = words[:1].lower() + words[1:]  # "Anchovies used to be ...": no name, no capital
    return third_person(words)


def _tastes_said_in_message(rule: Rule, since: int) -> list[tuple[bool, str]]:
    """The tastes this message stated before this sentence: whether each is a like, and what it is of."""
    return [("dislike" not in c.tags, re.sub(r"^(?:dislikes|no) ", "", c.value)) for c in rule.found.candidates[:since]
            if c.type == "preference" and not c.slot and rule.message_id in c.message_ids]


def _write(rule: Rule, taste: _Taste, thing: str, since: int) -> None:
    lowered = thing.lower()
    mine = [c for c in rule.found.candidates if rule.message_id in c.message_ids and lowered in c.content.lower()]
    # what was kept of the sentence as said about the same thing is replaced by the taste
    rule.found.candidates[:] = [c for c in rule.found.candidates if c not in mine or "said" not in c.tags]
    if taste.held in ("now", "turned", "never"):
        for old in mine:  # the opposite taste said before in this message held until now
            if old.type == "preference" and ("dislike" in old.tags) == taste.likes and old.valid_until is None:
                old.valid_until = rule.said.isoformat()
    if taste.held == "turned":
        _add(rule, not taste.likes, thing, ended=True)
    same = [c for c in mine if c.type == "preference" and ("dislike" not in c.tags) == taste.likes
            and c.valid_until is None]
    if not same:  # a taste turned is said as the state it is now, with its word of an end (the fold ends what else
        # named the thing: "takes oat milk in their coffee"); "has gone off tea" would read as a moment that passed
        _add(rule, taste.likes, thing, ended=taste.held in ("ended", "before"),
             content=f"The user is done with {thing}." if taste.held == "turned" and not taste.likes else None)


def _add(rule: Rule, likes: bool, thing: str, *, ended: bool, content: str | None = None) -> None:
    verb = "like" if likes else "dislike"
    # (said in the past, not "used to": a word of change would make the fold read it as the change itself)
    # (a dislike now as "doesn't like": the small parser reads "The user dislikes espresso" as a noun phrase)
    said = content or (f"The user {verb}d {thing}." if ended else f"The user {verb}s {thing}." if likes else
                       f"The user doesn't like {thing}.")
    tags = preference_tags(thing) if likes else ("dislike", *preference_tags(thing))
    rule.add("preference", thing if likes else f"dislikes {thing}", said, importance=0.6, tags=tags,
             valid_until=rule.said if ended else None)
