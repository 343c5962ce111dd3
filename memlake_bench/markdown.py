"""The one way a benchmark writes a Markdown table into docs/benchmarks.md."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def markdown_table(header: Sequence[Any], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(str(c) for c in header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
