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
from memlake.distill.offline.sentences import display_text, split_clauses, split_sentences
from memlake.distill.offline.worth_keeping import EVALUATIVE, VAGUE_NOUNS, why_not_worth_keeping
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
# ("These moments show me ...": which, only the chat says; "This feels like ...", "This will help": a verb, no thing)
_DEMONSTRATIVE_OPENING = re.compile(rf"^This (?!(?:[a-z]+[^su\W]s|is|was|will|would|can|could|should|might|must|"
                                    rf"has|had|isn't|wasn't)\b){_THING}")
# What says a thing the sentence opens on is the user's: "This necklace is special to me", "This is the scarf I knit"
# ("This blueprint is sharp, my guy!" speaks of the chat's own work, "my guy" to the other side).
_THE_USERS = re.compile(r"\b(?:me|mine|myself|I|I'm|I've|I'd|my(?! (?:guy|man|dude|friend|dear|love|god|goodness|"
                        r"bad)\b))\b")
_DEMONSTRATIVE = re.compile(rf"(?<!\blike )\b(?P<which>this|that|these|those) {_THING}")
# Verbs of making or getting: what the user made or got is a thing of theirs, whatever it looks like.
_MADE_OR_GOT = re.compile(r"\b(?:made|painted|baked|cooked|built|wrote|drew|knitted|sewed|crafted|created|"
                          r"finished|bought|got|found|took|received|adopted)\s+$")
_TIMES = frozenset(("week", "weekend", "month", "year", "summer", "winter", "spring", "fall", "autumn", "morning",
                    "evening", "afternoon", "night", "semester", "season", "time", "moment", "one", "ones"))
# "It" opening a sentence as the subject of a verb of its own ("It meets on Thursdays", "It taught me patience"); "it's
# great to ...", "it was amazing" have no thing for a subject.
_IT_DOES = re.compile(r"^It (?!(?:is|was|'s|has been|had been|seems|seemed|feels|felt|looks|sounds|means|would|could|"
                      r"might|must|can|will)\b)(?:\w+ly )?[a-z]+\b")
# One thing the user's sentence names after its verb: "I joined a book club", "We went to an open mic".
_A_THING_AFTER_THE_VERB = re.compile(r"^(?:[\w'-]+,?\s+){0,3}?(?:I|We|we)\s+(?:just\s+|finally\s+|recently\s+)?"
                                     r"[a-z]+\s+(?:(?:to|into|at|in|on|for|with|up|out)\s+)?an?\s+((?:[A-Za-z][\w-]*\s?){1,9})")
_PLACE_OF = ("at", "in", "on", "from", "of", "with", "about")
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
    names = {_stand_in(i): f'"{title}"' for i, title in enumerate(titles)}
    if _IT.search(text) and _STAND_IN not in text:  # (after a title of its own, "it" is that title's aside)
        earlier = _titles_before(rule, titles)
        thing = _thing_said_just_before(rule) if not earlier else None
        if len(earlier) == 1:
            text = _IT.sub(_stand_in(titles.index(earlier[0])), text)
        elif thing is not None and _IT_DOES.match(text) and len(_IT.findall(text)) == 1:
            names[_stand_in(len(titles))] = thing  # "I joined a book club. It meets on Thursdays."
            text = _stand_in(len(titles)) + text[2:]
        else:
            return  # "it" stands for something only the chat shows
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
        # ("The user values Nate's opinion": with the other side's thing set aside, nothing of the user's is named)
        rule.found.candidates[before:] = [
            f for f in rule.found.candidates[before:]
            if f.type in ("event", "fact") and f.content.startswith("The user ")
            and why_not_worth_keeping(re.sub(rf"\b{re.escape(other_side or '')}'s [\w-]+", "",
                                             f.content[len("The user "):])) is None]
    for i in range(before, len(rule.found.candidates)):
        fact = rule.found.candidates[i]
        rule.found.candidates[i] = fact.model_copy(update={
            "content": _with_names(fact.content, names), "value": _with_names(fact.value, names),
            "tags": [*fact.tags, RESOLVED]})


def _titles_of(message: str) -> list[str]:
    return list(dict.fromkeys(m.group("title").strip() for m in _TITLE.finditer(display_text(message))))


def _stand_in(index: int) -> str:
    return f"{_STAND_IN}{chr(ord('a') + index)}"


def _with_stand_ins(text: str, titles: list[str]) -> str:
    for i, title in enumerate(titles):
        text = re.sub(rf"[\"“'‘]{re.escape(title)}[\"”'’]", _stand_in(i), text)
    return text


def _with_names(text: str, names: dict[str, str]) -> str:
    for stand_in, name in names.items():
        text = text.replace(stand_in, name)
    return text[:1].upper() + text[1:]


def _thing_said_just_before(rule: Rule) -> str | None:
    """"the book club" when the sentence before, in the same message, is the user's and names one thing after its
    verb with "a"/"an" ("I joined a book club last month"): the thing an "it" opening the next sentence stands for."""
    sentences = [s.text for s in split_sentences(rule.sentence.message)]
    index = next((i for i, s in enumerate(sentences) if s == rule.sentence.text), 0)
    if index == 0:
        return None
    things = _A_THING_AFTER_THE_VERB.findall(sentences[index - 1])
    if len(things) != 1:
        return None
    words: list[str] = []
    for word in things[0].split():
        lowered = word.lower()
        if lowered in _PLACE_OF and words and words[-1] not in _PLACE_OF:
            words.append(word)  # "a meaningful experience at a military memorial": where or of what, part of it
        elif lowered in ("a", "an", "the") and words and words[-1] in _PLACE_OF:
            words.append(word)
        elif lowered in STOPWORDS or lowered in ("last", "next", "every", "yesterday", "today", "ago"):
            break  # ("a support group last week": the thing ends where its time begins)
        else:
            words.append(word)
    while words and (words[-1] in _PLACE_OF or words[-1] in ("a", "an", "the")):
        words.pop()
    saying = [w for w in words if w.lower() not in EVALUATIVE and w.lower() not in VAGUE_NOUNS]
    return f"the {' '.join(words)}" if saying else None


def _titles_before(rule: Rule, titles: list[str]) -> list[str]:
    """The titles the message names before this sentence (a title in the sentence itself is what "it" is not)."""
    return [t for t in titles if t in rule.said_before and t not in rule.sentence.text]


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
    if not [w for w in words if w.lower() not in EVALUATIVE and w.lower() not in VAGUE_NOUNS] or words[0] in _TIMES \
            or not _THE_USERS.search(match.string[match.start("thing"):]):
        return match.group(0)  # ("This photo is from a special day": what it shows, only the chat says)
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
