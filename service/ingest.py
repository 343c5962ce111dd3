"""`POST /memory/ingest`: a conversation written as an ingest JSON file into its agent's landing folder (on a home
whose store is shared, `storage_uri`, into the store's inbox for the run on any host: `memlake.landing_inbox`), and
what became of it since (`GET /memory/ingest/{id}`).

The file appears whole or not at all (`memlake.atomic_files`: written hidden, then renamed; the landing scan skips
hidden names; on the store one object put whole), in the format `memlake.parsers.ingest_json` reads, so the landing
sensor or the next run takes it like a dropped one.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

import polars as pl

from memlake.errors import BadRequest
from memlake.lake import Lake
from memlake.landing import conversation_start, date_outside_days, future_message
from memlake.landing_inbox import land_conversation, waiting_in_inbox
from memlake.parsers.ingest_json import parse_ingest_json
from memlake.parsers.parsed import ShapeError
from memlake.schemas import CHUNK_INDEX, LANDING_MANIFEST, agent_folder, path_inside
from memlake.settings import Settings
from memlake.storage import index_store

INGEST_ID = re.compile(r"^\d{8}T\d{6}-[0-9a-f]{12}$")


def ingest_file_name(ingest_id: str) -> str:
    return f"ingest-{ingest_id}.json"


def write_ingest(settings: Settings, conversation: dict[str, Any]) -> tuple[str, str]:
    """Land one ingest conversation for its agent; returns its id and its path relative to the landing folder
    (`<agent>/ingest-<id>.json`). A conversation the parser would
    refuse is refused here (`BadRequest`), before anything is written."""
    try:
        parsed = parse_ingest_json(conversation)
    except ShapeError as exc:
        raise BadRequest(f"not an ingest conversation: {exc}") from None
    if not any(c.messages for c in parsed):
        raise BadRequest("the conversation has no turn with text: nothing to remember")
    now, first_day = datetime.now(UTC), date.fromisoformat(settings.partition_start_date)
    for read in parsed:  # the next run would quarantine a conversation it cannot give a day
        started = conversation_start(read)
        problem = (date_outside_days(started, first_day, now.date()) if started else None) or future_message(read, now)
        if problem is not None:
            raise BadRequest(problem)
    ingest_id = f"{datetime.now(UTC):%Y%m%dT%H%M%S}-{secrets.token_hex(6)}"
    # on a shared store, in its inbox: the run on whichever host builds the home takes it (memlake.landing_inbox)
    return ingest_id, land_conversation(settings, conversation["agent_id"], ingest_file_name(ingest_id), conversation)


@dataclass(frozen=True)
class IngestStatus:
    """What became of a landed ingest file."""

    state: str  # waiting (landed, not read yet) | ingested | duplicate | quarantined
    reason: str | None
    searchable: bool  # its turns are in the agent's search index
    conversation_ids: list[str]


def ingest_status(settings: Settings, agent_id: str, ingest_id: str) -> IngestStatus | None:
    """The state of an ingest of the agent, or None when the agent has no such ingest."""
    if not INGEST_ID.fullmatch(ingest_id):
        return None
    folder = agent_folder(settings.landing_dir, agent_id)
    relative = f"{agent_id}/{ingest_file_name(ingest_id)}"
    lake = Lake.of(settings)
    manifest = lake.read(LANDING_MANIFEST).filter(pl.col("source_file") == relative)
    if manifest.height == 0:
        landed = path_inside(folder, ingest_file_name(ingest_id)).is_file() or waiting_in_inbox(
            settings, agent_id, ingest_file_name(ingest_id))
        return IngestStatus("waiting", None, False, []) if landed else None
    quarantined = manifest.filter(pl.col("status") == "quarantined")
    if quarantined.height:
        return IngestStatus("quarantined", quarantined["reason"][0], False, [])
    conversations = sorted(set(manifest["conversation_id"].drop_nulls().to_list()))
    state = "ingested" if (manifest["status"] == "ingested").any() else "duplicate"
    return IngestStatus(state, None, _indexed(settings, agent_id, conversations), conversations)


def _indexed(settings: Settings, agent_id: str, conversation_ids: list[str]) -> bool:
    from memlake.vectors import Filters, VectorStore  # deferred: LanceDB, ~1 s

    if not conversation_ids or not index_store(settings).exists():
        return False
    store = VectorStore.of(settings)
    if not store.exists(CHUNK_INDEX):
        return False
    found = store.rows(CHUNK_INDEX, agent_id, Filters(conversation_ids=tuple(conversation_ids)),
                       columns=["conversation_id"], limit=1)
    return found.height > 0
