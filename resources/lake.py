"""The lake resource: the home's settings and its Parquet tables."""

from __future__ import annotations

from functools import cached_property

import dagster as dg

from memlake.lake import Lake
from memlake.settings import Settings, load_settings


class LakeResource(dg.ConfigurableResource):
    """One memlake home: settings, paths and the lake writer/reader.

    `home` empty means MEMLAKE_HOME (default ./data).
    """

    home: str = ""

    @cached_property
    def settings(self) -> Settings:
        settings = load_settings(self.home or None)
        settings.ensure_dirs()
        return settings

    @cached_property
    def lake(self) -> Lake:
        return Lake(self.settings.lake_dir)
