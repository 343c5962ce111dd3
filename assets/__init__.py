"""Dagster assets and checks, one module per layer (its assets and checks); `partitions` and `shared` serve
every layer. Imports point one way: pipelines -> assets -> resources -> memlake."""

import warnings

import dagster as dg

# memlake deliberately uses the single-run backfill policy and partitioned asset
# checks; their beta/preview notices are not news to a user of memlake.
warnings.filterwarnings("ignore", category=dg.BetaWarning)
warnings.filterwarnings("ignore", category=dg.PreviewWarning)
