"""Words of a text as the readers check them without a parse: whole words and phrases in any case (`Words`), and
where a word stands (`word_runs`, `first_of`). For word lists a reader looks for, in place of a regular expression
spelling the same list."""

from __future__ import annotations


def letter_words(text: str) -> list[str]:
    """The words of a text in lower case, as runs of letters ("I'm" is "i", "m"; "e-mail" is "e", "mail")."""
    found, word = [], []
    for ch in f"{text} ":
        if ch.isalpha():
            word.append(ch)
        elif word:
            found.append("".join(word).lower())
            word = []
    return found


class Words:
    """Words and phrases to look for in a text, whole and in any case: `search` anywhere, `opens` at its start."""

    def __init__(self, words: str, *phrases: str) -> None:
        self.words = frozenset(words.split())
        self.phrases = tuple(tuple(letter_words(p)) for p in phrases)

    def search(self, text: str) -> bool:
        said = letter_words(text)
        return not self.words.isdisjoint(said) or any(
            tuple(said[i:i + len(p)]) == p for p in self.phrases for i in range(len(said)))

    def opens(self, text: str) -> bool:
        said = letter_words(text)
        return bool(said) and (said[0] in self.words or any(tuple(said[:len(p)]) == p for p in self.phrases))


def word_runs(text: str) -> list[tuple[int, int]]:
    """Where each run of word characters (letters, digits, "_") starts and ends in a text."""
    runs, start = [], None
    for i, ch in enumerate(f"{text} "):
        inside = ch.isalnum() or ch == "_"
        if inside and start is None:
            start = i
        elif not inside and start is not None:
            runs.append((start, i))
            start = None
    return runs


def first_of(text: str, words: frozenset[str]) -> tuple[int, int] | None:
    """Where the first of `words` (as written, whole) is in a text."""
    return next(((a, b) for a, b in word_runs(text) if text[a:b] in words), None)


def from_the_first_word(text: str) -> str:
    """The text from its first letter or digit on (no leading marks: "- I adopted ...", "...so I ...")."""
    return next((text[i:] for i, ch in enumerate(text) if ch.isalnum()), "")


def has_a_gap(text: str, marks: str = "") -> bool:
    """Whether a text has two spaces inside it (where a quoted title was cut out), or one of `marks`."""
    inner = text.strip()
    doubled = any(a.isspace() and b.isspace() for a, b in zip(inner, inner[1:], strict=False))
    return doubled or any(m in inner for m in marks)


_INTERJECTIONS = frozenset("""yeah yes yep wow oh ooh ah well honestly actually haha lol so and but um hey omg anyway
    btw also plus then ok okay right true totally hmm hi hello thanks cool nice awesome great sure indeed
    absolutely""".split())  # noqa: SIM905


def without_interjections(text: str) -> str:
    """The text after the words that only open it ("Yeah, honestly I ...", "Aww thank you! I ...")."""
    i = 0
    while True:
        j = i
        while j < len(text) and text[j].isalpha():
            j += 1
        word = text[i:j].lower()
        if word == "thank" and text[j:j + 4].lower() == " you":
            word, j = "thank you", j + 4
        ends = j == len(text) or not (text[j].isalnum() or text[j] == "_")
        if not ends or not (word in _INTERJECTIONS or word == "thank you" or (
                len(word) > 1 and word[0] == "a" and set(word[1:]) == {"w"})):
            return text[i:]
        while j < len(text) and text[j] in "!,.":
            j += 1
        while j < len(text) and text[j].isspace():
            j += 1
        i = j
