"""The jobs, and the asset selections the in-process runs are made of."""

import dagster as dg

from assets import chunks, episodes, facts, graph, inputs, maintenance, search, transcripts
from assets.episodes import EPISODES_KEY, PENDING_KEY
from assets.facts import EDGES_KEY, FACTS_KEY
from assets.shared import DAYS_JOB
from pipelines.run_status import TRIGGER_TAG, UI_TRIGGER


# A run says what started it (its `memlake/trigger` tag). Every launcher of memlake's names itself (memlake run and
# the CLI's other commands, the sensors, the schedules); a run of a job launched with no such tag was launched from
# the UI (its Jobs page, its launchpad): the job's own run tag says so, and a launcher's tag overrides it. On the job,
# where Dagster puts a run's default tags, not set afterwards by a sensor watching runs start (issue 40).
def memlake_job(name: str, **job):  # type: ignore[no-untyped-def]  # dagster does not export the type
    """`dg.define_asset_job`, its runs tagged as the UI's unless their launcher names itself."""
    return dg.define_asset_job(name, tags={TRIGGER_TAG: UI_TRIGGER}, **job)


LAYERS = [inputs, transcripts, chunks, episodes, facts, search, graph, maintenance]
ASSETS = [a for layer in LAYERS for a in layer.ASSETS]
CHECKS = [c for layer in LAYERS for c in layer.CHECKS]

# The maintenance sweeps (consolidation, lint) run on their schedules or on demand, never as part of a
# landing, fold or distill run: those selections leave them out.
maintenance_selection = dg.AssetSelection.assets(maintenance.maintenance_sweep)
# New landing files: the manifest, the touched days of turns, and everything downstream, in one run.
landing_job_selection = dg.AssetSelection.assets(transcripts.landing_manifest).downstream() - maintenance_selection
manifest_job_selection = dg.AssetSelection.assets(transcripts.landing_manifest)
landing_job = memlake_job(
    "landing_job",
    selection=landing_job_selection,
    description="Fold new landing files into the manifest and rebuild the days they touch, and all downstream.",
)
# Days built in parallel (`run_workers` > 1): the landing job split in three, run in turn by `memlake run`: the
# manifest (once), then the per-day assets in one run per share of the days (runs at once), then the folds over
# every day (facts, profiles, graph, fact search) once. Every partitioned asset of the landing job is a day asset.
days_selection = landing_job_selection & dg.AssetSelection.assets(
    *(a for a in ASSETS if isinstance(a, dg.AssetsDefinition) and a.partitions_def is not None))
folds_selection = landing_job_selection - manifest_job_selection - days_selection
days_job = memlake_job(
    DAYS_JOB,
    selection=days_selection,
    description="Build the chosen days' turns, chunks (their vectors embedded too), episodes and their indexes; "
    "one of the runs `memlake run` launches at once with `run_workers` > 1.",
)
folds_job = memlake_job(
    "folds_job",
    selection=folds_selection,
    description="Fold every day into the facts, the profiles, the graph and fact search, once the day runs of a "
    "`memlake run` with `run_workers` > 1 have built their days.",
)
# The search indexes (chunks, episodes, facts) from the lake alone: after losing lancedb/, or for a new model.
reindex_selection = dg.AssetSelection.groups("search")
# The same with the chunks built again from the turns first: for chunk kinds or chunk settings a home's
# chunks predate (an upgrade that adds a kind, a new window size).
rechunk_selection = dg.AssetSelection.assets(chunks.chunks) | reindex_selection
rechunk_job = memlake_job(
    "rechunk_job",
    selection=rechunk_selection,
    description="Build the chosen days' chunks again from the turns, then their LanceDB indexes (the landing "
    "sensor asks for it when a day's chunks were built by an older chunker or other chunk settings).",
)
reindex_job = memlake_job(
    "reindex_job",
    selection=reindex_selection,
    description="Rebuild the LanceDB indexes of the chosen days from the lake (no landing file is read).",
)
# Override and forget entries written since the last fold, with no new chats: the facts, the profiles, fact search.
facts_selection = dg.AssetSelection.assets(FACTS_KEY, EDGES_KEY).downstream() - maintenance_selection
facts_job = memlake_job(
    "facts_job",
    selection=facts_selection,
    description="Fold the facts again with the override and forget logs, then the profiles and fact search "
    "(the landing sensor asks for it when entries were written since the last fold and no chats came in).",
)
# A drop of only bad files touches no day: the manifest alone records and quarantines them.
manifest_job = memlake_job(
    "manifest_job",
    selection=manifest_job_selection,
    description="Fold the landing folder into the manifest (quarantines bad files).",
)
# What `memlake run` builds when no day is touched but override or forget entries came in since the last fold.
manifest_facts_job = memlake_job(
    "manifest_facts_job",
    selection=manifest_job_selection | facts_selection,
    description="Fold the landing folder into the manifest, then the facts again with the override and forget "
    "logs, the profiles and fact search (`memlake run` with no new day but new log entries).",
)
# Conversations waiting for the distiller, and what is built from their episodes.
pending_selection = dg.AssetSelection.assets(EPISODES_KEY, PENDING_KEY).downstream() - maintenance_selection
pending_job = memlake_job(
    "pending_job",
    selection=pending_selection,
    description="Distil the conversations still pending (model back, debounce over) and rebuild what follows.",
)

# The maintenance sweeps: the sweep asset and its memory-health checks, as consolidation or as lint.


def sweep_run_config(kind: str, as_of: str = "") -> dict[str, object]:
    """The run config of one sweep of `kind` as of `as_of` (ISO; empty = when it runs)."""
    return {"ops": {maintenance.SWEEP_OP: {"config": {"kind": kind, "as_of": as_of}}}}


def sweep_job(kind: str, description: str):  # type: ignore[no-untyped-def]  # dagster does not export the type
    """The job of one sweep kind: the sweep asset (configured as `kind`, as of when it runs) and its checks."""
    return memlake_job(f"{kind}_job", selection=maintenance_selection, config=sweep_run_config(kind),
                               description=description)


consolidation_job = sweep_job(
    "consolidation",
    "Consolidate memory as of a time: decay by kind, promote, evict idle facts, merge near-duplicate episodes, "
    "prune past the retention; then the memory-health checks.",
)
lint_job = sweep_job(
    "lint",
    "Lint memory as of a time: stale facts, redundancy, orphan episodes, contradictions (offline rules, and the "
    "core model when configured); then the memory-health checks.",
)

SWEEP_JOBS = {"consolidation": consolidation_job, "lint": lint_job}

# The UI's "Materialize" (and its partitions dialog) launches in the first job, by name, that holds every selected
# asset (dagster-webserver 1.13's `getCommonJob` takes the first of an asset's job names, which the code location
# lists sorted). That was Dagster's `__ASSET_JOB`, so a click's run was named by accident (issue 40). This job
# holds every asset and sorts before it (an upper-case letter sorts before "_"): a click's run is named, and
# tagged, for what started it. Every asset is in it, so any selection has it in common; the sweep still asks its
# kind (no default), and a backfill stays one run (every partitioned asset's policy is single-run).
UI_JOB = "UI_materialize"
ui_job = memlake_job(
    UI_JOB,
    selection=dg.AssetSelection.all(),
    description="What the UI's Materialize launches: the assets picked in the UI (not a schedule or sensor).",
)

JOBS = [landing_job, manifest_job, manifest_facts_job, days_job, folds_job, reindex_job, rechunk_job, facts_job,
        pending_job, consolidation_job, lint_job, ui_job]
