"""Maintenance sweeps over the facts and episodes of every agent, computed as of a time the run gives.

- `consolidate`: decay by kind, merge near-duplicate episodes, promote, evict, prune.
- `lint`: stale facts, redundancy, orphan episodes, contradiction candidates.
- `judge`: the contradiction judges (offline rules always; the core model when configured).
- `tables`: sweep ids and the three tables a sweep writes (fact_status, reports, audit).
- `status`: the one join of the latest sweeps' fact_status onto the facts a read sees.
- `sweep`: a sweep from the lake to its tables, as `memlake maintain` and the Dagster asset run it.

A sweep never rewrites `facts/*`: it writes `maintenance/*`, and reads join the latest fact_status.
"""
