"""Every request and response body of `memlake serve`, as Pydantic models: they are the OpenAPI schema."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from memlake import requests as core
from memlake.requests import MAX_TEXT

MAX_TURN_TEXT = 200_000
MAX_TURNS = 2_000
CONTROL_CHARACTER = re.compile(r"[\x00-\x1f\x7f]")

AgentField = Field(None, max_length=200, description="Whose memory; default the X-Memlake-Agent-Id header or "
                   "the token's only agent.")


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ErrorDetail(BaseModel):
    message: str
    type: str


class ErrorResponse(BaseModel):
    """Every refusal, in the shape OpenAI clients read."""

    error: ErrorDetail


class Health(BaseModel):
    status: Literal["ok"]
    tokens: bool = Field(description="Whether bearer tokens are required.")


class AgentInfo(BaseModel):
    agent_id: str
    has_turns: bool


class AgentsResponse(BaseModel):
    agents: list[AgentInfo]


class Rows(BaseModel):
    """Rows of one of the agent's tables, JSON-typed (times in ISO 8601)."""

    agent_id: str
    count: int
    rows: list[dict[str, Any]]


class SearchResponse(Rows):
    scope: str
    mode: str | None = Field(description="hybrid, or full_text when no embedding model loads")
    note: str | None = None


class ContextRequest(core.ContextRequest):
    """`Memory.context`'s request (its bounds are the core's), and whose memory, and as of when."""

    agent_id: str | None = AgentField
    as_of: datetime | None = None


class ContextResponse(BaseModel):
    agent_id: str
    text: str
    token_count: int
    budget: int
    mode: str
    today: str
    gate: dict[str, Any]
    sections: list[dict[str, Any]]
    provenance: list[dict[str, Any]]


class RememberRequest(Strict):
    content: str = Field(min_length=1, max_length=MAX_TEXT)
    agent_id: str | None = AgentField
    replaces: str | None = Field(None, max_length=200)
    type: str | None = Field(None, max_length=40)
    subject: str | None = Field(None, max_length=500)
    slot: str | None = Field(None, max_length=200)
    value: str | None = Field(None, max_length=MAX_TEXT)
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    importance: float | None = Field(None, ge=0, le=1)
    tags: list[str] | None = Field(None, max_length=50)


class RejectRequest(Strict):
    fact_id: str = Field(min_length=1, max_length=200)
    agent_id: str | None = AgentField


class ForgetRequest(Strict):
    agent_id: str | None = AgentField
    fact_id: str | None = Field(None, min_length=1, max_length=200)
    conversation_id: str | None = Field(None, min_length=1, max_length=500)
    everything: bool = Field(False, description="Forget the whole agent: every file and row of it; needs `confirm`.")
    confirm: str | None = Field(None, max_length=200, description="With `everything` only: the agent id, typed "
                                "again (forgetting a whole agent cannot be undone).")
    reason: str | None = Field(None, max_length=2_000)


class ForgetPreviewRequest(Strict):
    query: str = Field(min_length=1, max_length=MAX_TEXT, description="Words of the facts to forget.")
    agent_id: str | None = AgentField


class ToolCallRequest(Strict):
    name: str = Field(max_length=100, description="recall, store, forget or list")
    arguments: dict[str, Any] | str | None = Field(None, description="The tool's arguments, as an object or the "
                                                   "JSON text a model sends.")
    agent_id: str | None = AgentField


class ToolsResponse(BaseModel):
    tools: list[dict[str, Any]] = Field(description="OpenAI function-calling schemas of the memory tools.")


class IngestTurn(Strict):
    user: str | None = Field(None, max_length=MAX_TURN_TEXT)
    assistant: str | None = Field(None, max_length=MAX_TURN_TEXT)


class IngestRequest(Strict):
    agent_id: str | None = AgentField
    conversation_id: str = Field(min_length=1, max_length=500, description="Any text without control characters.")
    turns: list[IngestTurn] = Field(min_length=1, max_length=MAX_TURNS)
    session_date: datetime | None = Field(None, description="When the conversation was held; default: when the "
                                          "request was received.")
    title: str | None = Field(None, max_length=500)
    skip_extraction: bool = Field(False, description="Kept in the file for the pipeline; turns are searchable "
                                  "either way.")

    @field_validator("conversation_id")
    @classmethod
    def _no_control_characters(cls, value: str) -> str:
        """One with a NUL was ingested and then could not be looked up again (the index's filters refuse it)."""
        if CONTROL_CHARACTER.search(value):
            raise ValueError("holds a control character (a NUL, a new line, a tab, ...): a conversation id is one "
                             "line of text")
        return value


class IngestAccepted(BaseModel):
    ingest_id: str
    agent_id: str
    file: str = Field(description="The file, relative to the landing folder.")
    state: Literal["waiting"]


class IngestStatusResponse(BaseModel):
    ingest_id: str
    agent_id: str
    state: Literal["waiting", "ingested", "duplicate", "quarantined"]
    reason: str | None
    searchable: bool
    conversation_ids: list[str]
