"""The two threads the LanceDB store reads on besides the caller's: one event loop for LanceDB's async API (the
full-text queries of snapshots) and one worker that loads large snapshots in the background. A forked child
starts its own of each on demand.

Part of `memlake.vectors`, which re-exports `submit_async` and `run_async`.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any


def _background_pool() -> ThreadPoolExecutor:
    # one snapshot load at a time in the background: on 2 cores a second would only slow the searches more
    return ThreadPoolExecutor(max_workers=1, thread_name_prefix="memlake-snapshot")


_BACKGROUND = _background_pool()
_ASYNC_LOOP: asyncio.AbstractEventLoop | None = None
_ASYNC_LOCK = threading.Lock()


def submit_async(coroutine: Coroutine[Any, Any, Any]) -> Future[Any]:
    """Start a coroutine of LanceDB's async API on memlake's one event-loop thread."""
    global _ASYNC_LOOP
    with _ASYNC_LOCK:
        if _ASYNC_LOOP is None:
            _ASYNC_LOOP = asyncio.new_event_loop()
            threading.Thread(target=_ASYNC_LOOP.run_forever, name="memlake-lancedb", daemon=True).start()
    return asyncio.run_coroutine_threadsafe(coroutine, _ASYNC_LOOP)


def run_async(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine of LanceDB's async API on memlake's event-loop thread and wait for it."""
    return submit_async(coroutine).result()


def _forget_loop_after_fork() -> None:
    global _ASYNC_LOOP, _BACKGROUND
    _ASYNC_LOOP = None  # its thread did not survive the fork: the child starts its own on demand
    _BACKGROUND = _background_pool()  # likewise


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_loop_after_fork)


def submit_background(work: Callable[[], Any]) -> Future[Any]:
    """Run `work` on the background snapshot loader (the one of this process: a fork makes its own)."""
    return _BACKGROUND.submit(work)
