"""What the next run builds: one decision, taken the same way by `memlake run` and by the landing sensor.

`read_landing_state` looks at the home (new landing files, the manifest, the chunks' recipes, the logs);
`plan_run` is the pure decision over what it saw.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from memlake.chunks import chunk_recipe, stale_chunk_days
from memlake.facts.overrides import entries_unfolded
from memlake.facts.profile import profiles_outdated
from memlake.lake import Lake
from memlake.landing import (
    IgnoredFile,
    LandingFile,
    keys_to_read_again,
    manifest_keys,
    plan_days,
    scan_landing,
    unbuilt_days,
)
from memlake.parsers import ParseLimits
from memlake.schemas import LANDING_MANIFEST
from memlake.settings import Settings


@dataclass(frozen=True)
class LandingState:
    """What the home holds that no run has built yet."""

    new_files: tuple[LandingFile, ...] = ()  # bytes new to their agent folder, and those of `retried_files`
    retried_files: tuple[LandingFile, ...] = ()  # quarantined by a limit that has changed since: read again
    new_days: frozenset[str] = frozenset()  # the days the new files touch
    unbuilt_days: frozenset[str] = frozenset()  # in the manifest, never built (a run stopped after its manifest)
    unfinished_days: frozenset[str] | None = None  # a run that did not finish: its days (None: none, or not asked)
    stale_chunk_days: frozenset[str] = frozenset()  # days whose chunks another chunk recipe built
    entries_unfolded: bool = False  # override or forget entries written since the facts were last folded
    profiles_outdated: bool = False  # profiles older profile rules built
    ignored: tuple[IgnoredFile, ...] = ()  # landing paths left unread, with the reason (the same scan's)


@dataclass(frozen=True)
class RunPlan:
    """The next run: the manifest (always), `days` and everything downstream; with no day, the facts folded
    again when `refold`; then `rechunk_days`' chunks built again with today's recipe."""

    new_files: tuple[LandingFile, ...]  # with the files read again (`retried_files`)
    days: frozenset[str]
    rechunk_days: frozenset[str]
    refold: bool
    retried_files: tuple[LandingFile, ...] = ()

    @property
    def lands(self) -> bool:
        """Whether the landing job has work: new files to fold into the manifest, or days to build."""
        return bool(self.new_files or self.days)


def plan_run(state: LandingState) -> RunPlan:
    """The days new files touch, those the manifest holds unbuilt and those of a run that did not finish,
    in one run; the facts are folded with them (they are downstream), else on their own when the logs or the
    profile rules moved on or an unfinished run may have stopped mid-fold; stale chunks of other days after."""
    days = state.new_days | state.unbuilt_days | (state.unfinished_days or frozenset())
    refold = not days and (state.unfinished_days is not None or state.entries_unfolded or state.profiles_outdated)
    return RunPlan(new_files=state.new_files, days=days, rechunk_days=state.stale_chunk_days - days, refold=refold,
                   retried_files=state.retried_files)


def read_landing_state(
    settings: Settings, seen: Iterable[str] = (), unfinished_days: Iterable[str] | None = None
) -> LandingState:
    """The home as the next run finds it; `seen` are landing keys already asked for (beside the manifest's),
    `unfinished_days` the days of a run that did not finish, if one did not."""
    lake = Lake.of(settings)
    manifest = lake.read(LANDING_MANIFEST)
    limits = ParseLimits.of(settings)
    files, ignored = scan_landing(settings)  # one scan: it hashes every landing file
    known = set(seen) | manifest_keys(manifest, limits)
    fresh = [f for f in files if f.key not in known]
    again = keys_to_read_again(manifest, limits)
    return LandingState(
        new_files=tuple(fresh),
        retried_files=tuple(f for f in fresh if f.key in again),
        new_days=frozenset(plan_days(settings, fresh, manifest)),
        unbuilt_days=frozenset(unbuilt_days(lake, manifest)),
        unfinished_days=None if unfinished_days is None else frozenset(unfinished_days),
        stale_chunk_days=frozenset(stale_chunk_days(lake, chunk_recipe(settings.chunking))),
        entries_unfolded=entries_unfolded(settings, lake),
        profiles_outdated=profiles_outdated(lake),
        ignored=tuple(ignored),
    )
