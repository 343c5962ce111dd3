"""An answer that repeats a context block, whole or in part, however quoted, loses the copied text and keeps its
own; an answer that only shares ordinary words with the block is kept as it is."""

import html
import json
import re
from datetime import UTC, date, datetime

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from memlake.context.assemble import ContextLine, SectionPlan, assemble
from memlake.context.echoes import strip_block_copies
from memlake.context.escape import PREAMBLE
from memlake.context.gate import decide

MEMORIES = [
    'I moved to Lisbon in March and I work as a nurse at "Santa Maria" hospital.',
    "I live in Porto.",
    "My sister Ana runs a bakery near the river & sells `pastel de nata` every Sunday.",
]


def block_text() -> str:
    lines = [ContextLine(text=t, kind="fact", ref=f"f{at}@1", said_at=datetime(2024, 6, 10, tzinfo=UTC),
                         conversation_ids=("c1",), message_ids=(f"m{at}",)) for at, t in enumerate(MEMORIES)]
    block = assemble(date(2026, 1, 2), decide("where do I live now?"), "compact",
                     [SectionPlan("facts", lines)], 800, lambda text: len(text.split()))
    return str(block.text)


def words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", html.unescape(text.replace("\\n", " ")).lower()))


def holds_none_of_the_block(text: str) -> bool:
    """No memory of the block, nor its preamble or tags, is in `text`, read as plain words."""
    plain = words(text)
    return all(words(said) not in plain for said in [*MEMORIES, PREAMBLE, "memory_context"])


BLOCK = block_text()
COPIES = {
    "the block whole": BLOCK,
    "quoted in JSON, as an echo model sends it": json.dumps([{"role": "system", "content": BLOCK}]),
    "quoted in JSON twice": json.dumps(json.dumps([{"role": "system", "content": BLOCK}])),
    "its HTML escapes undone": html.unescape(BLOCK),
    "in a code fence of its own": f"```xml\n{BLOCK}\n```",
    "as JSON with every non-ASCII letter escaped": json.dumps(BLOCK + " café", ensure_ascii=True),
}


@pytest.mark.parametrize("how", list(COPIES))
def test_a_copy_of_the_whole_block_goes_and_the_answers_own_words_stay(how: str) -> None:
    answer = f"Sure, here is what I was given:\n{COPIES[how]}\nAnything else about your garden?"
    kept = strip_block_copies(answer, BLOCK)
    assert holds_none_of_the_block(kept), kept
    assert kept.startswith("Sure, here is what I was given:") and kept.endswith("Anything else about your garden?")


@pytest.mark.parametrize("answer, gone, stays", [
    ('You said "I moved to Lisbon in March and I work as a nurse" earlier, so: welcome to Lisbon!',
     "moved to Lisbon in March", "welcome to Lisbon!"),
    ("Memory says &lt;m said=&quot;2024-06-10&quot;&gt;I live in Porto.&lt;/m&gt; - shall I plan a trip?",
     "live in Porto", "shall I plan a trip?"),
    ("Your sister Ana runs a bakery near the river, doesn't she? Tell her hi.", "Ana runs a bakery near the river",
     "Tell her hi."),
    ("Noted: I live in Porto. What else?", "live in Porto", "What else?"),
])
def test_a_part_of_the_block_said_back_goes(answer: str, gone: str, stays: str) -> None:
    kept = strip_block_copies(answer, BLOCK)
    assert words(gone) not in words(kept) and kept.endswith(stays), kept


@pytest.mark.parametrize("answer", [
    "I live in a small flat and I drink coffee, not tea.",
    "You work as a teacher in Lisbon, I think, and your sister bakes.",
    "Today is a good day to visit the river in Porto.",
    "The nurse at the hospital said March is busy.",
    "",
])
def test_an_answer_that_only_shares_ordinary_words_is_kept_as_it_is(answer: str) -> None:
    assert strip_block_copies(answer, BLOCK) == answer


VOCABULARY = ["tea", "Porto", "sister", "bakery", "nurse", "March", "runs", "lives", "café", "O'Brien", "5th",
              "&", "<b>", '"quoted"', "`code`", "\\", "über", "2024"]
QUOTINGS = {"as is": lambda text: text, "JSON": json.dumps, "JSON twice": lambda text: json.dumps(json.dumps(text)),
            "unescaped": html.unescape, "ASCII JSON": lambda text: json.dumps(text, ensure_ascii=True)}


@given(st.lists(st.lists(st.sampled_from(VOCABULARY), min_size=5, max_size=14).map(" ".join), min_size=1,
                max_size=5), st.sampled_from(list(QUOTINGS)))
@example(memories=["café tea tea tea tea café"], quoting="JSON")  # a letter escaped inside a word
@settings(max_examples=60, deadline=None)
def test_whatever_the_memories_and_the_quoting_no_five_words_of_a_memory_survive(memories: list[str],
                                                                                 quoting: str) -> None:
    lines = [ContextLine(text=t, kind="fact", ref=f"f{at}@1", said_at=datetime(2024, 6, 10, tzinfo=UTC),
                         conversation_ids=("c1",), message_ids=(f"m{at}",)) for at, t in enumerate(memories)]
    block = str(assemble(date(2026, 1, 2), decide("tea?"), "compact", [SectionPlan("facts", lines)], 10_000,
                         lambda text: len(text.split())).text)
    kept = strip_block_copies(f"Before it. {QUOTINGS[quoting](block)} After it.", block)
    said = words(kept).split()
    for memory in memories:
        remembered = words(memory).split()
        runs = {tuple(remembered[at:at + 5]) for at in range(len(remembered) - 4)}
        assert not runs & {tuple(said[at:at + 5]) for at in range(len(said) - 4)}, kept
    assert kept.startswith("Before it.") and kept.endswith("After it.")
