"""Chunks: the retrieval units derived from turns. Pure functions, no Dagster.

Kinds:
- `turn`: one per turn. Its text starts with who spoke and the conversation's
  date ("Caroline, 8 May 2023: …"), so both are searchable.
- `session`: one per conversation, the whole conversation under a dated header.
  The index gives it the mean of its turns' vectors (see `memlake.vectors`), so
  the embedding model's input limit does not cut it short.
- `window`: optional (`window_size` > 1): consecutive turns of one conversation,
  stride `window_size - 1`, for answers that span a question and its reply.
- `sentence`: optional (`sentence_keys`): one per sentence of a turn that has two
  or more (of `SENTENCE_MIN_WORDS` words or more), under the turn's range, so a
  fact said in passing in a long turn has a vector of its own (a long turn's
  one vector is the mean of everything it says).
  A long turn (over `long_turn_words` words) gets passage keys instead.
- `passage`: a long turn's keys, at most `long_turn_keys` (> 0) of them: its sentences grouped, in order,
  into runs of about `PASSAGE_WORDS` words or more (two thirds of the keys), and its most distinctive
  sentences on their own (the rest: those with the most content words said nowhere else in the turn, as a
  name or a number is, which a run's vector blurs). An answer of hundreds of words so costs a bounded number
  of texts to embed, not one per sentence, and a hit on it returns the part that matched. The turn's own
  vector is the mean of its runs' (see `memlake.vectors`): together they read the turn once, where its own
  text would be cut at the model's input limit and embed its first part twice. A window holding a long turn
  is not built: it would be cut at the same limit, and the question keys already tie an answer to its ask.
  With `long_turn_tokens` (> 0) a long turn's passages embed at most that many word pieces in all: its most
  distinctive sentences first, then its runs in order, each that still fits (the first always). The others are
  text-only rows (`TEXT_ONLY_MARK` on their hash, no vector): full-text search finds them and a hit returns them,
  and the turn's vector is the mean of the passages embedded. Long answers were most of what RealMem embeds.
- `question`: optional (`question_keys`): one per question the previous turn (by
  another speaker) asked, under the range of the turn that replies, with "you"
  and "your" turned into the replier's name. A memory query is a question too
  ("What did Caroline research?"), and a sentence model matches two questions
  far better than a question and its answer ("Caroline: Adoption agencies!").

`text` is what full-text search indexes and a hit returns; `embed_text` is what
the embedding model reads (the same words without the date header).

Every chunk carries agent_id, conversation_id, message_ids (in turn order), the
turn range, created_at, text, its token count from the embedder's tokenizer and
the sha256 of its embed_text (what decides whether the index embeds it again).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

import polars as pl

from memlake.lake import Lake, conform
from memlake.schemas import CHUNKS, PROXY_ORIGIN
from memlake.settings import ChunkingSettings

KINDS = ("turn", "session", "window", "sentence", "passage", "question")
# The keys every turn gets and no more (a turn key per turn, a session key per conversation): what `build_chunks`
# cuts when not told otherwise. A home cuts as its settings say (`settings.chunking`).
BARE_CHUNKING = ChunkingSettings(
    chunk_window_size=0, chunk_sentences=False, chunk_questions=False, chunk_long_turn_keys=0, chunk_long_turn_tokens=0,
    chunk_pool_windows=False, chunk_pool_turns=False, chunk_span_sentences=False,
)
# What built a day's chunks is stamped on its file (`chunk_recipe`). CHUNKER changes whenever
# `build_chunks` gives other rows for the same turns and settings (2: sentence keys, 3: question keys,
# 4: passage keys of long turns, 5: sessions' hashes marked as pooled, so that the sessions pooled across agents
# before pooling grouped by agent are pooled again, 6: one sentence splitter with the distiller, "Dr. Patel" and
# "J. R. R. Tolkien" kept whole, 7: "I." ends a sentence), so that a home's older days are built again by the next run
# (`stale_chunk_days`).
CHUNKER = "memlake-chunks-7"
RECIPE_STAMP = "memlake.chunk_recipe"
# A pooled key's text hash carries this mark: its vector is its members' mean, not an embedding of its text,
# so switching a kind between pooled and embedded gives its rows new vectors on the next index run.
POOLED_MARK = "pooled\x1f"
# A spanned key's vector is read from its turn's model pass (see `spanned_chunk_kinds`): its hash carries this
# mark and the turn's text, as its vector depends on both.
SPAN_MARK = "span\x1f"
# A text-only key's hash carries this mark: it has no vector of its own (a long turn's passage past the turn's
# embedding budget), so the index gives it none and vector search never returns it.
TEXT_ONLY_MARK = "text-only\x1f"
SENTENCE_MIN_WORDS = 3
# A passage key of a long turn holds about this many words or more: MiniLM reads ~180 words (256 word pieces),
# and on RealMem's answers (median 162 words) 80 gives two or three passages, each still about one thing.
PASSAGE_WORDS = 80
# A question is the text up to a "?" since the last sentence end; shorter ones ("You?", "How so?")
# carry nothing to match on.
# A question starts only after a sentence end (or at the start): unanchored, findall tried every position of a
# run with no `?` to its end, quadratic (a 750 KB turn held a run for ~20 min). The same matches.
_QUESTION = re.compile(r"(?<![^.!?\n])[^.!?\n]*\?")
QUESTION_MIN_WORDS = 4
_YOUR = re.compile(r"\byour\b", re.IGNORECASE)
_YOU = re.compile(r"\byou\b", re.IGNORECASE)
_SEP = "\x1f"
_EMBED_RANK = "_embed_rank"  # on a passage row while chunks are built: its place in its turn's embedding order
# The one sentence splitter (the chunker's, the names layer's and the offline distiller's): a sentence ends at . ! or
# ? before a capital, a digit, a quote or a bracket ("[shares a photo ...]"), or at a line break. pysbd, measured on
# LoCoMo's 5,882 turns: 5.7 s against 0.02 s, and it kept "...rewarding. Really..." whole.
# A full stop that closes a title, a Latin abbreviation or an initial ("Dr. Patel", "e.g. hiking", "J. R. R.
# Tolkien", "the U.S.") ends no sentence: one capital letter or a short title before the dot. "I." is the pronoun
# ending a sentence ("Neither did I. We left.") far more often than an initial, so it ends one.
_NOT_AN_END = "".join(rf"(?<!\b{abbreviation})" for abbreviation in (
    r"[A-HJ-Z]\.", r"Mr\.", r"Ms\.", r"Dr\.", r"St\.", r"Mrs\.", r"Mt\.", r"Jr\.", r"Sr\.", r"Prof\.", r"vs\.",
    r"e\.g\.", r"i\.e\.", r"[Nn]o\.(?=\s+\d)"))
# A colon before a statement ends one too ("Big news: I moved to Leeds"); not one before a date ("New date: June 3"
# says what the date is for) nor before a name that ends the sentence ("Meet my new partner: Sam.", "New job: Globex.").
_MONTH_DAY = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.? \d"
_A_NAME_ENDING_IT = r"(?!I\b|I')[A-Z][\w'&-]*(?: [A-Z][\w'&-]*){0,2}(?:[.!]+(?:\s|$)|\s*$)"
SENTENCE_END = re.compile(rf"(?<=[.!?]){_NOT_AN_END}\s+(?=[\"“(\[]?[A-Z0-9À-Þ\[])|\n+|"
                          rf"(?<=\w):\s+(?=[A-Z])(?!{_MONTH_DAY})(?!{_A_NAME_ENDING_IT})")


def chunk_id(
    agent_id: str, conversation_id: str, kind: str, turn_start: int, turn_end: int, part: int | None = None
) -> str:
    """A stable id: the same turns of the same conversation always get the same id (`part`: the
    sentence's number within its turn)."""
    fields = [agent_id, conversation_id, kind, str(turn_start), str(turn_end)]
    key = _SEP.join(fields if part is None else [*fields, str(part)])
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]


