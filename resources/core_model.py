"""The core-model resource: instructor on the openai client against any OpenAI-compatible endpoint.

What it reaches and how hard it tries are its config `core` (the settings `core_*`, `offline_distiller`; unset:
the home's), shown in the launchpad; the key is apart (through `dg.EnvVar`, so the UI never shows it). No
`core_base_url` means the offline rule-based distiller (unless `offline_distiller` is off: conversations then
wait in `episodes/pending`).
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

import dagster as dg
from pydantic import Field

from memlake.distill.models import Conversation, DistilledSession, DistillError
from memlake.distill.offline import OfflineDistiller
from memlake.distill.pending import NO_DISTILLER
from memlake.distill.run import Distiller
from memlake.settings import Settings
from resources.run_config import CoreModelRunConfig, settings_for_run

if TYPE_CHECKING:
    from memlake.distill.client import CoreConfig


class CoreModelResource(dg.ConfigurableResource):
    """The model that distils conversations: one call per conversation, retries, a circuit breaker."""

    home: str = Field("", description="The memlake home whose settings say which model (empty: MEMLAKE_HOME).")
    api_key: str | None = Field(None, description="API key, through dg.EnvVar('MEMLAKE_CORE_API_KEY'); "
                                "unset: the `core_api_key` setting.")
    core: CoreModelRunConfig = Field(default_factory=CoreModelRunConfig,
                                     description="The endpoint, model and tries (memlake.toml's core_*).")

    @cached_property
    def settings(self) -> Settings:
        """The home's settings with this run's config on top."""
        return settings_for_run(self.home, self.core)

    @property
    def configured(self) -> bool:
        """An endpoint is set (else the offline distiller, if on, does the work)."""
        return bool((self.settings.core_base_url or "").strip())

    def config(self) -> CoreConfig:
        # deferred: openai and instructor cost seconds to import, and load only when a model is set
        from memlake.distill.client import CoreConfig

        return CoreConfig.from_settings(self.settings, self.api_key)

    def distiller(self) -> Distiller | None:
        """A fresh distiller (its usage counts from zero); None when there is none to use."""
        if self.configured:
            from memlake.distill.client import CoreModelDistiller  # deferred: see `config`

            return CoreModelDistiller(self.config())
        return OfflineDistiller() if self.settings.offline_distiller else None

    @cached_property
    def _default(self) -> Distiller | None:
        return self.distiller()

    @property
    def distiller_name(self) -> str:
        if self.configured:
            return self.settings.core_model
        return OfflineDistiller.name if self.settings.offline_distiller else "none"

    def distill(self, conversation: Conversation) -> DistilledSession:
        """One validated DistilledSession (raises DistillError when it cannot be had now)."""
        distiller = self._default
        if distiller is None:
            raise DistillError(NO_DISTILLER)
        return distiller.distill(conversation)
