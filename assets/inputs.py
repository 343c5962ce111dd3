"""Inputs layer: what the pipeline reads that it never writes, as source nodes of the lineage.

The landing folder people and the service drop exports into, and the append-only logs people write through
`Memory` (overrides, forgets, uses, undone merges). memlake never materializes these; the assets that read one
depend on it, so the UI's lineage starts where the data does (issue 40). Their folders and a log's columns are
added per home by `pipelines.lineage`.
"""

import dagster as dg

from memlake.schemas import ACCESS, FORGET, GRAPH_SPLITS, OVERRIDES, Table

GROUP = "inputs"

LANDING = dg.AssetSpec(
    [GROUP, "landing"],
    group_name=GROUP,
    description="One row per message in the files dropped under landing/<agent_id>/ (chat exports, archives, the "
    "service's ingests); the landing scan reads them into the manifest and the turns.",
)


def _log(table: Table, description: str) -> dg.AssetSpec:
    return dg.AssetSpec([GROUP, table.name], group_name=GROUP, kinds={"parquet"}, description=description)


OVERRIDES_LOG = _log(OVERRIDES, "One row per fact a person added, corrected or rejected; the facts fold applies them.")
FORGET_LOG = _log(FORGET, "One row per forget asked (an agent, a conversation or a fact); the folds leave it out.")
ACCESS_LOG = _log(ACCESS, "One row per memory an agent used; the consolidation sweep counts the uses of facts.")
SPLITS_LOG = _log(GRAPH_SPLITS, "One row per entity merge a person undid; every graph build keeps it undone.")

LOG_TABLES = {spec.key: table for spec, table in ((OVERRIDES_LOG, OVERRIDES), (FORGET_LOG, FORGET),
                                                  (ACCESS_LOG, ACCESS), (SPLITS_LOG, GRAPH_SPLITS))}
ASSETS = [LANDING, OVERRIDES_LOG, FORGET_LOG, ACCESS_LOG, SPLITS_LOG]
# Never materialized: an automation condition that waits for missing parents must not wait for these. By key: a
# group selection leaves out source assets.
SOURCES = dg.AssetSelection.assets(*(spec.key for spec in ASSETS))
CHECKS: list[dg.AssetChecksDefinition] = []
