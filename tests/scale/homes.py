"""A sample home for the scale tests, as a user makes one: settings written to its memlake.toml, the samples landed;
and its run, in process, on the home's own Dagster instance (as `memlake run` uses)."""

from memlake.settings import load_settings, write_home_setting
from pipelines.runs import run_landing
from resources import HashEmbedderResource, build_resources
from tests.conftest import land_samples


def sample_home(tmp_path, name, monkeypatch, **written):
    home = tmp_path / name
    home.mkdir()
    monkeypatch.setenv("MEMLAKE_HOME", str(home))
    monkeypatch.delenv("DAGSTER_HOME", raising=False)  # a run points it at its home's instance folder
    for key, value in written.items():  # in the home's memlake.toml, as a user sets it
        write_home_setting(home, key, value)
    settings = load_settings(home)
    settings.ensure_dirs()
    land_samples(settings)
    return settings


def run_samples(settings):
    resources = build_resources(settings)
    resources["embedder"] = HashEmbedderResource()
    return run_landing(settings, resources=resources)  # the home's own instance, as `memlake run` uses
