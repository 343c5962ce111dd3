"""Conversations sent to a replica of a home whose store is shared (`storage_uri`): `memlake serve` on any host
writes an ingest as one object under `<storage_uri>/landing/<agent>/`, not into its own landing folder, which the
run on another host never sees. The run (and the landing sensor) on whichever host builds the home takes every such
object first: copied whole into its landing folder, then deleted from the store; from there it is a landed file
like any other. A forget removes the objects not taken yet, so no replica keeps text the run has not seen.

A home without `storage_uri` has no inbox: an ingest lands in its own landing folder, as always.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.fs as pafs

from memlake.atomic_files import write_atomically, write_text_atomically
from memlake.schemas import agent_folder, check_agent_id, path_inside
from memlake.settings import Settings
from memlake.storage import Store, landing_store, write_object


def land_conversation(settings: Settings, agent_id: str, name: str, conversation: dict[str, object]) -> str:
    """`conversation` (ingest JSON) landed for the agent as `name`, whole: in the store's inbox when the home's
    store is shared, else in the home's landing folder. Returns its path relative to the landing folder."""
    text = json.dumps(conversation, ensure_ascii=False)
    inbox = _inbox(settings)
    if inbox is None:
        folder = agent_folder(settings.landing_dir, agent_id)
        folder.mkdir(parents=True, exist_ok=True)
        write_text_atomically(path_inside(folder, name), text)
    else:
        write_object(inbox.filesystem, inbox.file(check_agent_id(agent_id), name), text.encode())
    return f"{agent_id}/{name}"


def waiting_in_inbox(settings: Settings, agent_id: str, name: str) -> bool:
    """Whether the agent's landed `name` is still in the store's inbox (no host's run has taken it yet)."""
    inbox = _inbox(settings)
    return inbox is not None and name in inbox.child(check_agent_id(agent_id)).names("")


def take_inbox(settings: Settings) -> list[str]:
    """Every object of the store's inbox moved into this home's landing folder (copied whole, then deleted from
    the store); returns their paths relative to the landing folder, in order."""
    inbox = _inbox(settings)
    if inbox is None:
        return []
    taken = []
    for agent_id in _agents(inbox):
        for name in inbox.child(agent_id).names(""):
            path = path_inside(agent_folder(settings.landing_dir, agent_id), name)
            path.parent.mkdir(parents=True, exist_ok=True)
            with inbox.filesystem.open_input_stream(inbox.file(agent_id, name)) as stream:
                data = stream.read()
            write_atomically(path, lambda tmp, data=data: Path(tmp).write_bytes(data))
            inbox.child(agent_id).delete(name)
            taken.append(f"{agent_id}/{name}")
    return taken


def drop_from_inbox(settings: Settings, agent_id: str, conversation_ids: frozenset[str] | None) -> int:
    """The agent's objects in the store's inbox that hold `conversation_ids` (None: every one) deleted; returns
    how many. An ingest object holds one conversation (`service.ingest`)."""
    inbox = _inbox(settings)
    if inbox is None:
        return 0
    folder = inbox.child(check_agent_id(agent_id))
    dropped = 0
    for name in folder.names(""):
        if conversation_ids is not None:
            with folder.filesystem.open_input_stream(folder.file(name)) as stream:
                held = json.loads(stream.read())
            if held.get("conversation_id") not in conversation_ids:
                continue
        folder.delete(name)
        dropped += 1
    return dropped


def _inbox(settings: Settings) -> Store | None:
    return landing_store(settings) if settings.storage_uri else None


def _agents(inbox: Store) -> list[str]:
    selector = pafs.FileSelector(inbox.path, allow_not_found=True)
    return sorted(info.base_name for info in inbox.filesystem.get_file_info(selector)
                  if info.type == pafs.FileType.Directory)
