"""Word-level text similarity: the one `jaccard` every part of memlake uses.

A text's content words are its lowercased Unicode words (`\\w+`, casefolded)
without stopwords. Negations are content words ("n't" becomes "not"), so
"I like coffee" and "I don't like coffee" do not look alike. Single letters
are dropped (what is left of "I'm", "it's"), digits are kept ("March 4").

The stopword list is English function words plus the words every distilled
fact shares ("user", from "The user lives in Lisbon.") and a few verbs of
liking that carry no object ("likes", "loves", "enjoys", "prefers"), so two
facts that share only "the user likes" are not alike, and "likes cycling" is
the same as "enjoys cycling".
"""

from __future__ import annotations

import re
import unicodedata

_WORD = re.compile(r"\w+", re.UNICODE)
_NOT_CONTRACTION = re.compile(r"(\w)n['’]t\b", re.UNICODE | re.IGNORECASE)
_SPECIAL_NOT = {"can't": "can not", "won't": "will not", "can’t": "can not", "won’t": "will not"}

NEGATIONS = frozenset({"not", "no", "never", "nor", "none", "nothing", "neither", "nobody", "nowhere", "cannot"})

_STOPWORD_TEXT = """
a about above after again against all am an and any are as at be because been before being below
between both but by could did do does doing down during each few for from further had has have having
he her here hers herself him himself his how i if in into is it its itself just me more most my myself
of off on once only or other our ours ourselves out over own same she should so some such than that the
their theirs them themselves then there these they this those through to too under until up very was we
were what when where which while who whom why will with would you your yours yourself yourselves
also am im ive id ill really actually currently now still already quite rather much many lot lots
can may might must shall
s t d ll m re ve o y
user users user's
like likes liked love loves loved enjoy enjoys enjoyed prefer prefers preferred fan
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def _normalize(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    for contraction, expanded in _SPECIAL_NOT.items():
        text = text.replace(contraction, expanded)
    return _NOT_CONTRACTION.sub(r"\1 not", text)


def words(text: str | None) -> list[str]:
    """The lowercased Unicode words of `text`, in order, negations spelled out."""
    if not text:
        return []
    return _WORD.findall(_normalize(text))


def content_words(text: str | None) -> set[str]:
    """The words of `text` that carry meaning: stopwords and single letters removed."""
    return {w for w in words(text) if w not in STOPWORDS and (len(w) > 1 or w.isdigit())}


def is_negated(text: str | None) -> bool:
    """Whether `text` holds a negation word (not, no, never, …)."""
    return any(w in NEGATIONS for w in words(text))


def jaccard(a: str | None, b: str | None) -> float:
    """Jaccard similarity of the content words of `a` and `b` (0.0 when either has none)."""
    wa, wb = content_words(a), content_words(b)
    if not wa or not wb:
        return 0.0
    return len(wa & wb) / len(wa | wb)
