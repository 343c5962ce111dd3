"""`Memory`: the read API over one home, for notebooks, the CLI and the HTTP service.

Every read is scoped to one agent and returns Polars frames.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from memlake.lake import Lake, query
from memlake.schemas import TURNS, is_valid_agent_id
from memlake.settings import Settings, load_settings


def check_agent_id(agent_id: str) -> str:
    if not isinstance(agent_id, str) or not is_valid_agent_id(agent_id):
        raise ValueError(f"invalid agent id {agent_id!r}: expected ^[A-Za-z0-9_.-]{{1,64}}$")
    return agent_id


class Memory:
    """Read access to everything memlake remembers under one home."""

    def __init__(self, home: str | Path | None = None, settings: Settings | None = None) -> None:
        self.settings = settings or load_settings(home)
        self.lake = Lake(self.settings.lake_dir)

    def agents(self) -> list[str]:
        """Agent ids that have at least one turn, sorted."""
        con = self.lake.connect()
        return [r[0] for r in con.execute("SELECT DISTINCT agent_id FROM transcripts.turns ORDER BY 1").fetchall()]

    def turns(self, agent_id: str, conversation_id: str | None = None) -> pl.DataFrame:
        """An agent's turns in conversation order, optionally of one conversation."""
        check_agent_id(agent_id)
        con = self.lake.connect()
        sql = "SELECT * FROM transcripts.turns WHERE agent_id = ?"
        params: list[str] = [agent_id]
        if conversation_id is not None:
            sql += " AND conversation_id = ?"
            params.append(conversation_id)
        sql += " ORDER BY conversation_started_at, conversation_id, turn_index"
        frame = query(con, sql, params)
        return frame.select([*TURNS.schema.names, "day"]) if frame.height else frame
