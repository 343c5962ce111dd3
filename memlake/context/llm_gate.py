"""The gate's `llm` mode: the core model reads the question and names the one section it needs.

One short call per new question (cached for the life of the gate, as the same question gets the same answer),
one try with a short timeout, through the distiller's client (its breaker and usage counts). No model
configured, or the call failed: the heuristic decision, with the reason saying so.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import replace
from typing import Any, Literal

from pydantic import BaseModel, Field

from memlake.context.gate import GateDecision, decide
from memlake.distill.client import CoreConfig, CoreModelDistiller
from memlake.distill.models import DistillError
from memlake.settings import Settings

GATE_PROMPT_VERSION = "gate-1"
_CACHED_QUESTIONS = 4096

_INSTRUCTIONS = """You decide which one kind of long-term memory an assistant needs before it answers a user's \
message. Answer with one section:
- transcript: the user asks for exact words, a quote, what was said verbatim.
- episodes: the message refers to an earlier conversation ("we discussed", "last time", a follow-up about "it").
- identity: the user asks who they are or what the assistant knows about them.
- facts: the message asks about stable facts of the user or of someone they know (where they live, their job, \
preferences, family, plans).
- excerpts: the message asks about an event, a thing said or done, or a person from past conversations that is \
not a stable fact (what happened when, what someone said or did).
- none: the message needs no memory (a greeting, a general question, a task that stands alone).
Give a short reason."""


class GateAnswer(BaseModel):
    section: Literal["transcript", "episodes", "identity", "facts", "excerpts", "none"]
    reason: str = Field("", max_length=300)


def gate_messages(query: str, names: Iterable[str]) -> list[dict[str, Any]]:
    known = ", ".join(list(names)[:50]) or "(none yet)"
    return [{"role": "system", "content": _INSTRUCTIONS},
            {"role": "user", "content": f"Names in the user's memory: {known}\nMessage: {query}"}]


class ModelGate:
    """The llm gate of one home's core model; keep one per process so its cache and breaker are shared."""

    def __init__(self, config: CoreConfig) -> None:
        self.config = config
        self.client = CoreModelDistiller(config, response_model=GateAnswer)
        self._answers: OrderedDict[str, GateAnswer] = OrderedDict()

    @classmethod
    def for_settings(cls, settings: Settings) -> ModelGate | None:
        """The gate of the home's core model, trying once within `context_gate_timeout_seconds`; None when no
        model is configured."""
        if not (settings.core_base_url or "").strip():
            return None
        config = CoreConfig.from_settings(settings)
        return cls(replace(config, max_tries=1, timeout_seconds=min(config.timeout_seconds,
                                                                    settings.context_gate_timeout_seconds)))

    def decide(self, query: str, known_subjects: Iterable[str] = (), known_names: Iterable[str] = ()) -> GateDecision:
        subjects, names = list(known_subjects), list(known_names)
        heuristic = decide(query, "heuristic", subjects, names)
        key = " ".join(query.split()).lower()
        answer = self._answers.get(key)
        if answer is None:
            try:
                answer = self.client.ask(gate_messages(query, [*subjects, *names]))
            except DistillError as exc:
                return replace(heuristic, reason=f"{heuristic.reason} (heuristic: the model gate failed: {exc})")
            self._answers[key] = answer
            while len(self._answers) > _CACHED_QUESTIONS:
                self._answers.popitem(last=False)
        self._answers.move_to_end(key)
        return GateDecision(answer.section, "model", f"the model: {answer.reason or answer.section}",
                            heuristic.wants_history, heuristic.slots)