def sentences(content: str) -> list[str]:
    """The sentences of a turn worth a key of their own: none unless it has two or more of
    `SENTENCE_MIN_WORDS` words or more (a one-sentence turn is its own key already)."""
    found = [p.strip() for p in SENTENCE_END.split(content)]
    found = [p for p in found if len(p.split()) >= SENTENCE_MIN_WORDS]
    return found if len(found) >= 2 else []


def passages(content: str, most: int) -> list[str]:
    """A long turn's passage keys: its sentences (every one, however short) grouped in order into at most `most`
    passages of about `PASSAGE_WORDS` words or more (more words each when the turn has more than `most` times
    that), so together they say the whole turn once. None when one passage would be the whole turn."""
    parts = [p.strip() for p in SENTENCE_END.split(content) if p and p.strip()]
    total = sum(len(p.split()) for p in parts)
    if most < 1 or total == 0:
        return []
    size = max(PASSAGE_WORDS, -(-total // most))  # ceil: `most` passages of `size` words hold the whole turn
    grouped: list[list[str]] = [[]]
    words = 0
    for part in parts:
        if words >= size and len(grouped) < most:
            grouped.append([])
            words = 0
        grouped[-1].append(part)
        words += len(part.split())
    # a short tail (a closing question, a sign-off) joins the passage before it rather than stand alone
    if len(grouped) > 1 and sum(len(p.split()) for p in grouped[-1]) < PASSAGE_WORDS // 2:
        grouped[-2].extend(grouped.pop())
    return [" ".join(group) for group in grouped] if len(grouped) > 1 else []


def distinctive_sentences(content: str, most: int, *, by_rank: bool = False) -> list[str]:
    """At most `most` sentences of a turn (of `SENTENCE_MIN_WORDS` words or more) that say most of what the rest
    of it does not: ranked by their content words found in no other sentence, ties to the earlier; in turn order
    (`by_rank`: most distinctive first).
    """
    from memlake.text import content_words  # deferred: the chunker's other paths need none of it

    found = [p.strip() for p in SENTENCE_END.split(content) if p and len(p.split()) >= SENTENCE_MIN_WORDS]
    said = [content_words(sentence) for sentence in found]
    seen_in: dict[str, int] = {}
    for words in said:
        for word in words:
            seen_in[word] = seen_in.get(word, 0) + 1
    own = [sum(1 for word in words if seen_in[word] == 1) for words in said]
    best = [i for i in sorted(range(len(found)), key=lambda i: (-own[i], i))[:most] if own[i] > 0]
    return [found[i] for i in (best if by_rank else sorted(best))]


def within_budget(counts: Sequence[int], budget: int) -> list[int]:
    """The positions of the keys embedded under a budget of `budget` tokens, given each key's tokens in the order
    the keys are wanted: each that still fits, and the first always (a turn's vector is the mean of its embedded
    keys, so it needs one)."""
    chosen: list[int] = []
    spent = 0
    for i, count in enumerate(counts):
        if not chosen or spent + count <= budget:
            chosen.append(i)
            spent += count
    return chosen


def text_only_sha256(embed_text: str) -> str:
    """The hash of a key that has no vector of its own (see `TEXT_ONLY_MARK`)."""
    return text_sha256(TEXT_ONLY_MARK + embed_text)


def is_long(content: str, long_turn_words: int, long_turn_keys: int) -> bool:
    """Whether a turn gets passage keys (a bounded number) rather than a key per sentence."""
    return long_turn_keys > 0 and len(content.split()) > long_turn_words


def questions_answered(before: Mapping[str, Any] | None, turn: Mapping[str, Any]) -> list[str]:
    """The questions the turn `before` put to `turn`'s speaker, by name (none if one speaker said
    both): each question of `QUESTION_MIN_WORDS` words or more, its "you"/"your" turned into the
    replier's name, as a memory query names people where a chat question speaks to them."""
    replier = speaker_label(turn["speaker"], turn["role"])
    if before is None or speaker_label(before["speaker"], before["role"]) == replier:
        return []
    found = []
    for question in _QUESTION.findall(before["content"]):
        question = question.strip(" -\u2014")
        if len(question.split()) >= QUESTION_MIN_WORDS:
            found.append(_YOU.sub(replier, _YOUR.sub(f"{replier}'s", question)))
    return found


def key_span(turn_text: str, key_text: str) -> list[tuple[int, int]] | None:
    """Where a key ("Name: a sentence") lies in its turn's embedded text ("Name: the whole turn"): the name with
    its ": ", and the sentence's first place after it. None when the turn does not hold it."""
    head = key_text.find(": ") + 2
    if head < 2 or not turn_text.startswith(key_text[:head]):
        return None
    start = turn_text.find(key_text[head:], head)
    return [(0, head), (start, start + len(key_text) - head)] if start >= 0 else None


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def human_date(moment: datetime | None) -> str:
    """`8 May 2023`: the form people (and questions) use."""
    if moment is None:
        return "undated"
    return f"{moment.day} {moment:%B %Y}"


def speaker_label(speaker: str | None, role: str | None) -> str:
    if speaker and speaker.strip():
        return speaker.strip()
    return (role or "unknown").capitalize()


def turn_text(speaker: str | None, role: str | None, content: str, day: datetime | None) -> str:
    """What full-text search indexes and a hit returns: who, when, what."""
    return f"{speaker_label(speaker, role)}, {human_date(day)}: {content}"


def turn_embed_text(speaker: str | None, role: str | None, content: str) -> str:
    """What the embedding model reads: who and what (a date header only blurs a short text's vector)."""
    return f"{speaker_label(speaker, role)}: {content}"


def session_text(title: str | None, day: datetime | None, lines: Sequence[tuple[str, str]]) -> str:
    header = f"Conversation of {human_date(day)}" + (f": {title}" if title else "")
    return "\n".join([header, *(f"{who}: {content}" for who, content in lines)])


def build_chunks(
    turns: pl.DataFrame, count_tokens: Callable[[list[str]], list[int]], chunking: ChunkingSettings = BARE_CHUNKING
) -> pl.DataFrame:
    """The chunks of `turns` (any number of conversations), in `transcripts/chunks` shape, cut as `chunking` says
    (a home's: `settings.chunking`).

    A turn of more than `chunk_long_turn_words` words gets at most `chunk_long_turn_keys` passage keys instead of a
    key per sentence (0: no bound, a key per sentence as for every turn); with `chunk_long_turn_tokens` its
    passages past that many tokens of embedded text hash with `TEXT_ONLY_MARK` (no vector of their own). The rows
    of the pooled kinds (`pooled_chunk_kinds`) hash their text with `POOLED_MARK`, those of the spanned kinds
    (`spanned_chunk_kinds`) with `SPAN_MARK` and their turn's text.
    Deterministic: the same turns give the same chunks, ids and order.
    """
    long_turn_tokens = chunking.chunk_long_turn_tokens
    pooled_kinds, spanned_kinds = pooled_chunk_kinds(chunking), spanned_chunk_kinds(chunking)
    if "origin" in turns.columns:  # a frame of the lake's turns (some callers build turns of their own)
        # an answer the proxy landed is the agent's own output: never a retrieval unit, so search and the
        # context block cannot give it back as what was said (docs/decisions.md)
        proxied_answer = (pl.col("origin") == PROXY_ORIGIN).fill_null(False) & (pl.col("role") == "assistant")
        turns = turns.filter(~proxied_answer)
    if turns.height == 0:
        return pl.from_arrow(CHUNKS.schema.empty_table())  # type: ignore[return-value]
    ordered = turns.sort("agent_id", "conversation_id", "turn_index")
    rows: list[dict[str, Any]] = []
    for (agent_id, conversation_id), group in ordered.group_by(
        "agent_id", "conversation_id", maintain_order=True
    ):
        rows.extend(_conversation_chunks(str(agent_id), str(conversation_id), group, chunking))
    counts = count_tokens([r["text"] for r in rows])
    text_only = _past_budget(rows, count_tokens, long_turn_tokens) if long_turn_tokens > 0 else set()
    # a long turn's vector is the mean of its passages embedded: the budget that chose them goes into its hash
    budgeted = {_turn_of(r) for r in rows if id(r) in text_only}
    turn_texts = {_turn_of(r): r["embed_text"] for r in rows if r["kind"] == "turn"}
    # a pooled turn kind means the turns with sentence keys (the others are embedded)
    sentenced = {_turn_of(r) for r in rows if r["kind"] == "sentence"} if "turn" in pooled_kinds else set()
    for row, count in zip(rows, counts, strict=True):
        row["token_count"] = count
        pooled = row["kind"] in pooled_kinds and (row["kind"] != "turn" or _turn_of(row) in sentenced)
        mark = POOLED_MARK if pooled else ""
        if row["kind"] in spanned_kinds:
            mark = SPAN_MARK + turn_texts[_turn_of(row)] + _SEP
        if id(row) in text_only:
            mark = TEXT_ONLY_MARK
        elif row["kind"] == "turn" and _turn_of(row) in budgeted:
            mark = f"{POOLED_MARK}{long_turn_tokens}{_SEP}"
        row["text_sha256"] = text_sha256(mark + row["embed_text"])
        row.pop(_EMBED_RANK, None)
    return pl.from_arrow(conform(CHUNKS, rows))  # type: ignore[return-value]


def _turn_of(row: Mapping[str, Any]) -> tuple[str, str, int]:
    return row["agent_id"], row["conversation_id"], row["turn_start"]


def _past_budget(rows: list[dict[str, Any]], count_tokens: Callable[[list[str]], list[int]], budget: int) -> set[int]:
    """The passage rows (by `id`) past their turn's embedding budget: `budget` tokens of embedded text per turn,
    the passages taken in their `_EMBED_RANK` order (see `within_budget`)."""
    by_turn: dict[tuple[str, str, int], list[dict[str, Any]]] = {}
    for row in rows:
        if _EMBED_RANK in row:
            by_turn.setdefault(_turn_of(row), []).append(row)
    wanted = [sorted(keys, key=lambda r: r[_EMBED_RANK]) for keys in by_turn.values()]
    counts = iter(count_tokens([r["embed_text"] for keys in wanted for r in keys]))
    past: set[int] = set()
    for keys in wanted:
        embedded = within_budget([next(counts) for _ in keys], budget)
        past.update(id(row) for i, row in enumerate(keys) if i not in embedded)
    return past


def is_long_turn(content: str, chunking: ChunkingSettings) -> bool:
    """Whether a turn is long: it gets passage keys (see `is_long`)."""
    return is_long(content, chunking.chunk_long_turn_words, chunking.chunk_long_turn_keys)


def part_keys(content: str, chunking: ChunkingSettings) -> tuple[str, list[str], list[int]]:
    """The kind and texts of a turn's part keys: a long turn's passages (runs, then its most distinctive
    sentences; `chunk_long_turn_keys` at most), else its sentences (if asked for); and their positions in the order
    they are embedded under `chunk_long_turn_tokens`: the distinctive sentences, most distinctive first, then the
    runs in order."""
    if not is_long_turn(content, chunking):
        found = sentences(content) if chunking.chunk_sentences else []
        return "sentence", found, list(range(len(found)))
    most = chunking.chunk_long_turn_keys
    runs = passages(content, most - most // 3)
    if not chunking.chunk_sentences:
        return "passage", runs, list(range(len(runs)))
    ranked = [s for s in distinctive_sentences(content, most // 3, by_rank=True) if s not in runs]
    alone = [s for s in distinctive_sentences(content, most // 3) if s in ranked]
    order = [len(runs) + alone.index(s) for s in ranked] + list(range(len(runs)))
    return "passage", [*runs, *alone], order


def _conversation_chunks(
    agent_id: str, conversation_id: str, group: pl.DataFrame, chunking: ChunkingSettings
) -> list[dict[str, Any]]:
    turns = group.to_dicts()
    started = turns[0].get("conversation_started_at") or turns[0]["created_at"]
    rows = []
    for before, t in zip([None, *turns], turns, strict=False):
        rows.append(
            _row(
                agent_id, conversation_id, "turn", [t],
                turn_text(t["speaker"], t["role"], t["content"], started),
                turn_embed_text(t["speaker"], t["role"], t["content"]),
                role=t["role"], speaker=t["speaker"],
            )
        )
        part_kind, parts, order = part_keys(t["content"], chunking)
        for part, said in enumerate(parts):
            rows.append(
                _row(
                    agent_id, conversation_id, part_kind, [t],
                    turn_text(t["speaker"], t["role"], said, started),
                    turn_embed_text(t["speaker"], t["role"], said),
                    role=t["role"], speaker=t["speaker"], part=part,
                )
            )
            if part_kind == "passage":
                rows[-1][_EMBED_RANK] = order.index(part)
        if chunking.chunk_questions and before is not None:
            for part, question in enumerate(questions_answered(before, t)):
                rows.append(  # the asker's words, standing for the reply: filters on role or speaker see the reply's
                    _row(
                        agent_id, conversation_id, "question", [t],
                        turn_text(before["speaker"], before["role"], question, started), question,
                        role=t["role"], speaker=t["speaker"], part=part,
                    )
                )
    lines = [(speaker_label(t["speaker"], t["role"]), t["content"]) for t in turns]
    text = session_text(turns[0].get("title"), started, lines)
    rows.append(_row(agent_id, conversation_id, "session", turns, text, text))
    window_size = chunking.chunk_window_size
    if window_size > 1 and len(turns) > 1:
        step = max(1, window_size - 1)
        for start in range(0, max(1, len(turns) - 1), step):
            window = turns[start : start + window_size]
            if len(window) < 2:
                break
            if any(is_long_turn(t["content"], chunking) for t in window):
                continue
            body = "\n".join(turn_embed_text(t["speaker"], t["role"], t["content"]) for t in window)
            text = f"Conversation of {human_date(started)}\n{body}"
            rows.append(_row(agent_id, conversation_id, "window", window, text, body))
    return rows


def _row(
    agent_id: str,
    conversation_id: str,
    kind: str,
    turns: list[dict[str, Any]],
    text: str,
    embed_text: str,
    role: str | None = None,
    speaker: str | None = None,
    part: int | None = None,
) -> dict[str, Any]:
    start, end = int(turns[0]["turn_index"]), int(turns[-1]["turn_index"])
    return {
        "chunk_id": chunk_id(agent_id, conversation_id, kind, start, end, part),
        "agent_id": agent_id,
        "conversation_id": conversation_id,
        "kind": kind,
        "message_ids": [t["message_id"] for t in turns],
        "turn_start": start,
        "turn_end": end,
        "role": role,
        "speaker": speaker,
        "created_at": turns[0]["created_at"],
        "text": text,
        "embed_text": embed_text,
    }


def pooled_chunk_kinds(chunking: ChunkingSettings) -> tuple[str, ...]:
    """The kinds whose vector the index pools from other rows' instead of embedding their text: sessions always
    (from their turns), windows from their turns with `chunk_pool_windows`, and turns with sentence keys from
    their sentences with `chunk_pool_turns` (unless sentences are read from their turn's pass, which embeds the
    turn anyway: `chunk_span_sentences`)."""
    windows = ("window",) if chunking.chunk_pool_windows else ()
    turns = ("turn",) if chunking.chunk_pool_turns and not spanned_chunk_kinds(chunking) else ()
    return ("session", *windows, *turns)


def spanned_chunk_kinds(chunking: ChunkingSettings) -> tuple[str, ...]:
    """The kinds whose vector the index reads from their turn's model pass (a span of its token vectors) instead
    of embedding their own text: sentences with `chunk_span_sentences`."""
    return ("sentence",) if chunking.chunk_span_sentences else ()


def chunk_recipe(chunking: ChunkingSettings) -> str:
    """How chunks are built: the chunker's version and every setting of the chunking group (each changes the
    rows), taken from the group, so a setting added to it is in the recipe unlisted."""
    values = chunking.model_dump(include=set(ChunkingSettings.model_fields))
    return " ".join([CHUNKER, *(f"{name}={value}" for name, value in values.items())]).lower()


def stale_chunk_days(lake: Lake, recipe: str) -> list[str]:
    """Days whose chunks another recipe built (or none on record: a home older than the stamp).

    A day with turns but no chunks yet is not one: a run is building it, or failed and says so.
    """
    return [day for day, stamp in lake.stamps(CHUNKS, RECIPE_STAMP).items() if stamp != recipe]


def build_chunks_by_day(
    turns: pl.DataFrame, count_tokens: Callable[[list[str]], list[int]], chunking: ChunkingSettings
) -> dict[str, pl.DataFrame]:
    """`build_chunks` of turns spanning many days (a `day` column), split by the conversation's day.

    One build for every day: the tokenizer and polars pay their per-call cost once, not once per day.
    """
    built = build_chunks(turns, count_tokens, chunking)
    if built.height == 0:
        return {}
    day_of = turns.select("agent_id", "conversation_id", "day").unique()
    split = built.join(day_of, on=["agent_id", "conversation_id"], how="left", maintain_order="left").partition_by(
        "day", as_dict=True, include_key=False
    )
    return {str(day): frame for (day,), frame in split.items()}

