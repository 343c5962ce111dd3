"""A self-statement that stands alone once the same message says what its title, "you" or "it" is.

The self-statement reader leaves out a sentence that points at something only the chat shows, and rightly: "I loved
it" is no memory. But many such sentences name their thing in the same message, only in a shape the rules cannot
read (issue 23: most of what LoCoMo's speakers say about themselves that reaches no fact is of this kind):

- a title in quotes is a name: "I loved "Becoming Nicole" by Amy Ellis Nutt" (the clause readers drop quoted text,
  which is mostly speech, and with it the thing the user loved);
- "you" is the other side of the chat, by name when the chat has one other named speaker: "I took your
  recommendation and watched "Dune"" is "The user took Nate's recommendation and watched "Dune"" (with no name, an
  assistant, the sentence stays left out);
- "it" is the one title the same message named before: "I finished "Dune". It taught me a lot about patience."

Each sentence that gave no fact is read again with these resolved, by the self-statement reader (so every check of
it and of `worth_keeping` applies), and its facts say the title in quotes. A sentence with nothing to resolve, or
whose "it" has no one title before it, gives nothing here.
"""

from __future__ import annotations

import re
from dataclasses import replace

from memlake.distill.offline.readers.self_statements import read_self_sentence, read_self_statement
from memlake.distill.offline.reading import Rule
from memlake.distill.offline.sentences import display_text, split_clauses
from memlake.distill.offline.worth_keeping import EVALUATIVE, VAGUE_NOUNS
from memlake.text import STOPWORDS

# A title: a capitalised run of at most eight words in quotes ("Becoming Nicole", “The Lord of the Rings”); longer
# quoted text, or text in lower case, is speech.
_TITLE = re.compile(r"[\"“'‘](?P<title>[A-Z0-9][^\"”'’.!?]{0,60}?)[\"”'’](?=\W|$)")
# What a title stands as while the sentence is read: a name no word of English is, one per title in the message.
_STAND_IN = "Qxtitle"
_YOUR = re.compile(r"\byour\b", re.I)
_YOU = re.compile(r"\b(?:you|yours|yourself|u|ya)\b", re.I)
# "it" as a thing (not "it's great to ...", "it was amazing": those are judged as the verdicts they are).
_IT = re.compile(r"\bit\b", re.I)
# The user as the subject, after at most a few words: "Last night I took your advice" (in "Walking boosts your mood"
# "your" is anyone's).
_USER_FIRST = re.compile(r"^(?:[\w'-]+,?\s+){0,4}?(?:I|I'm|I've|We|we|We've|we've)\s")
# A thing the chat shows, with what it is: "I made this painting to show my path" tells of a painting whichever it was;
# opening the sentence, what the user shows is theirs ("This necklace is special to me": the user's necklace). The
# words after the demonstrative up to a stopword or a mark are the thing ("this apple pie").
_THING = r"(?P<thing>(?:(?!(?:[a-z]+ly|[a-z]+ed)\b)[a-z][\w-]*\s?){1,4})"
_DEMONSTRATIVE_OPENING = re.compile(rf"^This {_THING}")  # ("These moments show me ...": which, only the chat says)
_DEMONSTRATIVE = re.compile(rf"(?<!\blike )\b(?P<which>this|that|these|those) {_THING}")
# Verbs of making or getting: what the user made or got is a thing of theirs, whatever it looks like.
_MADE_OR_GOT = re.compile(r"\b(?:made|painted|baked|cooked|built|wrote|drew|knitted|sewed|crafted|created|"
                          r"finished|bought|got|found|took|received|adopted)\s+$")
_TIMES = frozenset(("week", "weekend", "month", "year", "summer", "winter", "spring", "fall", "autumn", "morning",
                    "evening", "afternoon", "night", "semester", "season", "time", "moment", "one", "ones"))
# Tag of a fact read this way: `by_meaning` types and dedupes these by the embedding model.
RESOLVED = "resolved"


