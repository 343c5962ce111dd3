"""The landing sensor: new landing files -> one run over the days they touch; else, days the manifest
holds but no run built (a run stopped after its manifest step) -> one run building them; else, days whose
chunks another chunk recipe built -> one run building them again; else, override or forget entries written
since the facts were last folded, or profiles older profile rules built -> one run folding them."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

import dagster as dg

from memlake.chunks import chunk_recipe, stale_chunk_days
from memlake.facts.overrides import entries_unfolded, log_entries
from memlake.facts.profile import PROFILE_RULES, profiles_outdated
from memlake.lake import Lake
from memlake.landing import manifest_keys, manifest_version, new_landing_files, plan_days, unbuilt_days
from memlake.schemas import LANDING_MANIFEST
from memlake.settings import load_settings
from pipelines.partitions import DAYS, add_requests, range_tags


def landing_run_request(days: set[str], known: Sequence[str], new_keys: list[str]) -> dg.RunRequest:
    """One run: the manifest, plus every partition from the first to the last touched day; the same new files
    are asked for once."""
    tags = {"memlake/new_files": str(len(new_keys)), **range_tags(days, known)}
    key = hashlib.sha256(json.dumps(sorted(new_keys)).encode()).hexdigest()[:16]
    return dg.RunRequest(run_key=f"landing:{key}", tags=tags)


def unbuilt_run_request(days: set[str], known: Sequence[str], manifest_seen: str) -> dg.RunRequest:
    """One landing run over the days the manifest holds but no run built; the same ask is made once."""
    key = hashlib.sha256(json.dumps([manifest_seen, sorted(days)]).encode()).hexdigest()[:16]
    return dg.RunRequest(run_key=f"unbuilt:{key}", tags={"memlake/new_files": "0", **range_tags(days, known)})


def facts_run_request(entries: str) -> dg.RunRequest:
    """One run folding the facts again; the same log entries under the same profile rules are asked for once."""
    return dg.RunRequest(run_key=f"facts:{entries}:{PROFILE_RULES}",
                         tags={"memlake/log_entries": entries, "memlake/profile_rules": PROFILE_RULES})


def rechunk_run_request(days: Sequence[str], known: Sequence[str], recipe: str) -> dg.RunRequest:
    """One run building `days`' chunks again; the same days and recipe are asked for once."""
    key = hashlib.sha256(json.dumps([recipe, sorted(days)]).encode()).hexdigest()[:16]
    return dg.RunRequest(run_key=f"rechunk:{key}", tags={"memlake/chunk_recipe": recipe, **range_tags(days, known)})


_GOING = [dg.DagsterRunStatus.QUEUED, dg.DagsterRunStatus.NOT_STARTED, dg.DagsterRunStatus.STARTING,
          dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.CANCELING]


def landing_run_going(instance: dg.DagsterInstance, job_name: str) -> dg.DagsterRun | None:
    """A run of the landing job that is queued or running, if there is one."""
    going = instance.get_run_records(filters=dg.RunsFilter(job_name=job_name, statuses=_GOING), limit=1)
    return going[0].dagster_run if going else None


def landing_in_progress(instance: dg.DagsterInstance, job_name: str) -> bool:
    """Whether a run of the landing job is queued or running."""
    return landing_run_going(instance, job_name) is not None


def memlake_run_going(instance: dg.DagsterInstance) -> bool:
    """Whether a `memlake run` (an in-process run from the command line) is running on this home."""
    from pipelines.runner import LANDING_TRIGGER, TRIGGER_TAG

    going = dg.RunsFilter(tags={TRIGGER_TAG: LANDING_TRIGGER}, statuses=_GOING)
    return bool(instance.get_run_records(filters=going, limit=1))


def build_landing_sensor(
    job: dg.UnresolvedAssetJobDefinition,
    unpartitioned_job: dg.UnresolvedAssetJobDefinition,
    rechunk_job: dg.UnresolvedAssetJobDefinition,
    facts_job: dg.UnresolvedAssetJobDefinition,
):
    @dg.sensor(
        name="landing_sensor",
        minimum_interval_seconds=30,
        jobs=[job, unpartitioned_job, rechunk_job, facts_job],
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Watches <home>/landing; new files (bytes new to their agent folder) start one run over the "
        "days they touch. "
        "With none, days whose chunks an older chunker or other chunk settings built get them built again, "
        "and override or forget entries written since the last fold (or profiles built by older rules) get the "
        "facts folded again.",
    )
    def landing_sensor(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
        if memlake_run_going(context.instance):  # it ingests what it found; what came after is seen next tick
            return dg.SkipReason("a `memlake run` is going; landing is looked at again once it has ended")
        settings = load_settings()
        lake = Lake(settings.lake_dir)
        manifest = lake.read(LANDING_MANIFEST)
        # what the manifest holds came in through an earlier run, this sensor's or `memlake run`'s; the
        # cursor covers the files of a run still going
        seen = set(json.loads(context.cursor)) if context.cursor else set()
        going = landing_in_progress(context.instance, job.name) or landing_in_progress(
            context.instance, unpartitioned_job.name)
        if not going:  # files asked for by a run that ended before its manifest step (cancelled) are new again
            seen &= manifest_keys(manifest)
        fresh = new_landing_files(settings, seen | manifest_keys(manifest))
        if not fresh:
            if going:
                # it rebuilds its days' chunks itself; the stamps are looked at once it is done
                return dg.SkipReason("no new landing files; a landing run is still going")
            unbuilt = unbuilt_days(lake, manifest)
            if unbuilt:
                known = context.instance.get_dynamic_partitions(DAYS)
                request = unbuilt_run_request(unbuilt, known, manifest_version(manifest))
                return dg.SensorResult(run_requests=[request.with_replaced_attrs(job_name=job.name)],
                                       dynamic_partitions_requests=add_requests(unbuilt, known))
            recipe = chunk_recipe(settings)
            stale = stale_chunk_days(lake, recipe)
            if not stale:
                if entries_unfolded(settings, lake) or profiles_outdated(lake):
                    request = facts_run_request(log_entries(settings)).with_replaced_attrs(job_name=facts_job.name)
                    return dg.SensorResult(run_requests=[request])
                return dg.SkipReason("no new landing files")
            known = context.instance.get_dynamic_partitions(DAYS)
            request = rechunk_run_request(stale, known, recipe).with_replaced_attrs(job_name=rechunk_job.name)
            return dg.SensorResult(run_requests=[request])
        days = plan_days(settings, fresh, manifest)
        known = context.instance.get_dynamic_partitions(DAYS)
        request = landing_run_request(days, known, [f.key for f in fresh])
        asked = context.instance.get_run_records(filters=dg.RunsFilter(tags={"dagster/run_key": str(request.run_key)}))
        if asked:  # the same files were asked for by a run that ended without them: ask again, under a new key
            request = request.with_replaced_attrs(run_key=f"{request.run_key}:again{len(asked)}")
        target = job if days else unpartitioned_job  # only bad files: the manifest quarantines them
        request = request.with_replaced_attrs(job_name=target.name)
        cursor = json.dumps(sorted(seen | {f.key for f in fresh}))
        adds = add_requests(days, known)
        return dg.SensorResult(run_requests=[request], cursor=cursor, dynamic_partitions_requests=adds)

    return landing_sensor
