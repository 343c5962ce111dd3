"""The sensors. The landing sensor asks `memlake.run_plan` what the next run builds, as `memlake run` does, and
asks for one run per tick: new landing files -> one run over the days they touch (with any days the manifest
holds unbuilt); else days the manifest holds but no run built (a run stopped after its manifest step); else
days whose chunks another chunk recipe built; else the facts folded again (override or forget entries written
since the last fold, or profiles older profile rules built). The pending sensor retries conversations waiting
for the distiller. Both read the home from the lake resource they are given."""

import hashlib
import json
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from datetime import UTC, datetime

import dagster as dg
import polars as pl

from assets.partitions import DAYS, add_requests, range_tags
from memlake.chunks import chunk_recipe
from memlake.erase import erase_forgotten_landing
from memlake.facts.overrides import log_entries
from memlake.facts.profile import PROFILE_RULES
from memlake.landing import manifest_keys, manifest_version
from memlake.landing_inbox import take_inbox
from memlake.parsers import ParseLimits
from memlake.run_plan import plan_run, read_landing_state
from memlake.schemas import LANDING_MANIFEST, PENDING
from pipelines.jobs import facts_job, landing_job, manifest_job, pending_job, rechunk_job
from pipelines.run_status import SENSOR_TRIGGER, TRIGGER_TAG, landing_in_progress, memlake_run_going
from resources.lake import LakeResource


def landing_run_request(days: AbstractSet[str], known: Sequence[str], new_keys: list[str]) -> dg.RunRequest:
    """One run: the manifest, plus every partition from the first to the last touched day; the same new files
    are asked for once."""
    tags = {TRIGGER_TAG: SENSOR_TRIGGER, "memlake/new_files": str(len(new_keys)), **range_tags(days, known)}
    key = hashlib.sha256(json.dumps(sorted(new_keys)).encode()).hexdigest()[:16]
    return dg.RunRequest(run_key=f"landing:{key}", tags=tags)


def unbuilt_run_request(days: AbstractSet[str], known: Sequence[str], manifest_seen: str) -> dg.RunRequest:
    """One landing run over the days the manifest holds but no run built; the same ask is made once."""
    key = hashlib.sha256(json.dumps([manifest_seen, sorted(days)]).encode()).hexdigest()[:16]
    return dg.RunRequest(run_key=f"unbuilt:{key}", tags={TRIGGER_TAG: SENSOR_TRIGGER, "memlake/new_files": "0",
                                                                **range_tags(days, known)})


def facts_run_request(entries: str) -> dg.RunRequest:
    """One run folding the facts again; the same log entries under the same profile rules are asked for once."""
    return dg.RunRequest(run_key=f"facts:{entries}:{PROFILE_RULES}",
                         tags={TRIGGER_TAG: SENSOR_TRIGGER, "memlake/log_entries": entries,
                               "memlake/profile_rules": PROFILE_RULES})


def rechunk_run_request(days: Sequence[str], known: Sequence[str], recipe: str) -> dg.RunRequest:
    """One run building `days`' chunks again; the same days and recipe are asked for once."""
    key = hashlib.sha256(json.dumps([recipe, sorted(days)]).encode()).hexdigest()[:16]
    return dg.RunRequest(run_key=f"rechunk:{key}", tags={TRIGGER_TAG: SENSOR_TRIGGER,
                                                                         "memlake/chunk_recipe": recipe,
                                                                         **range_tags(days, known)})


