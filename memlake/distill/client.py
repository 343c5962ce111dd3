"""The core-model distiller: instructor on the openai client, against any OpenAI-compatible endpoint.

One conversation is one call (a long one is split into parts, one call each,
merged into one result). Around each call:

- retries with tenacity: `max_tries` tries (3), waiting `backoff_seconds` x 1,
  2, 4 between them (1 s, then 2 s; a 4th try would wait 4 s), only for
  retryable errors (connection errors,
  timeouts, HTTP 408/409/429/5xx, and an answer that is still invalid after
  instructor's one re-ask); `timeout_seconds` per try;
- a circuit breaker (pybreaker): open after `breaker_fail_max` consecutive
  failed tries, `breaker_reset_seconds` cool-down, then one half-open probe
  whose success closes it again. Only endpoint failures count; an invalid
  answer or a client error (4xx) does not. The breaker belongs to the
  endpoint and model and lives as long as the process, so every run and
  resource instance in it shares it;
- token usage and HTTP requests counted per client.

Invalid JSON from the model is re-asked once by instructor (with the
validation error) before it counts as a failed try.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import instructor
import openai
import pybreaker
from instructor.core import InstructorRetryException
from pydantic import BaseModel
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from memlake.distill.models import CircuitOpen, Conversation, DistilledSession, DistillError, Usage
from memlake.distill.prompt import PROMPT_VERSION, build_messages, merge_sessions, split_conversation
from memlake.settings import Settings

Mode = Literal["tools", "json", "json_schema"]
RETRYABLE_STATUS = frozenset({408, 409, 429})
# One re-ask of an invalid answer inside a try (instructor's validation retry).
REASKS = 1


@dataclass(frozen=True)
class CoreConfig:
    """How to reach the core model and how hard to try."""

    base_url: str
    model: str
    api_key: str | None = None
    mode: Mode = "tools"
    timeout_seconds: float = 60.0
    max_tries: int = 3
    backoff_seconds: float = 1.0
    breaker_fail_max: int = 5
    breaker_reset_seconds: float = 60.0
    context_tokens: int = 12000

    @classmethod
    def from_settings(cls, settings: Settings, api_key: str | None = None) -> CoreConfig:
        """The home's `core_*` settings; `api_key` (given) in place of `core_api_key`."""
        return cls(
            base_url=(settings.core_base_url or "").strip(),
            model=settings.core_model,
            api_key=api_key if api_key is not None else settings.core_api_key,
            mode=settings.core_mode,
            timeout_seconds=settings.core_timeout_seconds,
            max_tries=settings.core_max_tries,
            backoff_seconds=settings.core_backoff_seconds,
            breaker_fail_max=settings.core_breaker_fail_max,
            breaker_reset_seconds=settings.core_breaker_reset_seconds,
            context_tokens=settings.core_context_tokens,
        )


_BREAKERS: dict[tuple[str, str], pybreaker.CircuitBreaker] = {}
_BREAKERS_LOCK = threading.Lock()


def breaker_for(config: CoreConfig) -> pybreaker.CircuitBreaker:
    """The process-wide circuit breaker of an endpoint and model (its limits follow the latest config)."""
    key = (config.base_url.rstrip("/"), config.model)
    with _BREAKERS_LOCK:
        breaker = _BREAKERS.get(key)
        if breaker is None:
            breaker = pybreaker.CircuitBreaker(
                fail_max=config.breaker_fail_max,
                reset_timeout=config.breaker_reset_seconds,
                success_threshold=1,
                exclude=[_not_an_endpoint_failure],
                name=f"core-model {key[1]} @ {key[0]}",
            )
            _BREAKERS[key] = breaker
        breaker.fail_max = config.breaker_fail_max
        breaker.reset_timeout = config.breaker_reset_seconds
        return breaker


def reset_breakers() -> None:
    """Forget every breaker (tests)."""
    with _BREAKERS_LOCK:
        _BREAKERS.clear()


def root_cause(exc: BaseException) -> BaseException:
    """The error under instructor's wrapper (InstructorRetryException wraps the API error)."""
    seen = 0
    while exc.__cause__ is not None and seen < 5 and isinstance(exc, InstructorRetryException):
        exc = exc.__cause__
        seen += 1
    return exc


