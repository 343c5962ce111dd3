"""One `memlake run` at a time on a home, and the trace of one that did not finish.

A second `memlake run` started while one is going would ingest the same files and build the same days
again (with a paid distiller, every call twice): it waits for the lock instead. The lock is an OS file
lock, so a run that is killed lets go of it with its process and never wedges the home. Beside it,
`<home>/.memlake-run.json` names the run holding it (pid, host, start); it stays until a run finishes
its work, so a search that finds an index missing can tell a run stopped mid-way (`memlake run` redoes
it) from an index lost on its own (`memlake reindex` rebuilds it).
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from filelock import FileLock, Timeout

from memlake.atomic_files import write_text_atomically

LOCK_FILE = ".memlake-run.lock"
TRACE_FILE = ".memlake-run.json"


@dataclass(frozen=True)
class RunTrace:
    """The `memlake run` that took the home's lock last and has not finished its work."""

    pid: int
    host: str
    started_at: str

    def describe(self) -> str:
        return f"pid {self.pid}, started {self.started_at}"

    def is_going(self) -> bool:
        """Its process is still there (another host's process cannot be seen: taken as going)."""
        return self.host != socket.gethostname() or process_alive(self.pid)


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def last_run_trace(home: Path) -> RunTrace | None:
    """The trace of the last `memlake run` on `home` if it has not finished its work (going, or stopped)."""
    try:
        return RunTrace(**json.loads((home / TRACE_FILE).read_text()))
    except (OSError, ValueError, TypeError):  # none, or unreadable: nothing to tell
        return None


class HomeRun:
    """The hold one `memlake run` has on its home; `finished` once its work is all done."""

    def __init__(self, home: Path) -> None:
        self.trace_path = home / TRACE_FILE

    def finished(self) -> None:
        self.trace_path.unlink(missing_ok=True)


@contextmanager
def one_run_at_a_time(home: Path, say: Callable[[str], None]) -> Iterator[HomeRun]:
    """Hold `home` for one `memlake run`; when another holds it, say so and wait for it to end."""
    home.mkdir(parents=True, exist_ok=True)
    lock = FileLock(home / LOCK_FILE)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        holder = last_run_trace(home)
        who = holder.describe() if holder is not None else "its pid unknown"
        say(f"another memlake run ({who}) is going on this home; waiting for it to end…")
        lock.acquire()
        say("the other memlake run has ended; looking at what is left to do")
    try:
        started = datetime.now(UTC).isoformat(timespec="seconds")
        trace = RunTrace(pid=os.getpid(), host=socket.gethostname(), started_at=started)
        run = HomeRun(home)
        write_text_atomically(run.trace_path, json.dumps(asdict(trace)))
        yield run
    finally:
        lock.release()
