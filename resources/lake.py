"""The lake resource: the home, the settings its run uses, and its Parquet tables."""

from __future__ import annotations

from datetime import UTC, date, datetime
from functools import cached_property

import dagster as dg
from pydantic import Field

from memlake.lake import Lake
from memlake.schemas import check_day
from memlake.settings import Settings
from resources.run_config import ChunkingRunConfig, FoldRunConfig, LimitsRunConfig, settings_for_run

# The run tags that carry the partition keys a run is for: one key, or the first and last of a range.
PARTITION_TAGS = ("dagster/partition", "dagster/asset_partition_range_start", "dagster/asset_partition_range_end")


class BadPartitionKey(dg.DagsterError):
    """A run asked for a partition key that is not a day memlake can hold: the caller's mistake."""


class LakeResource(dg.ConfigurableResource):
    """One memlake home: settings, paths and the lake writer/reader.

    The settings groups that shape the lake's tables are its config (unset: the home's value): what the launchpad
    shows, and a value changed there holds for that run only.
    """

    home: str = Field("", description="The memlake home the run builds (empty: MEMLAKE_HOME, default ./data).")
    limits: LimitsRunConfig = Field(default_factory=LimitsRunConfig,
                                    description="How much one landing file may hold (memlake.toml's limits).")
    chunking: ChunkingRunConfig = Field(default_factory=ChunkingRunConfig,
                                        description="How turns are cut into search keys (the chunks' recipe).")
    fold: FoldRunConfig = Field(default_factory=FoldRunConfig,
                                description="How the facts fold tells duplicates and contradictions.")

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        """Refuse a run for a partition key that is not a day, before any step reads or writes: Dagster takes
        any text as a key of the day partitions (the UI's partition picker, its `addDynamicPartition`)."""
        tags = context.run.tags if context.run is not None else {}
        for key in (tags[name] for name in PARTITION_TAGS if name in tags):
            problem = day_key_problem(key, datetime.now(UTC).date())
            if problem is not None:  # a Dagster error, so the run's failure is this, not "Error executing
                # resource_fn on ResourceDefinition lake" with the key's problem two causes down
                raise BadPartitionKey(
                    f"partition key {key!r} {problem}: memlake partitions are days with conversations, so this run "
                    "builds nothing. The key stays in the UI until removed: with DAGSTER_HOME set to the home's "
                    "instance (<home>/dagster_home), `python -c \"import dagster as dg; "
                    f"dg.DagsterInstance.get().delete_dynamic_partition('conversation_days', {key!r})\"`"
                )

    @cached_property
    def settings(self) -> Settings:
        """The home's settings with this run's config on top."""
        settings = settings_for_run(self.home, self.limits, self.chunking, self.fold)
        settings.ensure_dirs()
        return settings

    @cached_property
    def lake(self) -> Lake:
        return Lake.of(self.settings)


def day_key_problem(key: str, today: date) -> str | None:
    """Why `key` can be no day partition (None when it can): not a `YYYY-MM-DD` day, or a day after `today`
    (landing refuses conversations dated after the run, so such a day never holds any)."""
    try:
        check_day(key)
    except ValueError:
        return "is not a day (YYYY-MM-DD)"
    if date.fromisoformat(key) > today:
        return f"is a day after today ({today.isoformat()}, UTC)"
    return None
