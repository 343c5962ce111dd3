"""What every route of `memlake serve` shares: who the caller is and which agent a request may touch
(`Caller.agent`), the warm `Memory` read by every request at once and written by one at a time (`Service`), and
the one shape of a refusal."""

from __future__ import annotations

import contextlib
import hashlib
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from fastapi.responses import JSONResponse
from filelock import FileLock

from memlake.api import Memory
from memlake.embedding import count_packaged_tokens
from memlake.schemas import agent_id_problem
from memlake.settings import Settings
from memlake.tools import MemoryTools
from service.config import ServiceSettings
from service.tokens import TokenRefused, TokenStore, TokensUnreadable

T = TypeVar("T")
WRITING_TOOLS = ("store", "forget")  # the memory tools that append to the agent's logs
WRITES_LOCK = ".memlake-serve-writes.lock"  # in the home: the writes of every worker process of `memlake serve`


@contextlib.contextmanager
def writes_across_hosts(settings: Settings) -> Iterator[None]:
    """One write at a time across the replicas of every host whose home is on one store (`storage_uri`): a
    PostgreSQL advisory lock keyed on the store, in the Dagster instance's database (`dagster_postgres_url`), held
    by this write's session and let go when it ends, a killed process's too. A forget rewrites lake tables and a
    remember reads the agent's facts before it appends: two at once on two hosts would each miss the other's.
    Without both settings the home is one host's, and the file lock covers its processes."""
    if not (settings.storage_uri and settings.dagster_postgres_url):
        yield
        return
    import psycopg2  # deferred: PostgreSQL's client (dagster-postgres's), only on a shared store

    key = int.from_bytes(hashlib.sha256(settings.storage_uri.encode()).digest()[:8], "big", signed=True)
    session = psycopg2.connect(settings.dagster_postgres_url)
    try:
        with session.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s)", (key,))
        yield
    finally:
        session.close()  # the session's end lets the lock go


class ServiceError(Exception):
    """A refusal with its HTTP status, rendered as an OpenAI-style error."""

    def __init__(self, status: int, message: str, kind: str = "invalid_request_error",
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.kind, self.headers = status, message, kind, headers


def error_response(status: int, message: str, kind: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind}}, status_code=status, headers=headers)


def two_agents(named: Iterable[str], where: str = "") -> ServiceError:
    return ServiceError(400, f"the request names two agents{where} ({', '.join(sorted(map(repr, set(named))))}): "
                        "name one")


def named_once(values: Sequence[str], where: str) -> None:
    """A header or query parameter sent more than once must name one agent each time: the framework would read
    only one of them (the first header, the last query parameter), so a request naming two would be silently
    taken for one."""
    if len(set(values)) > 1:
        raise two_agents(values, where)


@dataclass(frozen=True)
class Caller:
    """Who is asking: the agents their token grants (None: no tokens configured, every agent)."""

    agents: tuple[str, ...] | None

    def agent(self, *asked: str | None) -> str:
        """The one agent this request is about: the ones it names (body or query, header) must agree, else the
        token's only agent; checked against the id rule and the token."""
        named = {a for a in asked if a is not None}
        if len(named) > 1:
            raise two_agents(named)
        if not named:
            if self.agents is not None and len(self.agents) == 1:
                return self.agents[0]
            raise ServiceError(400, "which agent? give agent_id or the X-Memlake-Agent-Id header")
        agent_id = named.pop()
        problem = agent_id_problem(agent_id)
        if problem is not None:
            raise ServiceError(400, f"invalid agent id {agent_id[:80]!r}: {problem}")
        if self.agents is not None and agent_id not in self.agents:
            raise ServiceError(403, f"this token may not use agent {agent_id!r}", "permission_error")
        return agent_id


class Service:
    """What the routes share: the warm `Memory`, the tokens and the settings.

    Reads run side by side on the server's threads (`Memory` fills its caches under its own locks); writes
    (remember, reject, forget, the tools that store or forget) run one at a time, as a notebook makes them: each
    reads the agent's facts, then appends what follows from them."""

    def __init__(self, memory: Memory, config: ServiceSettings) -> None:
        self.memory = memory
        self.config = config
        self.tokens = TokenStore(memory.settings.home)
        self._writes = threading.Lock()
        # `--workers N` runs N processes over one home: one write at a time across them too (an OS file lock,
        # let go with a killed process)
        self._writes_across = FileLock(memory.settings.home / WRITES_LOCK)

    def write(self, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        with self._writes, self._writes_across, writes_across_hosts(self.memory.settings):
            return call(*args, **kwargs)

    def tool(self, agent_id: str, name: str, arguments: dict[str, Any] | str | None) -> dict[str, Any]:
        """One memory tool call for the agent: a read at once, a write in turn."""
        call = MemoryTools(self.memory, agent_id).call
        return self.write(call, name, arguments) if name in WRITING_TOOLS else call(name, arguments)

    def warm(self) -> None:
        """Load the embedding model, the tokenizer and open the indexes now, not on the first request."""
        with contextlib.suppress(ValueError):  # an index to rebuild says so on a real request
            self.memory.search("warm up", "memlake-warm-up", k=1)
        count_packaged_tokens("warm up")

    def caller(self, authorization: str | None) -> Caller:
        try:
            return Caller(self.tokens.grant(authorization))
        except TokenRefused as exc:
            raise ServiceError(401, str(exc), "authentication_error") from None
        except TokensUnreadable as exc:
            raise ServiceError(503, str(exc), "server_error") from None
