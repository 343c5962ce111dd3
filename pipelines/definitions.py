"""The one Dagster code location of memlake: every layer's assets and checks, the jobs, the sensors and the
maintenance schedules."""

import dagster as dg

from memlake.settings import Settings, load_settings
from pipelines.executor import memlake_in_process_executor
from pipelines.jobs import ASSETS, CHECKS, JOBS
from pipelines.lineage import described_assets
from pipelines.run_status import AUTOMATION_TRIGGER, TRIGGER_TAG
from pipelines.schedules import SCHEDULES
from pipelines.sensors import SENSORS
from resources import build_resources

# On by default, unlike Dagster's own: the folds (facts, profiles) and the indexes follow a table rebuilt alone.
automation_sensor = dg.AutomationConditionSensorDefinition(
    "memlake_automation",
    target=dg.AssetSelection.all(),
    default_status=dg.DefaultSensorStatus.RUNNING,
    run_tags={TRIGGER_TAG: AUTOMATION_TRIGGER},  # its runs' job is Dagster's implicit one: the tag says who
    description="Keeps the facts, profiles and search indexes fresh when what they are built from was "
    "rematerialized on its own (their eager automation conditions).",
)


def build_definitions(resources: dict[str, object] | None = None, settings: Settings | None = None) -> dg.Definitions:
    """The code location over `settings`' home (MEMLAKE_HOME's when none): its lineage describes that home, and
    its resources' config (the launchpad's) holds that home's run settings."""
    # Every job runs its steps in one process, as `memlake run` does: a process per step (Dagster's default)
    # loads the embedding model and the GX import again for each, and a sensor's one-day run took 72 s, not 7.
    # And at `memlake run`'s lower CPU priority: a run beside `memlake serve` made its reads wait.
    settings = settings or load_settings()
    return dg.Definitions(
        executor=memlake_in_process_executor,
        assets=described_assets(ASSETS, settings),
        asset_checks=CHECKS,
        jobs=JOBS,
        sensors=[*SENSORS, automation_sensor],
        schedules=SCHEDULES,
        resources=resources or build_resources(settings),  # their config shows the home's run settings
    )


defs = build_definitions()
