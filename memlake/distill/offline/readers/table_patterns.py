"""The pieces the reader table's rows are built from: a row (`Reading`), the pattern nodes, and what a matched
clause says (whose it is, its name, the rest of the clause). The rows live in table.py (the people) and table_self.py
(the user's own); both import these, and table.py gathers them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from spacy.tokens import Token

Pattern = list[dict[str, Any]]

_NAME = {"POS": "PROPN"}
_VERB_POS = {"IN": ["VERB", "AUX"]}


def _verb(*lemmas: str) -> dict[str, Any]:
    return {"RIGHT_ID": "anchor", "RIGHT_ATTRS": {"LEMMA": {"IN": list(lemmas)}, "POS": _VERB_POS}}


def _child(left: str, right: str, **attrs: Any) -> dict[str, Any]:
    return {"LEFT_ID": left, "REL_OP": ">", "RIGHT_ID": right, "RIGHT_ATTRS": attrs}


def _prep(left: str, right: str, *words: str) -> dict[str, Any]:
    return _child(left, right, DEP="prep", LOWER={"IN": list(words)})


def _mine(home: str) -> dict[str, Any]:
    return _child(home, "owner", DEP="poss", LOWER={"IN": ["my", "our"]})


@dataclass(frozen=True)
class Reading:
    """One row: a pattern over a sentence's parse, and the slot its values fill."""

    name: str
    slot: str | None  # home_city, employer, job_title; None for a taste
    patterns: tuple[Pattern, ...]
    change: bool = False  # a move or a start: the value holds from the day the sentence says it happened
    taste: str | None = None  # "likes", "prefers" or "dislikes": a preference about the value, whenever it began
    event: str | None = None  # an event of the user's working life ("left", "interview"): an event, no slot


def _rest_of_clause(anchor: Token, value: Token) -> str:
    """The words of the clause after the value: where the day of a move is said ("... to Leeds last spring")."""
    end = max(t.i for t in (_verb_of(anchor) or anchor).subtree) + 1
    return anchor.doc[value.i + 1:end].text


def _name(token: Token) -> str:
    """A name with the words compounded onto it ("San Sebastian", "Umbrella Corp")."""
    words = [t for t in token.subtree if t.i <= token.i and (t.dep_ in ("compound", "flat") or t.i == token.i)]
    start = min(t.i for t in words)
    return token.doc[start:token.i + 1].text


def _verb_of(anchor: Token) -> Token | None:
    """The verb of the clause the anchor is in: itself, or the verb a noun hangs on ("made the move")."""
    return anchor if anchor.pos_ in ("VERB", "AUX") else next(
        (t for t in anchor.ancestors if t.pos_ in ("VERB", "AUX")), None)


# A sentence opening on its verb, its "I" left out as chat leaves it ("Picked up the keys to ...", "Finally moved to
# Seattle!", "Now living in Oslo"): what may come before the verb.
_LEFT_OUT = "(I left out)"
_LEADING = frozenset({"advmod", "intj", "punct", "cc", "aux", "auxpass"})  # (and "Got promoted to ...")


def _subject(verb: Token) -> str | None:
    """Who the clause's verb is said of, also when it shares the subject of the clause before it."""
    for token in (verb, *verb.ancestors):
        subject = next((c for c in token.children if c.dep_ in ("nsubj", "nsubjpass")), None)
        if subject is not None:  # "My husband and I were relocated": the user with another, as "we"
            return "we" if any(c.dep_ == "conj" and c.lower_ in ("i", "me") for c in subject.children) else (
                subject.lower_)
        if token.dep_ == "ROOT" and token.tag_ in ("VBD", "VBN", "VBG") and all(
                t.dep_ in _LEADING for t in token.doc[token.sent.start:token.i]):
            return _LEFT_OUT
        if token.dep_ not in ("conj", "xcomp", "advcl") or token.head.i == token.i:
            return None
    return None
