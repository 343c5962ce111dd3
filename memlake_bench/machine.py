"""What a benchmark ran on, and how fast that shared machine ran Python at the moment."""

from __future__ import annotations

import os
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np


def python_speed_ms(repeats: int = 7) -> float:
    """Median wall time of one fixed pure-Python loop, in ms: how fast this shared machine runs Python at
    the moment. A timing taken beside it can be read against it; the load average says less on a VM."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        total = 0
        for i in range(200_000):
            total += i * i % 7
        times.append(time.perf_counter() - started)
    return round(float(np.median(times)) * 1000, 2)


def _proc_value(path: str, field: str) -> str | None:
    """The value of the first `field: value` line of a /proc file, or None (no such file or field)."""
    try:
        for line in Path(path).read_text().splitlines():
            if line.startswith(field):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def machine() -> dict[str, Any]:
    cpu = _proc_value("/proc/cpuinfo", "model name") or platform.processor()
    memory_kb = _proc_value("/proc/meminfo", "MemTotal")
    memory_gb = round(int(memory_kb.split()[0]) / 1024 / 1024, 1) if memory_kb else None
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": memory_gb,
        "python": platform.python_version(),
        "platform": platform.platform(),
        # the machine is shared: a 1-minute load average above the core count means every timing is inflated
        "load_average_1m": round(os.getloadavg()[0], 2),
    }
