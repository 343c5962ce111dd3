"""What every layer's assets share: the lake writers' pool, UI metadata, and the eager automation condition."""

import dagster as dg
import polars as pl

# Writers of the lake run one at a time (a Dagster concurrency pool).
LAKE_WRITERS = "memlake_lake_writers"


def markdown_preview(frame: pl.DataFrame, limit: int = 10) -> dg.MetadataValue:
    """A small Markdown table for the Dagster UI."""
    head = frame.head(limit)
    if head.height == 0:
        return dg.MetadataValue.md("_(no rows)_")
    header = "| " + " | ".join(head.columns) + " |\n| " + " | ".join("---" for _ in head.columns) + " |\n"
    body = "\n".join("| " + " | ".join(_cell(v) for v in row) + " |" for row in head.iter_rows())
    return dg.MetadataValue.md(header + body)


def row_count(rows: int, days: int) -> dict[str, int]:
    """Row-count metadata for a run over `days` days. Dagster gives a range run's metadata to each day it
    covers, so `dagster/row_count` (the UI's per-day history) is set only when the run is one day."""
    return {"dagster/row_count": rows} if days == 1 else {"rows_in_run": rows, "days_in_run": days}


def _cell(value: object, width: int = 160) -> str:
    """A value as one Markdown table cell: on one line, its pipes escaped, long text cut."""
    text = " ".join(str(value).split())
    return (text[:width] + "…" if len(text) > width else text).replace("|", "\\|")


# The folds (facts, profiles) and the indexes follow a table that was rebuilt alone (a UI click, pending retries).
EAGER = dg.AutomationCondition.eager()
