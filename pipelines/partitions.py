"""Daily partitions by conversation start date (UTC), shared by every per-day asset."""

import dagster as dg

from memlake.settings import Settings

# end_offset=1: today's partition exists, so a chat from this morning is ingested today.
daily_partitions = dg.DailyPartitionsDefinition(
    start_date=Settings().partition_start_date, timezone="UTC", end_offset=1
)
