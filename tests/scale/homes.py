"""A sample home for the scale tests, as a user makes one: settings written to its memlake.toml, the samples landed;
its run, in process, on the home's own Dagster instance (as `memlake run` uses); and what a user reads back from it
through `Memory`."""

import shutil

from memlake.api import Memory
from memlake.lake import Lake
from memlake.schemas import TURNS
from memlake.settings import load_settings, write_home_setting
from pipelines.runs import run_landing
from resources import HashEmbedderResource, build_resources
from tests.conftest import SAMPLES, land_samples
from tests.scale.object_storage import store_environment

AS_OF = "2030-01-01"


def sample_home(tmp_path, name, monkeypatch, *, landing: str = "samples", **written):
    """A home with `landing` landed: "samples" (every sample), "notes chat" (the samples' notes chat alone: one
    agent, eight conversations on eight days, every layer built at a fraction of the whole samples' time) or
    "nothing" (a host that serves a store another host builds)."""
    home = tmp_path / name
    home.mkdir()
    monkeypatch.setenv("MEMLAKE_HOME", str(home))
    monkeypatch.delenv("DAGSTER_HOME", raising=False)  # a run points it at its home's instance folder
    for key, value in written.items():  # in the home's memlake.toml, as a user sets it
        write_home_setting(home, key, value)
    settings = load_settings(home)
    settings.ensure_dirs()
    if landing == "notes chat":
        (settings.landing_dir / "demo").mkdir(parents=True)
        shutil.copy(SAMPLES / "demo" / "notes_chat.jsonl", settings.landing_dir / "demo")
    elif landing == "samples":
        land_samples(settings)
    return settings


def run_samples(settings):
    resources = build_resources(settings)
    resources["embedder"] = HashEmbedderResource()
    return run_landing(settings, resources=resources)  # the home's own instance, as `memlake run` uses


def object_store_environment(monkeypatch, endpoint: str) -> None:
    """The store's endpoint and keys in the standard variables: the keys are never in the home's settings."""
    for name, value in store_environment(endpoint).items():
        monkeypatch.setenv(name, value)


def queries_of(settings) -> dict[str, list[str]]:
    """A few phrasings per agent, taken from its own turns (the first words of some)."""
    turns = Lake.of(settings).read(TURNS).sort("conversation_id", "turn_index")
    return {agent: [" ".join(text.split()[:5]) for text in group["content"].to_list()[::7][:4]]
            for (agent,), group in turns.group_by("agent_id", maintain_order=True)}


def memory_of(settings, queries) -> dict:
    """What `Memory` answers for each agent: its turns, facts, search hits (chunks and facts) and context blocks."""
    memory = Memory(settings=settings)
    read = {}
    assert memory.agents_with_turns() == sorted(queries)
    for agent, phrasings in queries.items():
        read[agent] = {
            "turns": memory.turns(agent).select("day", "conversation_id", "turn_index", "content").rows(),
            "facts": sorted(memory.facts(agent).select("fact_id", "type", "subject", "content").rows()),
            "search": [memory.search(q, agent, as_of=AS_OF).select("conversation_id", "message_ids", "text").rows()
                       for q in phrasings],
            "facts search": [memory.search(q, agent, scope="facts", as_of=AS_OF).select("text").rows()
                             for q in phrasings],
            "context": [memory.context(q, agent, mode="full", as_of=AS_OF).text for q in phrasings],
        }
    return read
