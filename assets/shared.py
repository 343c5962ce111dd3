"""What every layer's assets share: the lake writers' pool, UI metadata, and the eager automation condition."""

import json
import re
from collections.abc import Callable, Iterable, Mapping

import dagster as dg
import polars as pl

from assets.inputs import SOURCES
from memlake.schemas import PARTITION_COLUMN

# Writers of the lake's unpartitioned tables (the landing manifest, the folds: facts, profiles, graph, maintenance)
# run one at a time (a Dagster concurrency pool, limit 1: the instance's default).
LAKE_WRITERS = "memlake_lake_writers"
# Writers of one day's partitions (turns, chunks, episodes): each writes only its days' files, whole (a swap per
# file, its stamp in its own footer), so runs over different days may write at once: as many as `run_workers`
# (the pool's limit, set on the instance by `pipelines.runs.ensure_dagster_home`).
DAY_WRITERS = "memlake_day_writers"
# Writers of the LanceDB indexes run one at a time, across runs too: two LanceDB merges of the same days at once
# both insert the rows neither saw, and the index keeps both copies (measured; see docs/decisions.md).
INDEX_WRITERS = "memlake_index_writers"
DAYS_JOB = "days_job"  # the job of the runs that build days at once (`run_workers` > 1): pipelines/jobs.py


# A text column shown in a preview: an id, key, hash, date or label, never what someone said. Dagster keeps every
# run's metadata in its own storage, where a forget cannot reach: a message, a fact or a name is never put there.
_LABEL_COLUMN = re.compile(
    r"(^|_)(id|ids|key|keys|sha256|hash|day|date|type|kind|status|format|archive|slot|relation|role|writer|rule|"
    r"version|model|partition|scope|section|judge|distiller)$")


def markdown_preview(frame: pl.DataFrame, limit: int = 10) -> dg.MetadataValue:
    """A small Markdown table for the Dagster UI: ids, labels, counts and dates of the first rows, no text."""
    head = frame.head(limit).select([name for name, dtype in frame.schema.items()
                                     if _LABEL_COLUMN.search(name) or not _holds_text(dtype)])
    if head.height == 0:
        return dg.MetadataValue.md("_(no rows)_")
    header = "| " + " | ".join(head.columns) + " |\n| " + " | ".join("---" for _ in head.columns) + " |\n"
    body = "\n".join("| " + " | ".join(_cell(v) for v in row) + " |" for row in head.iter_rows())
    return dg.MetadataValue.md(header + body)


def _holds_text(dtype: pl.DataType) -> bool:
    """Whether a column of this type can hold text (a string, or a list or struct with one inside)."""
    if dtype in (pl.String, pl.Categorical, pl.Object, pl.Binary):
        return True
    inner = getattr(dtype, "inner", None)
    if inner is not None:
        return _holds_text(inner)
    return any(_holds_text(field.dtype) for field in getattr(dtype, "fields", []) or [])


def run_totals(
    context: dg.AssetExecutionContext, what: str, rows: int, days: int, totals: Mapping[str, object]
) -> dict[str, object]:
    """The metadata of a run's materialization over `days` days: its row count and `totals` when it is one day (they
    are that day's figures). Dagster gives a range run's metadata to every day of it: a backfill's day showed the
    whole run's `rows_in_run` and `days_in_run` (issue 40). So a range run's totals are said once, in the run's log
    (`what`: the asset), and each day shows only its own (`per_day_metadata`)."""
    if days == 1:
        return {"dagster/row_count": rows, **totals}
    said = {"rows_in_run": rows, "days_in_run": days,
            **{name: getattr(value, "value", value) for name, value in totals.items() if name != "preview"}}
    # at DEBUG: stored with the run and shown in the UI's run log, but not among what `memlake run` prints (INFO),
    # whose own report says the run's counts
    context.log.debug(f"{what}{RUN_TOTALS} {days} days (each day's materialization shows its own): "
                     + json.dumps(said, default=str))
    return {}


RUN_TOTALS = ": the run's totals over its"  # a run's log line of an asset's totals: the asset, this, the days, JSON


def said_run_totals(messages: Iterable[str], what: str) -> dict[str, object]:
    """The totals `run_totals` said of `what` (an asset) in a run's log `messages`; empty when it said none (a run
    of one day: its totals are that day's metadata)."""
    said = [message for message in messages if message.startswith(what + RUN_TOTALS)]
    return json.loads(said[-1][said[-1].index("{"):]) if said else {}


def per_day_metadata(
    context: dg.AssetExecutionContext,
    frame: pl.DataFrame,
    days: Iterable[str],
    describe: Callable[[pl.DataFrame], Mapping[str, object]],
    asset_key: dg.AssetKey | None = None,
) -> None:
    """Each built day's own metadata (`describe` of that day's rows of `frame`) on that day's materialization.
    Dagster gives a range run's metadata to every day in the range: a backfill's day showed the whole run's row
    count and a preview of other days' conversations, and had no `dagster/row_count` history."""
    for day in days:
        day_rows = frame.filter(pl.col(PARTITION_COLUMN) == day) if frame.height else frame
        context.add_asset_metadata(dict(describe(day_rows)), asset_key=asset_key, partition_key=day)


def _cell(value: object, width: int = 160) -> str:
    """A value as one Markdown table cell: on one line, its pipes escaped, long text cut."""
    text = " ".join(str(value).split())
    return (text[:width] + "…" if len(text) > width else text).replace("|", "\\|")


# The folds (facts, profiles) and the indexes follow a table that was rebuilt alone (a UI click, pending retries).
# The inputs (landing, the logs) are never materialized: Dagster's eager holds an asset while a parent is missing,
# which a source always is, so it looks past them (their changes come in through the sensors' runs).
EAGER = dg.AutomationCondition.eager().replace(
    "any_deps_missing", dg.AutomationCondition.any_deps_missing().ignore(SOURCES)).with_label("eager")
# A day's chunks and episodes follow its turns when that day is rebuilt alone (the UI's "Materialize" on one day),
# so its indexes and the folds never read stale rows (issue 40); not when the turns' blocking check failed, which
# a run would have stopped at. The distill cache keeps an unchanged conversation from costing a model call.
EAGER_AFTER_CHECKS = (EAGER & dg.AutomationCondition.all_deps_blocking_checks_passed()).with_label(
    "eager, once the parents' blocking checks passed")
# A fold over every day (facts, graph) waits while a day table it reads is itself due (its own condition holds this
# tick): the day's turns rebuilt alone asked for its episodes and the facts at once, and the facts folded the old
# episodes, then again after the new ones. A day table is asked for in a run of its own (its partitions), so
# `will_be_requested` (same run only) cannot say it.
DAY_TABLES = dg.AssetSelection.assets(["transcripts", "chunks"], ["episodes", "episodes"])
EAGER_AFTER_THE_DAYS = (
    EAGER & ~dg.AutomationCondition.any_deps_match(EAGER_AFTER_CHECKS).allow(DAY_TABLES)
).with_label("eager, after the day tables it reads")
