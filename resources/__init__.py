"""Dagster resources: thin, typed wrappers that hand the domain core a home's settings and tools. Each is built
from the home alone (`build_resources`) and reads everything else from that home's one `Settings`."""

import os

import dagster as dg

from memlake.settings import Settings, load_settings
from resources.core_model import CoreModelResource
from resources.embedder import EmbedderResource, HashEmbedderResource
from resources.lake import LakeResource
from resources.vectors import VectorStoreResource

__all__ = ["CoreModelResource", "EmbedderResource", "HashEmbedderResource", "LakeResource", "VectorStoreResource",
           "build_resources"]


def build_resources(settings: Settings | None = None) -> dict[str, object]:
    """The resources of a normal run over `settings`' home; with none, over MEMLAKE_HOME as it is when they are
    used (the code location's). They read the home's settings themselves, so settings changed in memory only
    (`load_settings(home, key=value)`) would not reach them: those are refused, naming the keys."""
    if settings is not None:
        _refuse_settings_in_memory_only(settings)
    home = str(settings.home) if settings is not None else ""
    # the key through dg.EnvVar when the environment has it, so the UI never shows it
    api_key = dg.EnvVar("MEMLAKE_CORE_API_KEY") if os.environ.get("MEMLAKE_CORE_API_KEY") else None
    return {
        "lake": LakeResource(home=home),
        "embedder": EmbedderResource(home=home, model=""),
        "vectors": VectorStoreResource(home=home),
        "core_model": CoreModelResource(home=home, api_key=api_key),
    }


def _refuse_settings_in_memory_only(settings: Settings) -> None:
    on_disk = load_settings(settings.home)
    differ = sorted(name for name in Settings.model_fields if getattr(settings, name) != getattr(on_disk, name))
    if differ:
        raise ValueError(f"settings {', '.join(differ)} differ from {settings.home}'s own (its memlake.toml and "
                         "MEMLAKE_* variables): the resources read the home's, so write them there "
                         "(memlake.settings.write_home_setting)")
