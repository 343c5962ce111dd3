"""The CLI's progress bar for long work (`memlake run`, `reindex`, `adapt`): what it does, the step it is on
and how far, on stderr, only for a person at a terminal."""

from __future__ import annotations

import sys

from tqdm import tqdm


class ProgressBar:
    """A bar on stderr of how far long work is (`desc`: what it does, then the step it is on), opened at the
    first report, once the total is known; none under --quiet or when stdout is not a terminal (a script's log)."""

    def __init__(self, desc: str, unit: str, quiet: bool) -> None:
        self.desc, self.unit = desc, unit
        self.shown = not quiet and sys.stdout.isatty()
        self.bar: tqdm | None = None

    def step(self, step: str, done: int, total: int) -> None:
        """A run's step `step` ended: `done` of `total`."""
        self.update(done, total)
        if self.bar is not None:
            self.bar.set_postfix_str(step)

    def update(self, done: int, total: int) -> None:
        if not self.shown:
            return
        if self.bar is None:
            self.bar = tqdm(total=total, desc=self.desc, unit=self.unit, file=sys.stderr, leave=False)
        self.bar.total = total
        self.bar.update(done - self.bar.n)

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *_: object) -> None:
        if self.bar is not None:
            self.bar.close()
