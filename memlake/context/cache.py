"""Recent context blocks, reused for the same request a few seconds, and never past a write to the agent's memory.

Validity is the agent's memory state (`memlake.changes.memory_state`), read before a block is built: a write
while it is being built makes the next request build it again. Any process's write counts, since the state is
read from marks in the home.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any

_BLOCKS = 256  # requests kept, the least recently used dropped first


@dataclass(frozen=True)
class _Entry:
    expires: float
    state: tuple[str, ...]
    block: Any


class BlockCache:
    """Blocks by request, each kept `seconds` while `state(agent_id)` stays what it was when it was built."""

    def __init__(self, seconds: float, state: Callable[[str], tuple[str, ...]],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self.state = state
        self.clock = clock
        self._entries: OrderedDict[Hashable, _Entry] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = self.builds = 0

    def get(self, key: Hashable, agent_id: str, build: Callable[[], Any]) -> Any:
        if self.seconds <= 0:
            return build()
        state, now = self.state(agent_id), self.clock()
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry.expires > now and entry.state == state:
                self._entries.move_to_end(key)
                self.hits += 1
                return entry.block
        block = build()
        with self._lock:
            self.builds += 1
            self._entries[key] = _Entry(now + self.seconds, state, block)
            self._entries.move_to_end(key)
            while len(self._entries) > _BLOCKS:
                self._entries.popitem(last=False)
        return block