def read_with_referents(rule: Rule, other_side: str | None) -> None:
    """Facts of a sentence that gave none, read again with its titles, "you" and "it" resolved from the message."""
    titles = _titles_of(rule.sentence.message.content)
    text = _with_stand_ins(rule.sentence.text, titles)
    other_sides_thing = _YOUR.search(text) is not None
    if other_sides_thing:
        if other_side is None or _YOU.search(text) or not _USER_FIRST.match(text):
            return  # "you" to whom, or the other side in person: thanks, praise, a promise to them
        text = _YOUR.sub(f"{other_side}'s", text)
    if _IT.search(text) and _STAND_IN not in text:  # (after a title of its own, "it" is that title's aside)
        earlier = _titles_before(rule, titles)
        if len(earlier) != 1:
            return  # "it" stands for something only the chat shows
        text = _IT.sub(_stand_in(titles.index(earlier[0])), text)
    text = _DEMONSTRATIVE.sub(_as_a_thing, _DEMONSTRATIVE_OPENING.sub(_as_the_users, text))
    if text == rule.sentence.text:
        return  # nothing resolved: the readers have already read it as it is
    resolved = replace(rule, sentence=replace(rule.sentence, text=text))
    before = len(rule.found.candidates)
    for clause in split_clauses(text):
        read_self_statement(resolved, clause)
    if len(rule.found.candidates) == before:
        read_self_sentence(resolved)
    if other_sides_thing:  # only what the user did or has with the other side's thing ("took Nate's advice and
        # watched ..."): "Nate's help means a lot" thanks them, "the user loves Nate's turtles" praises, "will send
        # Nate a video" promises, none of it about the user's own life
        rule.found.candidates[before:] = [f for f in rule.found.candidates[before:]
                                          if f.type in ("event", "fact") and f.content.startswith("The user ")]
    for i in range(before, len(rule.found.candidates)):
        fact = rule.found.candidates[i]
        rule.found.candidates[i] = fact.model_copy(update={
            "content": _with_titles(fact.content, titles), "value": _with_titles(fact.value, titles),
            "tags": [*fact.tags, RESOLVED]})


def _titles_of(message: str) -> list[str]:
    return list(dict.fromkeys(m.group("title").strip() for m in _TITLE.finditer(display_text(message))))


def _stand_in(index: int) -> str:
    return f"{_STAND_IN}{chr(ord('a') + index)}"


def _with_stand_ins(text: str, titles: list[str]) -> str:
    for i, title in enumerate(titles):
        text = re.sub(rf"[\"“'‘]{re.escape(title)}[\"”'’]", _stand_in(i), text)
    return text


def _with_titles(text: str, titles: list[str]) -> str:
    for i, title in enumerate(titles):
        text = text.replace(_stand_in(i), f'"{title}"')
    return text


def _titles_before(rule: Rule, titles: list[str]) -> list[str]:
    """The titles the message names before this sentence (a title in the sentence itself is what "it" is not)."""
    before = display_text(rule.sentence.message.content).split(rule.sentence.display, 1)[0]
    return [t for t in titles if t in before and t not in rule.sentence.text]


def _thing_words(match: re.Match[str]) -> list[str]:
    """The words of the thing up to its first stopword: "apple pie" of "this apple pie for the kids"."""
    words = []
    for word in match.group("thing").split():
        if word.lower() in STOPWORDS:
            break
        words.append(word)
    return words


def _as_the_users(match: re.Match[str]) -> str:
    words = _thing_words(match)
    if not words or words[0] in _TIMES:
        return match.group(0)
    return f"My {match.group('thing')}"


def _as_a_thing(match: re.Match[str]) -> str:
    """"this chocolate tart" -> "a chocolate tart" when the thing says what it is (two words or more that are no
    evaluation: not "these little guys"), or the user made or got it; any other ("this genre", "that world": only the
    chat shows which) as it is."""
    words = _thing_words(match)
    said_before = match.string[: match.start()]
    saying = [w for w in words if w.lower() not in EVALUATIVE and w.lower() not in VAGUE_NOUNS]
    if not saying or words[0] in _TIMES or (len(saying) < 2 and not _MADE_OR_GOT.search(said_before)):
        return match.group(0)
    if match.group("which").lower() in ("these", "those"):
        return f"some {match.group('thing')}"
    return f"{'an' if words[0][0] in 'aeiou' else 'a'} {match.group('thing')}"
