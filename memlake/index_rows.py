"""The rows of the episode and fact indexes, built from the lake tables they index.

`transcripts/chunks` rows are indexed as they are (`memlake/chunks.py` builds them); episodes
and facts are turned into one searchable text each here, beside the schemas `VectorStore.sync`
writes them with. Pure domain code: no Dagster.
"""

from __future__ import annotations

from typing import Any

import polars as pl
import pyarrow as pa

from memlake.chunks import text_sha256

EPISODE_INDEX_SCHEMA = pa.schema(
    [
        ("episode_key", pa.string()),  # agent_id/conversation_id
        ("agent_id", pa.string()),
        ("conversation_id", pa.string()),
        ("kind", pa.string()),
        ("title", pa.string()),
        ("message_ids", pa.list_(pa.string())),
        ("created_at", pa.timestamp("us", tz="UTC")),
        ("text", pa.string()),
        ("text_sha256", pa.string()),
        ("importance", pa.float64()),
    ]
)

FACT_INDEX_SCHEMA = pa.schema(
    [
        ("fact_key", pa.string()),  # fact_id@version
        ("fact_id", pa.string()),
        ("version", pa.int32()),
        ("agent_id", pa.string()),
        ("conversation_id", pa.string()),  # the first source conversation
        ("kind", pa.string()),
        ("type", pa.string()),
        ("subject", pa.string()),
        ("slot", pa.string()),
        ("status", pa.string()),
        ("message_ids", pa.list_(pa.string())),
        ("created_at", pa.timestamp("us", tz="UTC")),
        ("valid_from", pa.timestamp("us", tz="UTC")),
        ("valid_until", pa.timestamp("us", tz="UTC")),
        ("text", pa.string()),
        ("text_sha256", pa.string()),
        ("importance", pa.float64()),
    ]
)

def _joined(values: Any) -> str:
    return "; ".join(str(v) for v in (values or []) if v)


def _opens_with(summary: str | None, title: str | None) -> bool:
    """Whether the summary already begins with the title (the offline distiller's do): the text then gives the
    title once, not "Lisbon trip Lisbon trip. ..." in the episodes section of a context block."""
    head = (title or "").strip().rstrip(".!?").casefold()
    return bool(head) and (summary or "").lstrip().casefold().startswith(head)


def episode_index_rows(episodes: pl.DataFrame) -> pl.DataFrame:
    """One index row per episode: title, summary, topics, decisions and action items as searchable text."""
    rows = []
    for e in episodes.iter_rows(named=True):
        parts = [
            "" if _opens_with(e.get("summary"), e.get("title")) else e.get("title") or "",
            e.get("summary") or "",
            f"Topics: {_joined(e.get('topics'))}" if e.get("topics") else "",
            f"Decisions: {_joined(e.get('decisions'))}" if e.get("decisions") else "",
            f"Action items: {_joined(e.get('action_items'))}" if e.get("action_items") else "",
        ]
        text = "\n".join(p for p in parts if p)
        rows.append(
            {
                "episode_key": f"{e['agent_id']}/{e['conversation_id']}",
                "agent_id": e["agent_id"],
                "conversation_id": e["conversation_id"],
                "kind": "episode",
                "title": e.get("title"),
                "message_ids": list(e.get("message_ids") or []),
                "created_at": e.get("conversation_started_at"),
                "text": text,
                "text_sha256": text_sha256(text),
                "importance": e.get("salience"),
                "day": e.get("day"),
            }
        )
    schema = pa.schema([*EPISODE_INDEX_SCHEMA, pa.field("day", pa.string())])
    return _frame(rows, schema)


def fact_index_rows(facts: pl.DataFrame) -> pl.DataFrame:
    """One index row per fact version; search returns active ones unless told otherwise."""
    rows = []
    for f in facts.iter_rows(named=True):
        text = f.get("content") or " ".join(str(v) for v in (f.get("subject"), f.get("slot"), f.get("value")) if v)
        conversations = f.get("source_conversation_ids") or []
        rows.append(
            {
                "fact_key": f"{f['fact_id']}@{f['version']}",
                "fact_id": f["fact_id"],
                "version": f["version"],
                "agent_id": f["agent_id"],
                "conversation_id": conversations[0] if conversations else None,
                "kind": "fact",
                "type": f.get("type"),
                "subject": f.get("subject"),
                "slot": f.get("slot"),
                "status": f.get("status"),
                "message_ids": list(f.get("source_message_ids") or []),
                "created_at": f.get("created_at"),
                "valid_from": f.get("valid_from"),
                "valid_until": f.get("valid_until"),
                "text": text,
                "text_sha256": text_sha256(text),
                "importance": f.get("importance"),
                "day": None,
            }
        )
    schema = pa.schema([*FACT_INDEX_SCHEMA, pa.field("day", pa.string())])
    return _frame(rows, schema)


def _frame(rows: list[dict[str, Any]], schema: pa.Schema) -> pl.DataFrame:
    frame = pl.from_arrow(pa.Table.from_pylist(rows, schema=schema))
    assert isinstance(frame, pl.DataFrame)
    return frame
