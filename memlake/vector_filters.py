"""The SQL clauses every read of the LanceDB store is filtered by: one agent id, validated and quoted here, and
the structured filters of a search (`Filters`), the scopes a `sync` replaces (`day_scope`, `key_scope`).

Part of `memlake.vectors`, which re-exports these names.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memlake.errors import BadRequest
from memlake.moments import utc
from memlake.schemas import ROLES, check_agent_id, check_day


def quote(value: str) -> str:
    """A SQL string literal: single quotes doubled, NUL refused."""
    if "\x00" in value:
        raise BadRequest("NUL in a filter value")
    return "'" + value.replace("'", "''") + "'"


def agent_filter(agent_id: str) -> str:
    return f"agent_id = {quote(check_agent_id(agent_id))}"


@dataclass(frozen=True)
class Filters:
    """What a search may return, beyond the agent: time range, roles, conversations, kinds."""

    since: datetime | None = None
    until: datetime | None = None
    roles: tuple[str, ...] = ()
    conversation_ids: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    extra: tuple[str, ...] = field(default=())  # trusted clauses built by memlake code only

    def __post_init__(self) -> None:  # a filter that can match nothing is a mistake, not an empty answer
        unknown = [role for role in self.roles if role not in ROLES]
        if unknown:
            raise BadRequest(f"unknown role {', '.join(map(repr, unknown))}: one of {', '.join(ROLES)}")
        if self.since is not None and self.until is not None and utc(self.since) >= utc(self.until):
            raise BadRequest(f"since ({self.since:%Y-%m-%d %H:%M}) is not before until ({self.until:%Y-%m-%d %H:%M})")

    def where(self, agent_id: str, time_column: str = "created_at") -> str:
        clauses = [agent_filter(agent_id)]
        if self.since is not None:
            clauses.append(f"{time_column} >= timestamp {quote(utc(self.since).strftime('%Y-%m-%d %H:%M:%S.%f'))}")
        if self.until is not None:
            clauses.append(f"{time_column} < timestamp {quote(utc(self.until).strftime('%Y-%m-%d %H:%M:%S.%f'))}")
        for column, values in (("role", self.roles), ("conversation_id", self.conversation_ids), ("kind", self.kinds)):
            if values:
                clauses.append(f"{column} IN ({', '.join(quote(v) for v in values)})")
        clauses.extend(self.extra)
        return " AND ".join(f"({c})" for c in clauses)

    def accepts(self, row: dict[str, Any], time_column: str = "created_at") -> bool:
        """The structured part of the filter (not `extra`), checked on a fetched row."""
        moment = row.get(time_column)
        if self.since is not None and (moment is None or utc(moment) < utc(self.since)):
            return False
        if self.until is not None and (moment is None or utc(moment) >= utc(self.until)):
            return False
        return all(
            not values or row.get(column) in values
            for column, values in (("role", self.roles), ("conversation_id", self.conversation_ids),
                                   ("kind", self.kinds))
        )



def key_column(table: Any) -> str | None:
    """The key column of an index table: the first column, by construction of `index_schema` callers."""
    name = table.schema.names[0]
    return name if name.endswith(("_id", "_key")) else None


def day_scope(days: Iterable[str]) -> str:
    """The filter of some daily partitions (validated `YYYY-MM-DD`)."""
    return key_scope("day", [check_day(day) for day in days])


def key_scope(key: str, values: Iterable[str]) -> str:
    """The filter `key IN (values)` (quoted), or `false` for no values."""
    values = sorted(set(values))
    return f"{key} IN ({', '.join(quote(v) for v in values)})" if values else "false"
