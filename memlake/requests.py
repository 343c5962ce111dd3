"""One request model per read of `Memory`, with its bounds: the one place a bound is stated. `Memory` checks what
it is asked against these models; the HTTP service's bodies and query parameters, the MCP server's `context` tool
and the CLI's options take their bounds and defaults from here (a compact block's default budget is the
`context_budget_tokens` setting; a full one's is `FULL_BUDGET`, the sum of its sections').

A value out of its bounds is a `BadRequest` whose message names the value and the bound (`checked`).
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError

from memlake.errors import BadRequest

MAX_TEXT = 20_000  # characters of a query, a subject or a fact: more is a mistake, not a memory
# A context block's tokens: the date and the delimiters alone take ~45 (MiniLM's tokenizer), so below 50 no
# memory fits and the block is refused; above 100,000 no model reads it.
MIN_CONTEXT_BUDGET, MAX_CONTEXT_BUDGET = 50, 100_000
# full mode: the sections in priority order (a smaller total budget cuts the last first) and their budgets; their
# sum is a full block's default budget (memlake.context.assemble fits the sections to it)
FULL_SECTIONS = (("profile", 2000), ("working memory", 3000), ("summaries", 3000), ("key relationships", 300),
                 ("matched excerpts", 3000), ("matched memories", 3000), ("matched summaries", 3000))
FULL_BUDGET = sum(tokens for _, tokens in FULL_SECTIONS)
ContextMode = Literal["compact", "full"]
GateMode = Literal["heuristic", "llm", "off"]  # llm: memlake.context.llm_gate, on top of the heuristic
CONTEXT_MODES: tuple[str, ...] = get_args(ContextMode)
GATE_MODES: tuple[str, ...] = get_args(GateMode)
MIN_SEARCH_K, MAX_SEARCH_K = 1, 100  # hits of one search
DEFAULT_SEARCH_K = 10
SearchScope = Literal["chunks", "episodes", "facts", "graph"]  # graph: entities and relations, not an index
SEARCH_SCOPES: tuple[str, ...] = get_args(SearchScope)
MIN_PROFILE_VERSION, MAX_PROFILE_VERSION = 1, 1_000_000
MAX_FACT_TYPE, MAX_SUBJECT, MAX_ID = 40, 500, 200  # characters


class ReadRequest(BaseModel):
    """A read's arguments, agent aside (who asks is checked apart: `check_agent_id`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class SearchRequest(ReadRequest):
    query: StrictStr = Field(title="query", max_length=MAX_TEXT)
    k: StrictInt = Field(DEFAULT_SEARCH_K, title="k", ge=MIN_SEARCH_K, le=MAX_SEARCH_K)
    scope: SearchScope = Field("chunks", title="scope")


class ContextRequest(ReadRequest):
    query: StrictStr = Field(title="query", min_length=1, max_length=MAX_TEXT)
    mode: ContextMode = Field("compact", title="context mode")
    budget: StrictInt | None = Field(None, title="a context budget", ge=MIN_CONTEXT_BUDGET,
                                     le=MAX_CONTEXT_BUDGET)
    gate: GateMode | None = Field(None, title="gate mode")  # None: the `context_gate` setting


class FactsRequest(ReadRequest):
    type: StrictStr | None = Field(None, title="fact type", max_length=MAX_FACT_TYPE)
    subject: StrictStr | None = Field(None, title="subject", max_length=MAX_SUBJECT)
    include_history: StrictBool = Field(False, title="include_history")
    candidates: StrictBool = Field(False, title="candidates")


class HistoryRequest(ReadRequest):
    fact_id: StrictStr = Field(title="fact id", min_length=1, max_length=MAX_ID)


class ProfileRequest(ReadRequest):
    version: StrictInt | None = Field(None, title="a profile version", ge=MIN_PROFILE_VERSION,
                                   le=MAX_PROFILE_VERSION)


Request = TypeVar("Request", bound=ReadRequest)


def checked(model: type[Request], **values: Any) -> Request:
    """`model` of `values`, or a `BadRequest` saying which value is wrong and what it may be."""
    try:
        return model(**values)
    except ValidationError as exc:
        raise BadRequest("; ".join(_said(model, error) for error in exc.errors()[:3])) from None


def _said(model: type[ReadRequest], error: Any) -> str:
    """One value's problem in words: what the field is, the bound it broke, the value."""
    name = str(error["loc"][0]) if error["loc"] else "request"
    field = model.model_fields.get(name)
    title, value, kind = (field.title if field else None) or name, error.get("input"), error["type"]
    bounds = {bound: getattr(m, bound) for m in (field.metadata if field else ()) for bound in ("ge", "le")
              if hasattr(m, bound)}  # pydantic keeps Field(ge=..., le=...) as annotated_types' Ge and Le
    low, high = bounds.get("ge"), bounds.get("le")
    if kind == "extra_forbidden":
        return f"{model.__name__} takes no {name!r}; it takes {', '.join(model.model_fields)}"
    if kind == "literal_error":
        choices = str(error["ctx"]["expected"]).replace("'", "")  # "'compact' or 'full'"
        return f"unknown {title} {value!r}: {choices}"
    if kind.startswith("bool"):
        return f"{title} is True or False, got {value!r}"
    if low is not None and (kind.startswith(("int", "greater", "less"))):
        upto = f" to {high:,}" if high is not None else ""
        return f"{title} must be a whole number from {low:,}{upto}, got {value!r}"
    if kind == "string_too_long":
        return f"{title} is at most {error['ctx']['max_length']:,} characters, got {len(value):,}"
    if kind == "string_type":
        return f"{title} is a string, got {value!r}"
    return f"{title}: {error['msg']}, got {value!r}"