@dg.sensor(
    name="landing_sensor",
    minimum_interval_seconds=30,
    jobs=[landing_job, manifest_job, rechunk_job, facts_job],
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Watches <home>/landing; new files (bytes new to their agent folder) start one run over the "
    "days they touch. "
    "With none, days whose chunks an older chunker or other chunk settings built get them built again, "
    "and override or forget entries written since the last fold (or profiles built by older rules) get the "
    "facts folded again.",
)
def landing_sensor(context: dg.SensorEvaluationContext, lake: LakeResource) -> dg.SensorResult | dg.SkipReason:
    if memlake_run_going(context.instance):  # it ingests what it found; what came after is seen next tick
        return dg.SkipReason("a `memlake run` is going; landing is looked at again once it has ended")
    settings = lake.settings
    manifest = lake.lake.read(LANDING_MANIFEST)
    # what the manifest holds came in through an earlier run, this sensor's or `memlake run`'s; the
    # cursor covers the files of a run still going
    seen = set(json.loads(context.cursor)) if context.cursor else set()
    going = landing_in_progress(context.instance, landing_job.name) or landing_in_progress(
        context.instance, manifest_job.name)
    if not going:  # files asked for by a run that ended before its manifest step (cancelled) are new again
        # and so are files quarantined by a limit that has changed since (read again)
        seen &= manifest_keys(manifest, ParseLimits.of(settings))
    take_inbox(settings)  # conversations sent to any host's replica of a shared store (memlake.landing_inbox)
    erase_forgotten_landing(settings)  # and what a forget on another host's replica could not erase here
    plan = plan_run(read_landing_state(settings, seen))
    known = context.instance.get_dynamic_partitions(DAYS)
    if plan.new_files:
        request = landing_run_request(plan.days, known, [f.key for f in plan.new_files])
        asked = context.instance.get_run_records(filters=dg.RunsFilter(tags={"dagster/run_key": str(request.run_key)}))
        if asked:  # the same files were asked for by a run that ended without them: ask again, under a new key
            request = request.with_replaced_attrs(run_key=f"{request.run_key}:again{len(asked)}")
        target = landing_job if plan.days else manifest_job  # only bad files: the manifest quarantines them
        cursor = json.dumps(sorted(seen | {f.key for f in plan.new_files}))
        return dg.SensorResult(run_requests=[request.with_replaced_attrs(job_name=target.name)], cursor=cursor,
                               dynamic_partitions_requests=add_requests(plan.days, known))
    if going:  # it rebuilds its days' chunks itself; the stamps are looked at once it is done
        return dg.SkipReason("no new landing files; a landing run is still going")
    if plan.days:
        request = unbuilt_run_request(plan.days, known, manifest_version(manifest))
        return dg.SensorResult(run_requests=[request.with_replaced_attrs(job_name=landing_job.name)],
                               dynamic_partitions_requests=add_requests(plan.days, known))
    if plan.rechunk_days:
        request = rechunk_run_request(sorted(plan.rechunk_days), known, chunk_recipe(settings.chunking))
        return dg.SensorResult(run_requests=[request.with_replaced_attrs(job_name=rechunk_job.name)])
    if plan.refold:
        request = facts_run_request(log_entries(settings)).with_replaced_attrs(job_name=facts_job.name)
        return dg.SensorResult(run_requests=[request])
    return dg.SkipReason("no new landing files")


PENDING_RETRY_SECONDS = 300


def pending_run_request(pending: pl.DataFrame, now: datetime, known: Sequence[str]) -> dg.RunRequest | None:
    """One run over the days that have pending conversations, as of `now` (None when nothing waits);
    `known` is the day partitions' order."""
    if pending.height == 0:
        return None
    days = sorted(set(pending["day"].to_list()))
    bucket = int(now.timestamp() // PENDING_RETRY_SECONDS)
    return dg.RunRequest(
        run_key=f"pending:{days[0]}:{days[-1]}:{pending.height}:{bucket}",
        run_config={"ops": {"episodes": {"config": {"as_of": now.isoformat()}}}},
        tags={**range_tags(days, known), TRIGGER_TAG: "pending_sensor", "memlake/pending": str(pending.height)},
    )


@dg.sensor(
    name="pending_sensor",
    job=pending_job,
    minimum_interval_seconds=PENDING_RETRY_SECONDS,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Every 5 minutes, reruns the days of episodes/pending so waiting conversations are distilled "
    "once the model answers again or their debounce is over. Nothing stays pending for good.",
)
def pending_sensor(context: dg.SensorEvaluationContext, lake: LakeResource) -> dg.SensorResult | dg.SkipReason:
    pending = lake.lake.read(PENDING)
    known = context.instance.get_dynamic_partitions(DAYS)
    request = pending_run_request(pending, datetime.now(UTC), known)
    if request is None:
        return dg.SkipReason("no pending conversations")
    adds = add_requests(pending["day"].to_list(), known)  # a home whose days predate day partitions
    return dg.SensorResult(run_requests=[request], dynamic_partitions_requests=adds)


SENSORS = [landing_sensor, pending_sensor]