def is_endpoint_failure(exc: BaseException) -> bool:
    """The endpoint is down or overloaded: connection errors, timeouts, 408/409/429, 5xx."""
    cause = root_cause(exc)
    if isinstance(cause, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(cause, openai.APIStatusError):
        return cause.status_code in RETRYABLE_STATUS or cause.status_code >= 500
    return False


def is_invalid_answer(exc: BaseException) -> bool:
    """The endpoint answered, but not with a valid DistilledSession (after the re-ask)."""
    return isinstance(exc, InstructorRetryException) and not isinstance(root_cause(exc), openai.APIError)


def is_retryable(exc: BaseException) -> bool:
    if isinstance(exc, pybreaker.CircuitBreakerError):
        return False
    return is_endpoint_failure(exc) or is_invalid_answer(exc)


def _not_an_endpoint_failure(exc: BaseException) -> bool:
    return not is_endpoint_failure(exc)


def describe(exc: BaseException) -> str:
    cause = root_cause(exc)
    if isinstance(cause, openai.APIStatusError):
        return f"HTTP {cause.status_code} from the core model"
    if isinstance(cause, openai.APITimeoutError):
        return "core model timed out"
    if isinstance(cause, openai.APIConnectionError):
        return "core model unreachable"
    text = str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
    return f"invalid answer from the core model: {text[:200]}"


@dataclass
class CoreModelDistiller:
    """Distils conversations with the core model; one instance per run (usage is per instance). Other callers
    of the core model (profiles, the context gate) `ask` it for their own `response_model` through the same
    retries, breaker and usage counts."""

    config: CoreConfig
    sleep: Callable[[float], None] = time.sleep
    usage: Usage = field(default_factory=Usage)
    response_model: type[BaseModel] = DistilledSession

    def __post_init__(self) -> None:
        self._openai = openai.OpenAI(
            base_url=self.config.base_url,
            api_key=self.config.api_key or "unused",  # local servers take any key
            timeout=self.config.timeout_seconds,
            max_retries=0,  # tenacity retries, with our backoff and breaker
        )
        mode = {
            "tools": instructor.Mode.TOOLS,
            "json": instructor.Mode.JSON,
            "json_schema": instructor.Mode.JSON_SCHEMA,
        }[self.config.mode]
        self._client = instructor.from_openai(self._openai, mode=mode)
        self._client.on("completion:kwargs", self._count_request)
        self._client.on("completion:response", self._count_usage)
        self._client.on("completion:error", self._count_failure)
        self.breaker = breaker_for(self.config)

    @property
    def name(self) -> str:
        return self.config.model

    @property
    def prompt_version(self) -> str | None:
        return PROMPT_VERSION

    def distill(self, conversation: Conversation) -> DistilledSession:
        """One validated result for the conversation, or DistillError (the conversation stays pending)."""
        parts = split_conversation(conversation, self.config.context_tokens)
        results = []
        for number, messages in enumerate(parts, start=1):
            request = build_messages(conversation, messages, number, len(parts))
            results.append(self.ask(request))
        session, _dropped = merge_sessions(results).restricted_to(conversation.message_roles)
        return session

    def ask(self, messages: list[dict[str, Any]]) -> Any:
        """One validated `response_model` answer to `messages`, or DistillError."""
        retrying = Retrying(
            stop=stop_after_attempt(max(1, self.config.max_tries)),
            wait=wait_exponential(
                multiplier=self.config.backoff_seconds,
                min=self.config.backoff_seconds,
                max=4 * self.config.backoff_seconds,
            ),
            retry=retry_if_exception(is_retryable),
            sleep=self.sleep,
            reraise=True,
        )
        requests_before = self.usage.requests
        try:
            for attempt in retrying:
                with attempt:
                    return self.breaker.call(self._create, messages)
        except pybreaker.CircuitBreakerError as exc:
            raise CircuitOpen(f"circuit breaker open: {exc}") from exc
        except Exception as exc:
            if isinstance(exc, InstructorRetryException) or isinstance(root_cause(exc), openai.OpenAIError):
                raise DistillError(describe(exc)) from exc
            raise
        finally:
            if self.usage.requests > requests_before:
                self.usage.calls += 1
        raise AssertionError("unreachable")  # pragma: no cover

    def _create(self, messages: list[dict[str, Any]]) -> Any:
        return self._client.create(
            model=self.config.model,
            messages=messages,  # type: ignore[arg-type]
            response_model=self.response_model,
            max_retries=REASKS,
            strict=False,
            temperature=0,
        )

    def _count_request(self, *args: Any, **kwargs: Any) -> None:
        self.usage.requests += 1

    def _count_usage(self, response: Any) -> None:
        usage = getattr(response, "usage", None)
        if usage is not None:
            self.usage.prompt_tokens += int(getattr(usage, "prompt_tokens", 0) or 0)
            self.usage.completion_tokens += int(getattr(usage, "completion_tokens", 0) or 0)

    def _count_failure(self, error: Any, *args: Any, **kwargs: Any) -> None:
        self.usage.failed_requests += 1

    def breaker_state(self) -> str:
        return str(self.breaker.current_state)
