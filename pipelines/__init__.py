"""The Dagster side's top: the code location (definitions), jobs, sensors, the in-process runs, and the `memlake`
command (cli). Imports point one way: pipelines -> assets -> resources -> memlake."""
