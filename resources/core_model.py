"""The core-model resource: instructor on the openai client against any OpenAI-compatible endpoint.

No `base_url` means the offline rule-based distiller (unless `offline_distiller`
is off, in which case conversations wait in `episodes/pending`).
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

if TYPE_CHECKING:
    from memlake.distill.client import CoreConfig

MODES = ("tools", "json", "json_schema")


class CoreModel(dg.ConfigurableResource):
    """The model that distils conversations: one call per conversation, retries, a circuit breaker."""

    base_url: str = Field("", description="OpenAI-compatible endpoint (http://localhost:11434/v1); empty = offline.")
    model: str = Field("gpt-4o-mini", description="Model name sent to the endpoint.")
    api_key: str | None = Field(None, description="API key; set through dg.EnvVar('MEMLAKE_CORE_API_KEY').")
    mode: str = Field("tools", description="instructor mode: tools, json or json_schema.")
    timeout_seconds: float = Field(60.0, description="Timeout of one try.")
    max_tries: int = Field(3, description="Tries per call.")
    backoff_seconds: float = Field(1.0, description="First wait between tries; doubles (1 s, 2 s, 4 s).")
    breaker_fail_max: int = Field(5, description="Consecutive failed tries that open the circuit breaker.")
    breaker_reset_seconds: float = Field(60.0, description="Cool-down before the one half-open probe.")
    context_tokens: int = Field(12000, description="Model context; longer conversations are split.")
    offline_distiller: bool = Field(True, description="Use the offline distiller when no endpoint is set.")

    @classmethod
    def from_settings(cls, settings: Settings, api_key: str | dg.EnvVar | None = None) -> CoreModel:
        return cls(
            base_url=settings.core_base_url or "",
            model=settings.core_model,
            api_key=api_key if api_key is not None else settings.core_api_key,  # type: ignore[arg-type]
            mode=settings.core_mode,
            timeout_seconds=settings.core_timeout_seconds,
            max_tries=settings.core_max_tries,
            backoff_seconds=settings.core_backoff_seconds,
            breaker_fail_max=settings.core_breaker_fail_max,
            breaker_reset_seconds=settings.core_breaker_reset_seconds,
            context_tokens=settings.core_context_tokens,
            offline_distiller=settings.offline_distiller,
        )

    @property
    def configured(self) -> bool:
        """An endpoint is set (else the offline distiller, if on, does the work)."""
        return bool(self.base_url.strip())

    def config(self) -> CoreConfig:
        from memlake.distill.client import CoreConfig  # openai and instructor load only when a model is set

        if self.mode not in MODES:
            raise ValueError(f"core model mode {self.mode!r}: expected one of {', '.join(MODES)}")
        return CoreConfig(
            base_url=self.base_url.strip(),
            model=self.model,
            api_key=self.api_key,
            mode=self.mode,  # type: ignore[arg-type]
            timeout_seconds=self.timeout_seconds,
            max_tries=self.max_tries,
            backoff_seconds=self.backoff_seconds,
            breaker_fail_max=self.breaker_fail_max,
            breaker_reset_seconds=self.breaker_reset_seconds,
            context_tokens=self.context_tokens,
        )

    def distiller(self) -> Distiller | None:
        """A fresh distiller (its usage counts from zero); None when there is none to use."""
        if self.configured:
            from memlake.distill.client import CoreModelDistiller

            return CoreModelDistiller(self.config())
        return OfflineDistiller() if self.offline_distiller else None

    @cached_property
    def _default(self) -> Distiller | None:
        return self.distiller()

    @property
    def distiller_name(self) -> str:
        return self.model if self.configured else (OfflineDistiller.name if self.offline_distiller else "none")

    def distill(self, conversation: Conversation) -> DistilledSession:
        """One validated DistilledSession (raises DistillError when it cannot be had now)."""
        distiller = self._default
        if distiller is None:
            raise DistillError(NO_DISTILLER)
        return distiller.distill(conversation)
