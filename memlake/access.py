"""The access log: which memories an agent used, and when.

A write names the objects one agent used in one scope (the `key` of search
results: a chunk id, `agent/conversation` for an episode, `fact_id@version`)
and is one entry of `<home>/inputs/access/` (see `memlake.inputs`). The
search's access-frequency boost counts an object's rows with `accessed_at` up
to the search's `as_of`, so a search as of last year is not lifted by what
was used since, and a rerun as of the same time ranks the same.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from collections.abc import Iterable, Mapping
from datetime import datetime
from pathlib import Path

import numpy as np
import polars as pl

from memlake.errors import BadRequest
from memlake.inputs import append_entry, log_dir, log_files, read_entries
from memlake.moments import micros, parse_as_of
from memlake.schemas import ACCESS, ACCESS_SCOPES, check_agent_id
from memlake.settings import Settings


def record_access(
    settings: Settings, agent_id: str, scope: str, object_ids: Iterable[str], at: datetime | str | None = None
) -> int:
    """Append one entry: `agent_id` used each of `object_ids` (repeats count once) at `at` (default now;
    naive = UTC, or an ISO string). Returns the number of objects written; none, no file."""
    check_agent_id(agent_id)
    if scope not in ACCESS_SCOPES:
        raise BadRequest(f"unknown scope {scope!r}: expected one of {', '.join(ACCESS_SCOPES)}")
    ids = list(dict.fromkeys(str(i) for i in object_ids if i))
    if not ids:
        return 0
    when = parse_as_of(at)  # None: now
    access_id = uuid.uuid4().hex
    rows = [
        {"access_id": access_id, "agent_id": agent_id, "scope": scope, "object_id": i, "accessed_at": when} for i in ids
    ]
    append_entry(settings, ACCESS, rows, access_id, when)
    return len(ids)


class AccessLog:
    """The access log of one home, read incrementally: each entry file is read once per instance."""

    def __init__(self, settings: Settings) -> None:
        self.folder = log_dir(settings, ACCESS)
        self._read: set[str] = set()
        self._listed_at: int | None = None  # the folder's mtime when it was last listed
        # (agent_id, scope) -> object ids and accessed_at (microseconds), and the tally of them all
        self._uses: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
        self._totals: dict[tuple[str, str], Counter[str]] = {}
        self._lock = threading.Lock()  # searches on several threads (`memlake serve`) share one log


    def counts(self, agent_id: str, scope: str, as_of: datetime) -> Mapping[str, int]:
        """How often `agent_id` used each object of `scope` up to `as_of`."""
        with self._lock:
            self._refresh()
            owner = (agent_id, scope)
            if owner not in self._uses:
                return {}
            ids, at = self._uses[owner]
            if micros(as_of) >= at.max():  # the usual search, as of now: every use counts (a copy: others add)
                return Counter(self._totals[owner])
        cutoff = micros(as_of)
        return dict(Counter(ids[at <= cutoff].tolist()))

    def _refresh(self) -> None:
        if self.folder.local:  # a local folder's mtime says when an entry was added; an object store lists anew
            try:
                stamp = Path(self.folder.path).stat().st_mtime_ns
            except FileNotFoundError:
                return
            if stamp == self._listed_at:
                return
            # A directory's mtime ticks coarsely: two entries within one tick share it, so an mtime
            # is trusted to cover every entry only once it is a second old.
            self._listed_at = stamp if time.time_ns() - stamp > 1_000_000_000 else None
        new = [name for name in log_files(self.folder) if name not in self._read]
        if not new:
            return
        added = pl.from_arrow(read_entries(self.folder, new, ACCESS))
        assert isinstance(added, pl.DataFrame)
        for (agent_id, scope), rows in added.group_by("agent_id", "scope"):
            owner = (str(agent_id), str(scope))
            ids = rows["object_id"].to_numpy().astype(object)
            at = rows["accessed_at"].dt.epoch("us").to_numpy()
            self._totals.setdefault(owner, Counter()).update(ids.tolist())
            if owner in self._uses:
                ids = np.concatenate([self._uses[owner][0], ids])
                at = np.concatenate([self._uses[owner][1], at])
            self._uses[owner] = (ids, at)
        self._read.update(new)
