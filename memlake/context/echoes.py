"""Text copied from a context block, found in a model's answer, so that what memlake stored itself is never
stored again as conversation (the proxy feeding memory back into memory, issue 43).

A model may repeat the block whole, in part, quoted in JSON (escaped once or many times, `\\n` for its line
breaks), with its HTML escapes undone, or wrapped in markup of its own. So both texts are compared as runs of
words: lowercased letters and digits, with escape sequences (`\\n`, `\\u00e9`, `&quot;`, `&amp;quot;`) read as
separators, like the spaces and punctuation around them. A span of the answer is a copy when it reproduces
`COPIED_RUN` consecutive words of the block, or a whole block line of at least `SHORTEST_LINE` words (a short
fact said back word for word). Fewer shared words are ordinary language ("I live in", "your tea") and stay.
"""

from __future__ import annotations

import html
import re
from typing import NamedTuple

COPIED_RUN = 5  # consecutive words of the block: a copy, not a phrase that happens to recur
SHORTEST_LINE = 3  # a block line this long or longer, repeated whole, is a copy even if under COPIED_RUN
# escapes that glue a letter to the next word: JSON's \n, \t, \u00e9 (after any run of backslashes, for copies
# quoted again and again) and HTML entities (&quot;, &#96;, &amp;quot;); read as separators
_ESCAPE = re.compile(r"\\+(?:u[0-9a-fA-F]{4}|[nrtbf])|&(?:amp;)*(?:[a-zA-Z]+|#[0-9]+|#[xX][0-9a-fA-F]+);")
_WORD = re.compile(r"[^\W_]+")  # letters and digits: markup, quotes and backslashes separate words
_TAG = re.compile(r"<[^<>]*>")  # the block's own markup (a memory's tag and its said date), around a line's text


class _Word(NamedTuple):
    start: int
    end: int
    key: str  # lowercased letters and digits, escapes decoded: "caf\\u00e9" and "caf&eacute;" are "café"


def _decoded(escape: str) -> str:
    """What one escape stands for: a JSON \\uXXXX its character, \\n and friends a space, an HTML entity (escaped
    again and again: &amp;amp;quot;) its character."""
    if escape.startswith("\\"):
        tail = escape.lstrip("\\")
        return chr(int(tail[1:], 16)) if tail[0] == "u" else " "
    while "&amp;" in escape:
        escape = escape.replace("&amp;", "&", 1)
    return html.unescape(escape)


def _words(text: str) -> list[_Word]:
    """The words of `text`. An escape that stands for a letter or digit is part of its word (a copy quoted in
    JSON keeps "café" one word), any other escape separates words, like the spaces and punctuation around it."""
    masked = _ESCAPE.sub(lambda m: ("a" if _decoded(m.group()).isalnum() else " ") * len(m.group()), text)
    found = []
    for match in _WORD.finditer(masked):
        said = _ESCAPE.sub(lambda m: _decoded(m.group()), text[match.start():match.end()])
        found.append(_Word(match.start(), match.end(), "".join(c for c in said if c.isalnum()).lower()))
    return found


def _copied_runs(block: str) -> set[tuple[str, ...]]:
    """What counts as copied from `block`: every run of COPIED_RUN consecutive words (across its lines), and
    every whole line (its text, without the markup around it) of SHORTEST_LINE words or more."""
    words = [w.key for w in _words(block)]
    runs = {tuple(words[at:at + COPIED_RUN]) for at in range(len(words) - COPIED_RUN + 1)}
    for line in block.splitlines():
        said = tuple(w.key for w in _words(_TAG.sub(" ", line)))
        if SHORTEST_LINE <= len(said) < COPIED_RUN:
            runs.add(said)
    return runs


def strip_block_copies(answer: str, block: str) -> str:
    """`answer` without the spans that copy `block` (see the module doc); the markup and escapes glued to a
    copied span go with it, and a span cut between two kept words leaves one space."""
    words = _words(answer)
    lowered = [w.key for w in words]
    runs = _copied_runs(block)
    lengths = sorted({len(run) for run in runs}, reverse=True)
    copied = [False] * len(words)
    for at in range(len(words)):
        for length in lengths:
            if tuple(lowered[at:at + length]) in runs:
                copied[at:at + length] = [True] * length
                break
    if not any(copied):
        return answer
    kept: list[str] = []
    end = 0  # where the kept text resumes
    at = 0
    while at < len(words):
        if not copied[at]:
            at += 1
            continue
        last = at
        while last + 1 < len(words) and copied[last + 1]:
            last += 1
        start, stop = _glued(answer, words[at].start, words[last].end)
        kept.append(answer[end:start])
        if kept[-1] and not kept[-1][-1].isspace() and stop < len(answer) and not answer[stop].isspace():
            kept.append(" ")
        end, at = stop, last + 1
    kept.append(answer[end:])
    return "".join(kept)


def _glued(text: str, start: int, stop: int) -> tuple[int, int]:
    """`text[start:stop]` widened over the markup, quotes and escapes touching it (no space between)."""
    while start > 0 and not text[start - 1].isspace() and not _WORD.match(text[start - 1]):
        start -= 1
    while stop < len(text) and not text[stop].isspace() and not _WORD.match(text[stop]):
        stop += 1
    return start, stop
