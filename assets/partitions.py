"""Day partitions: one per conversation start date (UTC) that has data, shared by every per-day asset.

They are dynamic, not a `DailyPartitionsDefinition`: Dagster records one event per
partition per step of a run, and a run over a calendar range pays for every empty
day in it (LoCoMo's 218 days with data span 722 days). Keys are ISO dates, added
in date order as files land; a day that lands late goes after the others, so a
run's range (first to last touched day in that order) may cover days it did not
touch. Such a run carries the days it is for in the `memlake/days` tag, and the
assets build only those (`run_days`); a range picked in the UI has no tag and
builds every day in it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import dagster as dg

from memlake.schemas import check_day

DAYS = "conversation_days"
RUN_DAYS = "memlake/days"  # run tag: the days of a range run that it is for
day_partitions = dg.DynamicPartitionsDefinition(name=DAYS)


def unknown_days(days: Iterable[str], known: Sequence[str]) -> list[str]:
    """The days not yet registered, in date order (the order they are appended in)."""
    return sorted(set(days) - set(known))


def range_tags(days: Iterable[str], known: Sequence[str]) -> dict[str, str]:
    """Tags for one run over `days`: the range from the first to the last of them in the partitions'
    order, once the days not in `known` are appended, and the days themselves when the range holds others."""
    days = set(days)
    if not days:
        return {}
    order = [*known, *unknown_days(days, known)]
    positions = [i for i, day in enumerate(order) if day in days]
    first, last = positions[0], positions[-1]
    tags = {"dagster/asset_partition_range_start": order[first], "dagster/asset_partition_range_end": order[last]}
    if last - first + 1 > len(days):
        tags[RUN_DAYS] = ",".join(sorted(days))
    return tags


def days_of_run(tags: Mapping[str, str], known: Sequence[str]) -> list[str]:
    """The days a run over a range was for, from its tags (`range_tags`) and the partitions' order."""
    if tags.get(RUN_DAYS):
        return sorted(tags[RUN_DAYS].split(","))
    start, end = tags.get("dagster/asset_partition_range_start"), tags.get("dagster/asset_partition_range_end")
    if start not in known or end not in known:
        return []
    return sorted(known[known.index(start) : known.index(end) + 1])


def run_days(context: dg.AssetExecutionContext | dg.AssetCheckExecutionContext) -> list[str]:
    """The days a run builds: its partition keys, narrowed to its `memlake/days` tag when it has one."""
    keys = list(context.partition_keys)
    asked = context.run.tags.get(RUN_DAYS)
    if not asked:
        return keys
    wanted = set(asked.split(","))
    return [day for day in keys if day in wanted]


def checked_days(context: dg.AssetCheckExecutionContext) -> list[str] | None:
    """The days a check looks at: its run's (`run_days`), or every day (None) when it runs on its own,
    outside a partitioned run (the UI's Execute on a check)."""
    return run_days(context) if context.op_execution_context.has_partition_key_range else None


def add_requests(days: Iterable[str], known: Sequence[str]) -> list[dg.AddDynamicPartitionsRequest]:
    """What a sensor returns beside its run request so that Dagster adds the unknown days first."""
    new = unknown_days(days, known)
    return [day_partitions.build_add_request(new)] if new else []


def register_days(instance: dg.DagsterInstance, days: Iterable[str], lake_days: Iterable[str] = ()) -> dict[str, str]:
    """Register the days `instance` does not know yet (with `lake_days`, those the lake already has:
    a home written before day partitions); the range tags of one run over `days`."""
    days = set(days)
    known = instance.get_dynamic_partitions(DAYS)
    new = unknown_days(days | set(lake_days), known)
    for day in new:
        check_day(day)  # a key stays for good
    if new:
        instance.add_dynamic_partitions(DAYS, new)
    return range_tags(days, [*known, *new])

