"""The llm gate (the core model through the local stub server) and the per-agent cache of context blocks."""

import subprocess
import sys

import pytest

from memlake.api import Memory
from memlake.changes import memory_state
from memlake.context.cache import BlockCache
from memlake.lake import Lake
from memlake.schemas import TURNS
from tests.context.test_memory_context import samples_home  # noqa: F401 - the fixture
from tests.openai_stub_server import StubServer

pytestmark = pytest.mark.usefixtures("fresh_breakers")


def routed_to(section: str):
    def answer(request):
        return {"section": section, "reason": "it refers to an earlier chat"}
    return answer


@pytest.fixture
def model_at(monkeypatch):
    def point(server: StubServer) -> None:
        for name, value in {"MEMLAKE_CORE_BASE_URL": server.base_url, "MEMLAKE_CORE_MODEL": "stub-gate",
                            "MEMLAKE_CORE_BACKOFF_SECONDS": "0.01"}.items():
            monkeypatch.setenv(name, value)
    return point


def test_the_llm_gate_asks_the_model_once_per_question_and_says_so(samples_home, model_at):  # noqa: F811
    with StubServer(routed_to("episodes")) as stub:
        model_at(stub)
        memory = Memory(home=samples_home.home)
        block = memory.context("How is the cycling going?", "demo", gate="llm")
        assert (block.gate.section, block.gate.fired) == ("episodes", "model")
        assert "earlier chat" in block.gate.reason and any(s.name == "episodes" and s.lines for s in block.sections)
        assert "How is the cycling going?" in str(stub.requests[0]["messages"])
        memory.context("How is the cycling going?", "demo", gate="llm", budget=600)  # not the cached block
        assert stub.calls == 1  # the same question: the gate's own cache answers


def test_the_llm_gate_falls_back_to_the_heuristic_when_the_model_fails_or_is_not_set(samples_home, model_at,  # noqa: F811
                                                                                     monkeypatch):
    heuristic = Memory(home=samples_home.home).context("Where do I live now?", "demo", gate="heuristic").gate
    unset = Memory(home=samples_home.home).context("Where do I live now?", "demo", gate="llm").gate
    assert unset.section == heuristic.section == "facts" and "no core model is configured" in unset.reason
    with StubServer() as stub:
        stub.default = 500
        model_at(stub)
        failed = Memory(home=samples_home.home).context("Where do I live now?", "demo", gate="llm").gate
    assert failed.section == "facts" and "model gate failed" in failed.reason and stub.calls == 1  # one try


def test_a_block_is_reused_until_another_process_writes_the_agents_memory(samples_home):  # noqa: F811
    memory = Memory(home=samples_home.home)
    question = "What do I like to drink?"
    first = memory.context(question, "demo")
    assert memory.context(question, "demo") is first  # within the cache's seconds, nothing written: reused
    code = ("import sys; from memlake.api import Memory; "
            "Memory(home=sys.argv[1]).remember('demo', 'I like to drink matcha every morning.')")
    subprocess.run([sys.executable, "-c", code, str(samples_home.home)], check=True, timeout=300)
    again = memory.context(question, "demo")
    assert again is not first and "matcha" in again.text


def test_a_write_ends_the_blocks_of_its_agent_only_and_lake_writes_end_all(settings):
    state = BlockCache(10, lambda agent: memory_state(settings, agent)).state
    before = {agent: state(agent) for agent in ("a", "b")}
    Memory(settings=settings).remember("b", "I live in Porto.")
    assert state("a") == before["a"] and state("b") != before["b"]
    Lake(settings.lake_dir).write_partition(TURNS, "2024-01-01", [])
    assert state("a") != before["a"]


def test_a_cached_block_expires_after_its_seconds():
    now = [0.0]
    cache = BlockCache(10, lambda agent: ("same",), clock=lambda: now[0])
    built = []
    def build():
        built.append(object())
        return built[-1]
    assert cache.get("q", "a", build) is cache.get("q", "a", build)
    now[0] = 10.5
    assert cache.get("q", "a", build) is built[1] and len(built) == 2
    assert BlockCache(0, lambda agent: ("same",)).get("q", "a", build) is built[2]  # 0 s: no cache
