"""The one Dagster code location of memlake: every layer's assets, checks, jobs, sensors and schedules."""

from __future__ import annotations

from types import ModuleType

import dagster as dg

from assets import chunks as chunk_assets
from assets import episodes as episode_assets
from assets import facts as fact_assets
from assets import search as search_assets
from assets import transcripts
from memlake.settings import Settings
from pipelines.sensors import build_landing_sensor
from resources import Embedder, LakeResource
from resources.core_model import CoreModel
from resources.vectors import VectorStore

LAYER_MODULES: list[ModuleType] = [transcripts, chunk_assets, episode_assets, fact_assets, search_assets]

ASSETS = [a for module in LAYER_MODULES for a in module.ASSETS]
CHECKS = [c for module in LAYER_MODULES for c in module.CHECKS]

# New landing files: the manifest, the touched days of turns, and everything downstream, in one run.
landing_job_selection = dg.AssetSelection.assets(transcripts.landing_manifest).downstream()
manifest_job_selection = dg.AssetSelection.assets(transcripts.landing_manifest)
landing_job = dg.define_asset_job(
    "landing_job",
    selection=landing_job_selection,
    description="Fold new landing files into the manifest and rebuild the days they touch, and all downstream.",
)
# The search indexes (chunks, episodes, facts) from the lake alone: after losing lancedb/, or for a new model.
reindex_selection = dg.AssetSelection.groups("search")
# The same with the chunks built again from the turns first: for chunk kinds or chunk settings a home's
# chunks predate (an upgrade that adds a kind, a new window size).
rechunk_selection = dg.AssetSelection.assets(chunk_assets.chunks) | reindex_selection
rechunk_job = dg.define_asset_job(
    "rechunk_job",
    selection=rechunk_selection,
    description="Build the chosen days' chunks again from the turns, then their LanceDB indexes (the landing "
    "sensor asks for it when a day's chunks were built by an older chunker or other chunk settings).",
)
reindex_job = dg.define_asset_job(
    "reindex_job",
    selection=reindex_selection,
    description="Rebuild the LanceDB indexes of the chosen days from the lake (no landing file is read).",
)
# Override and forget entries written since the last fold, with no new chats: the facts, the profiles, fact search.
facts_selection = dg.AssetSelection.assets(fact_assets.FACTS_KEY, fact_assets.EDGES_KEY).downstream()
facts_job = dg.define_asset_job(
    "facts_job",
    selection=facts_selection,
    description="Fold the facts again with the override and forget logs, then the profiles and fact search "
    "(the landing sensor asks for it when entries were written since the last fold and no chats came in).",
)
# A drop of only bad files touches no day: the manifest alone records and quarantines them.
manifest_job = dg.define_asset_job(
    "manifest_job",
    selection=manifest_job_selection,
    description="Fold the landing folder into the manifest (quarantines bad files).",
)


def default_resources(settings: Settings | None = None) -> dict[str, object]:
    """The resources of a normal run: the home's lake and the configured embedder."""
    settings = settings or Settings()
    return {
        "lake": LakeResource(home=str(settings.home)),
        "embedder": Embedder(
            model=settings.embedding_model, batch_size=settings.embedding_batch_size, home=str(settings.home)
        ),
        "vectors": VectorStore(home=str(settings.home)),
        "core_model": CoreModel.from_settings(settings, api_key=core_api_key(settings)),
    }


def core_api_key(settings: Settings) -> str | dg.EnvVar | None:
    """The core model's key through dg.EnvVar when the environment has it (never shown in the UI)."""
    import os

    return dg.EnvVar("MEMLAKE_CORE_API_KEY") if os.environ.get("MEMLAKE_CORE_API_KEY") else settings.core_api_key


# On by default, unlike Dagster's own: the folds (facts, profiles) and the indexes follow a table rebuilt alone.
automation_sensor = dg.AutomationConditionSensorDefinition(
    "memlake_automation",
    target=dg.AssetSelection.all(),
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Keeps the facts, profiles and search indexes fresh when what they are built from was "
    "rematerialized on its own (their eager automation conditions).",
)


def build_definitions(resources: dict[str, object] | None = None) -> dg.Definitions:
    # Every job runs its steps in one process, as `memlake run` does: a process per step (Dagster's default)
    # loads the embedding model and the GX import again for each, and a sensor's one-day run took 72 s, not 7.
    return dg.Definitions(
        executor=dg.in_process_executor,
        assets=ASSETS,
        asset_checks=CHECKS,
        jobs=[landing_job, manifest_job, reindex_job, rechunk_job, facts_job, *episode_assets.JOBS],
        sensors=[build_landing_sensor(landing_job, manifest_job, rechunk_job, facts_job), *episode_assets.SENSORS,
                 automation_sensor],
        resources=resources or default_resources(),
    )


defs = build_definitions()
