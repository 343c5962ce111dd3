"""Bearer tokens of `memlake serve`: `<home>/service/tokens.json` maps each token, stored as its sha256 only, to
the agents it may read and write.

No tokens file means no tokens: the service then listens on loopback only and every caller may use every agent.
Once the file exists, every request needs a token, even after the last one is revoked (then none gets in):
revoking must never open the service.

`TokenStore.grant` is the one gate of `memlake serve` and `memlake mcp --transport http`, asked at every request
(the file is read again when it changed), and `TokenStore.gate_state` says in words what it does now, for
`memlake token list` and the servers' start line.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from memlake.atomic_files import write_text_atomically
from memlake.schemas import check_agent_id

TOKEN_PREFIX = "mlk_"  # so a token pasted into a config or a log is recognisable as a memlake one


class TokenRefused(Exception):
    """The home has tokens and the request brought none that is valid."""


class TokensUnreadable(Exception):
    """The tokens file became unreadable while a server runs: every request is refused until it is fixed."""


def tokens_path(home: Path) -> Path:
    return home / "service" / "tokens.json"


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class TokenEntry:
    """One token as stored: its id (shown, never the secret), its hash and its agents."""

    token_id: str
    sha256: str
    agents: tuple[str, ...]
    created_at: str
    note: str = ""

    def as_json(self) -> dict[str, Any]:
        return {"token_id": self.token_id, "sha256": self.sha256, "agents": list(self.agents),
                "created_at": self.created_at, "note": self.note}


class TokenStore:
    """The tokens file of one home: read at each change, written whole by temp file and rename."""

    def __init__(self, home: Path) -> None:
        self.path = tokens_path(home)
        self._stamp = self._file_stamp()
        self.entries = self._read()
        self._lock = threading.Lock()  # requests on several threads refresh it

    def _file_stamp(self) -> tuple[int, int] | None:
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return None
        return stat.st_mtime_ns, stat.st_size

    def refresh(self) -> None:
        """Read the file again if it changed: a token added or revoked counts from the next request."""
        with self._lock:
            stamp = self._file_stamp()
            if stamp != self._stamp:
                self.entries = self._read()  # before the stamp: a request that sees the new stamp sees these
                self._stamp = stamp

    def _read(self) -> list[TokenEntry]:
        if not self.path.is_file():
            return []
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return [TokenEntry(e["token_id"], e["sha256"], tuple(check_agent_id(a) for a in e["agents"]),
                               e["created_at"], e.get("note", "")) for e in data["tokens"]]
        except (ValueError, KeyError, TypeError) as exc:  # refuse to start open when the file is damaged
            raise ValueError(f"the tokens file {self.path} is not readable ({exc}): fix or remove it") from None

    @property
    def required(self) -> bool:
        """Whether requests need a token: the file exists (it may have no token left)."""
        return self._stamp is not None

    @property
    def configured(self) -> bool:
        """Whether there is a token to use: what listening beyond loopback needs."""
        return bool(self.entries)

    def agents_of(self, token: str) -> tuple[str, ...] | None:
        """The agents a presented token may use, or None for no valid token. Every entry is compared, in
        constant time, so the time taken says nothing about which hash was near."""
        presented = _digest(token)
        found: tuple[str, ...] | None = None
        for entry in self.entries:
            if hmac.compare_digest(presented, entry.sha256):
                found = entry.agents
        return found

    def grant(self, authorization: str | None) -> tuple[str, ...] | None:
        """The agents a request with this Authorization header may use, by the tokens file as it is now: None
        (every agent) when the home has no tokens file; raises TokenRefused when it has one and the header
        holds no bearer token in it (with no token left, every request); raises TokensUnreadable while the
        file is damaged."""
        try:
            self.refresh()
        except ValueError as exc:  # never open, never a crash: refused, saying why, until the file is fixed
            raise TokensUnreadable(f"{exc}; every request is refused until then") from None
        if not self.required:
            return None
        scheme, _, token = (authorization or "").partition(" ")
        agents = self.agents_of(token.strip()) if scheme.lower() == "bearer" and token.strip() else None
        if agents is None:
            raise TokenRefused("a valid bearer token is required (Authorization: Bearer <token>)")
        return agents

    def gate_state(self) -> str:
        """What `grant` does now, in words."""
        self.refresh()
        if not self.required:
            return ("no tokens: `memlake serve` and `memlake mcp` listen on loopback only and every agent is open "
                    "to every caller")
        if not self.entries:
            return ("no token left: every request for memory is refused until a token is added (`memlake token add "
                    f"--agent A`); removing {self.path} would let every caller on loopback use every agent again")
        return (f"{len(self.entries)} token(s): every request needs one, and reads and writes only the agents it "
                "names")

    def add(self, agents: list[str], note: str = "") -> tuple[str, TokenEntry]:
        """A new token for `agents`: the secret (shown once, never stored) and its entry."""
        if not agents:
            raise ValueError("a token needs at least one agent (--agent)")
        checked = tuple(dict.fromkeys(check_agent_id(a) for a in agents))
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        entry = TokenEntry(secrets.token_hex(4), _digest(token), checked,
                           datetime.now(UTC).isoformat(timespec="seconds"), note)
        self.entries = [*self._read(), entry]  # the file as it is now: another process may have changed it
        self._write()
        return token, entry

    def revoke(self, token_id: str) -> TokenEntry:
        self.entries = self._read()
        kept = [e for e in self.entries if e.token_id != token_id]
        if len(kept) == len(self.entries):
            known = ", ".join(e.token_id for e in self.entries) or "none"
            raise ValueError(f"no token with id {token_id!r}; token ids: {known}")
        gone = next(e for e in self.entries if e.token_id == token_id)
        self.entries = kept
        self._write()
        return gone

    def _write(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        payload = json.dumps({"tokens": [e.as_json() for e in self.entries]}, indent=2)
        write_text_atomically(self.path, payload, mode=0o600)  # hashes only, but nobody else needs to read them
        self._stamp = self._file_stamp()
