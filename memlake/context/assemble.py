"""The context block: the date, then sections of memory lines, cut to a budget of real tokens (and, in full
mode, each section to its own).

A line goes in only if the whole block, counted again with it, stays within the budget; a line that does not
fit is left out and a shorter one after it may still go in. Lines keep their order: the caller ranks them
(current facts before history, best match first).

The block is its rows joined by line breaks, and the packaged tokenizer splits text at whitespace before it
tokenizes, so the block's count is the sum of its rows' counts: each row is counted once, instead of the whole
block again for every line tried (that recounting took most of a context call at 800 tokens).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from datetime import date, datetime
from typing import Any

from memlake.context.escape import BLOCK_CLOSE, BLOCK_OPEN, PREAMBLE, memory_line
from memlake.context.gate import GateDecision
from memlake.errors import BadRequest

CountTokens = Callable[[str], int]


@dataclass(frozen=True)
class ContextLine:
    """One memory in the block, with where it came from."""

    text: str  # as stored; escaped only when rendered
    kind: str  # fact | episode | turn
    ref: str  # a fact's `fact_id@version`, or a search hit's `key`
    said_at: datetime | None
    conversation_ids: tuple[str, ...]
    message_ids: tuple[str, ...]
    until: datetime | None = None  # set on a superseded value: when it stopped being true

    def rendered(self) -> str:
        return memory_line(self.text, _day(self.said_at), _day(self.until))


@dataclass(frozen=True)
class ContextSection:
    name: str
    lines: tuple[ContextLine, ...]
    left_out: int  # lines that did not fit the budget


@dataclass(frozen=True)
class ContextBlock:
    """What `Memory.context` returns: the text to put before the model, its sections and their sources."""

    text: str
    token_count: int
    budget: int
    mode: str
    today: date
    gate: GateDecision
    sections: tuple[ContextSection, ...]

    @property
    def provenance(self) -> list[dict[str, Any]]:
        """Every line of the block with its section and sources, in block order."""
        return [{"section": s.name, **_line_dict(line)} for s in self.sections for line in s.lines]

    def as_dict(self) -> dict[str, Any]:
        return {
            "text": self.text, "token_count": self.token_count, "budget": self.budget, "mode": self.mode,
            "today": self.today.isoformat(), "gate": asdict(self.gate),
            "sections": [{"name": s.name, "left_out": s.left_out, "lines": [_line_dict(x) for x in s.lines]}
                         for s in self.sections],
        }


def _day(moment: datetime | None) -> str:
    return f"{moment:%Y-%m-%d}" if moment is not None else ""


def _line_dict(line: ContextLine) -> dict[str, Any]:
    row = asdict(line)
    row["said_at"] = line.said_at.isoformat() if line.said_at else None
    row["until"] = line.until.isoformat() if line.until else None
    row["conversation_ids"], row["message_ids"] = list(line.conversation_ids), list(line.message_ids)
    return row


def _render(today: date, sections: Iterable[tuple[str, list[ContextLine]]]) -> str:
    body = [f"## {name}\n" + "\n".join(line.rendered() for line in lines) for name, lines in sections if lines]
    return "\n".join([f"Today is {today:%Y-%m-%d} (UTC).", BLOCK_OPEN, PREAMBLE, *body, BLOCK_CLOSE])




@dataclass(frozen=True)
class SectionPlan:
    """A section's candidate lines, best first, and its own budget (None: only the block's)."""

    name: str
    lines: list[ContextLine]
    budget: int | None = None


def _same_memory(line: ContextLine) -> tuple[str, ...]:
    """What makes two lines the same memory: a fact version, or one conversation's summary, or a search key."""
    return ("episode", *line.conversation_ids) if line.kind == "episode" else (line.kind, line.ref)


def assemble(
    today: date, gate: GateDecision, mode: str, plans: list[SectionPlan], budget: int, count_tokens: CountTokens,
) -> ContextBlock:
    """The block: the date, then each planned section in order, a line in only while both its section's budget
    and the block's hold, and only if no section above already holds the same memory."""
    block_tokens = count_tokens(_render(today, []))
    if block_tokens > budget:
        raise BadRequest(f"a context budget of {budget} tokens is too small: the date and the delimiters alone "
                         f"take {block_tokens}")
    kept: list[tuple[str, list[ContextLine]]] = [(plan.name, []) for plan in plans]
    left_out = [0] * len(plans)
    seen: set[tuple[str, ...]] = set()
    for at, plan in enumerate(plans):
        heading = count_tokens(f"## {plan.name}")  # a row of the block once the section has a line
        section_tokens = 0
        for line in plan.lines:
            if _same_memory(line) in seen:
                continue
            tokens = count_tokens(line.rendered())
            opening = heading if not kept[at][1] else 0
            over_section = plan.budget is not None and section_tokens + tokens > plan.budget
            if over_section or block_tokens + opening + tokens > budget:
                left_out[at] += 1
            else:
                kept[at][1].append(line)
                section_tokens += tokens
                block_tokens += opening + tokens
                seen.add(_same_memory(line))
    text = _render(today, kept)
    sections = tuple(ContextSection(name, tuple(lines), left_out[at]) for at, (name, lines) in enumerate(kept))
    # the sum of the rows' counts is the block's (see the module doc): counting the whole block again took
    # ~3 ms of CPU at 800 tokens, a tenth of a context call
    return ContextBlock(text, block_tokens, budget, mode, today, gate, sections)

