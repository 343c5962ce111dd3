"""The Dagster code location: definitions, sensors, schedules, partitions, and the in-process runner."""

import warnings

import dagster as dg

# memlake deliberately uses the single-run backfill policy and partitioned asset
# checks; their beta/preview notices are not news to a user of memlake.
warnings.filterwarnings("ignore", category=dg.BetaWarning)
warnings.filterwarnings("ignore", category=dg.PreviewWarning)
