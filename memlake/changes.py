"""Marks that a home's memory changed, so that a cache in any process (the context block's) knows to stop.

A write marks the store it wrote: the lake and the indexes mark their whole store (rewriting a day may drop any
agent's rows), the input logs (remember, reject, forget, access) mark the one agent whose entry they wrote. A
mark holds a fresh random token, swapped in whole: a reader that compares tokens sees every write, where file
times are too coarse (a few milliseconds) to tell two writes apart.
"""

from __future__ import annotations

import uuid
from pathlib import Path

from memlake.settings import Settings
from memlake.storage import Store, index_store, inputs_store, lake_store

MARK = ".changed"


def mark_changed(folder: Path | Store, name: str = MARK) -> None:
    """Say that what `folder` holds changed (`name`: one agent's mark inside it); on object storage too, where
    the mark is one object put whole."""
    (folder if isinstance(folder, Store) else Store.folder(folder)).write_text(name, uuid.uuid4().hex)


def agent_mark(agent_id: str) -> str:
    return f"{MARK}-{agent_id}"  # agent ids are checked names (schemas.agent_id_problem): safe in a file name


def folder_state(folder: Store) -> str:
    """What changes whenever a write marked `folder` changed (the indexes: `VectorStore`), by any process."""
    return folder.read_text(MARK)


def lake_state(settings: Settings) -> str:
    """What changes whenever any lake table was written, by any process."""
    return folder_state(lake_store(settings))


def memory_state(settings: Settings, agent_id: str) -> tuple[str, ...]:
    """What changes whenever anything the agent's memory is read from was written, by any process."""
    return (lake_state(settings), folder_state(index_store(settings)),
            inputs_store(settings).read_text(agent_mark(agent_id)))
