"""A first `memlake run` killed after its turns step: the lake holds the agent's turns, but no chunks, episodes,
facts or index yet. A search must not answer "no results" as if the agent had said nothing: it names the
command that builds the rest (`memlake run`)."""

import dagster as dg
import pytest

from assets.partitions import DAYS
from memlake.api import Memory
from pipelines.jobs import ASSETS, CHECKS
from tests.conftest import kill_a_run_holding, land

CHAT = ('{"conversation_id":"c1","role":"user","content":"I lost my job as a banker","created_at":'
        '"2024-03-01T10:00:00Z"}\n')


@pytest.mark.parametrize("scope", ["chunks", "episodes", "facts"])
def test_a_search_after_a_first_run_killed_past_its_turns_names_memlake_run(settings, fast_resources, scope):
    land(settings, "alice", "chat.jsonl", CHAT)
    turns_only = dg.AssetSelection.keys(["transcripts", "landing_manifest"], ["transcripts", "turns"])
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(DAYS, ["2024-03-01"])
    built = dg.materialize([*ASSETS, *CHECKS], selection=turns_only, resources=fast_resources, instance=instance,
                           partition_key="2024-03-01")
    assert built.success
    assert Memory(settings.home).search("banker", "alice", scope=scope).height == 0  # no run stopped: no results

    kill_a_run_holding(settings.home)
    with pytest.raises(ValueError, match=r"lake holds turns of agent 'alice' .* the last `memlake run` \(pid \d+, "
                       r"started .*\) stopped before it finished: run `memlake run`"):
        Memory(settings.home).search("banker", "alice", scope=scope)
    assert Memory(settings.home).search("banker", "bob", scope=scope).height == 0  # bob has said nothing
