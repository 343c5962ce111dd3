"""How a benchmark builds its home: it is handed the pipeline's runs (`memlake_bench.in_process.IN_PROCESS` is the
one the `memlake bench` commands give), so no other benchmark module imports Dagster."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from memlake.settings import Settings, load_settings, write_home_setting


@dataclass
class HomeRun:
    """What one run over a benchmark's home did."""

    success: bool
    detail: str = ""  # what went wrong, for the error a benchmark raises
    step_seconds: dict[str, float] = field(default_factory=dict)  # Dagster step key -> seconds
    chunk_index: dict[str, float] = field(default_factory=dict)  # the chunk index step's numeric metadata


class HomePipeline(Protocol):
    """Runs of the whole pipeline over a home, in process; the home's own settings (its memlake.toml) rule."""

    def land(self, settings: Settings) -> HomeRun:
        """Ingest what is new in the home's landing folder and build every layer."""
        ...

    def reindex(self, settings: Settings) -> HomeRun:
        """Build every search index again from the home's lake alone."""
        ...


def home_with_model(home: Path, model: str) -> Settings:
    """The settings of a benchmark's `home`, its embedding model written to its memlake.toml: the pipeline's
    resources, and any later read of the home, take it from there."""
    home.mkdir(parents=True, exist_ok=True)
    write_home_setting(home, "embedding_model", model)
    return load_settings(home)
