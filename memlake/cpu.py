"""How a memlake process shares the machine's cores with the others: a server answering reads keeps numpy's BLAS
on the calling thread, and a batch run yields the cores to the reads (`run_nice`)."""

from __future__ import annotations

import os
from typing import Any


def one_blas_thread() -> Any:
    """Keep numpy's BLAS (OpenBLAS) on the calling thread for the rest of the process; returns the limiter (its
    `restore_original_limits()` undoes it).

    A search multiplies the agent's few thousand stored vectors by one query vector: a second BLAS thread saves
    nothing there, but OpenBLAS keeps it spinning after every call, and on 2 cores that thread burnt 17 ms of CPU
    per search (LoCoMo home: 35.6 ms of process CPU per search, 19.1 ms with one thread; docs/decisions.md)."""
    from threadpoolctl import threadpool_limits  # deferred: it scans the loaded libraries, for servers only

    return threadpool_limits(limits=1, user_api="blas")


def serve_workers() -> int:
    """`memlake serve`'s default number of processes: one per core this process may use, at most 2. Python runs one
    thread at a time per process and a search's Python steps are half its CPU, so one process used about one core
    of two at 8 clients; each process holds its own model and snapshots (~330 MB warm on LoCoMo), hence the cap
    until more cores are measured (docs/decisions.md)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(2, cores))


def yield_cores(niceness: int) -> int:
    """Lower this process's CPU priority to at least `niceness` (the `run_nice` setting; never raised: a run
    started under `nice -n 15` stays at 15); returns the niceness it runs at. A batch run is throughput work: on
    2 cores beside `memlake serve` its parsing, embedding and folding made each search wait its turn."""
    return os.nice(max(0, niceness - os.nice(0)))
