"""The executor of every run Dagster launches from this code location (the landing, pending and automation
sensors, the schedules, the UI): Dagster's in-process executor, in a run process that first lowers its CPU
priority as `memlake run` does, so `memlake serve` on the same cores answers reads first."""

import dagster as dg

from memlake.cpu import yield_cores
from memlake.settings import load_settings


@dg.executor(name="memlake_in_process", config_schema=dg.in_process_executor.config_schema.as_field())
def memlake_in_process_executor(init_context: dg.InitExecutorContext) -> dg.Executor:
    """Every step in the run's one process (a process per step loads the embedding model again for each), at the
    niceness `run_nice` of the home the code location serves (MEMLAKE_HOME, as the resources read it). Dagster
    makes the executor in the run's own process, when the run starts: the sensors' and the UI's processes keep
    their priority."""
    yield_cores(load_settings().run_nice)
    return dg.in_process_executor.executor_creation_fn(init_context)  # type: ignore[misc]
