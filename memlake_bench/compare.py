"""Compares two benchmark reports figure by figure: which figures a change moved, timings left out.

Usage: python -m memlake_bench.compare BEFORE.json AFTER.json [--tolerance T] [--markdown]

Every leaf both reports hold is compared (a number within `--tolerance` of the other is the same: float noise;
anything else must be equal), except timings and the facts of one run (dates, the machine, latencies, seconds,
throughputs, whether an index was reused), which differ between any two runs. Each differing figure is printed
as `path: before -> after`; the paths only one report holds (a system added since, a setting renamed) are listed
too, as information. Exit 1 when a shared figure differs, else 0. `--markdown` adds a table of each system both
hold: its figures compared, how many differ, and its headline figures before and after.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memlake_bench.markdown import markdown_table

# a key (at any depth) naming a timing or a fact of one run, not a figure of the thing measured
RUN_ONLY = re.compile(r"^(date|machine|latency|index_reused)$|seconds|per_second|_ms(_|$)|vs_raw|python_speed")
TOLERANCE = 1e-9  # the figures are rounded to 4 decimals: a real change is 5e-5 or more
HEADLINE = ("turn_any@10", "turn_all@10", "session_all@5", "budget_recall")  # of each system's "all" summary


@dataclass
class Comparison:
    """What comparing two reports found: the paths both hold, those that differ, those only one holds."""
    compared: list[str] = field(default_factory=list)
    differing: list[tuple[str, Any, Any]] = field(default_factory=list)
    only_before: list[str] = field(default_factory=list)
    only_after: list[str] = field(default_factory=list)


def leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted path, value) of every leaf; list items are numbered (`sweeps.3.setting`); run-only keys skipped."""
    if isinstance(value, dict):
        for key, item in value.items():
            if not RUN_ONLY.search(str(key)):
                yield from leaves(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaves(item, f"{path}.{index}" if path else str(index))
    else:
        yield path, value


def same(before: Any, after: Any, tolerance: float = TOLERANCE) -> bool:
    """Numbers within `tolerance` (bools are not numbers here); anything else equal."""
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (before, after))
    return abs(before - after) <= tolerance if numbers else before == after


def compare(before: dict[str, Any], after: dict[str, Any], tolerance: float = TOLERANCE) -> Comparison:
    old, new = dict(leaves(before)), dict(leaves(after))
    found = Comparison(only_before=[p for p in old if p not in new], only_after=[p for p in new if p not in old])
    for path, value in old.items():
        if path in new:
            found.compared.append(path)
            if not same(value, new[path], tolerance):
                found.differing.append((path, value, new[path]))
    return found


def _top(paths: Sequence[str], depth: int = 2) -> list[str]:
    """The distinct first `depth` parts of `paths`, in order: what a list of many leaves is about."""
    return list(dict.fromkeys(".".join(p.split(".")[:depth]) for p in paths))


def system_table(before: dict[str, Any], after: dict[str, Any], found: Comparison) -> str:
    """Each system both reports hold: figures compared, figures differing, headline figures before/after."""
    shared = [name for name in before.get("systems", {}) if name in after.get("systems", {})]
    rows = []
    for name in shared:
        prefix = f"systems.{name}."
        compared = sum(p.startswith(prefix) for p in found.compared)
        differing = sum(p.startswith(prefix) for p, _, _ in found.differing)
        heads = [f"{before['systems'][name]['all'].get(k)} / {after['systems'][name]['all'].get(k)}"
                 for k in HEADLINE]
        rows.append([f"`{name}`", compared, differing, *heads])
    header = ["system", "figures compared", "differ", *(f"{k} before / after" for k in HEADLINE)]
    return markdown_table(header, rows)


def report_lines(found: Comparison) -> list[str]:
    lines = [f"{path}: {old!r} -> {new!r}" for path, old, new in found.differing]
    if found.only_before:
        lines.append(f"only in before ({len(found.only_before)}): {', '.join(_top(found.only_before))}")
    if found.only_after:
        lines.append(f"only in after ({len(found.only_after)}): {', '.join(_top(found.only_after))}")
    lines.append(f"{len(found.compared)} figures compared, {len(found.differing)} differ")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--tolerance", type=float, default=TOLERANCE, help="numbers this close are the same")
    parser.add_argument("--markdown", action="store_true", help="also the table of the systems both hold")
    args = parser.parse_args(argv)
    before, after = (json.loads(path.read_text()) for path in (args.before, args.after))
    found = compare(before, after, args.tolerance)
    print("\n".join(report_lines(found)))
    if args.markdown:
        print("\n" + system_table(before, after, found))
    return 1 if found.differing else 0


if __name__ == "__main__":
    sys.exit(main())
