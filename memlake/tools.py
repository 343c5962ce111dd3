"""The memory tools (recall, store, forget, list): OpenAI function-calling schemas and the one dispatcher that runs
them over `Memory`, for one agent. The HTTP service and the MCP server expose `TOOLS` and `MemoryTools.call` as is.

Every result is a JSON-able dict. Memory text travels only as values of named fields (`text`, `content`), never
spliced into prose, so a caller can keep it apart from its instructions. A bad call is a result too:
`{"ok": false, "error": {"kind": ..., "message": ...}}`; no exception leaves `call`.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable
from datetime import date, datetime
from typing import Any

import polars as pl

from memlake.api import Memory
from memlake.disk_faults import disk_fault
from memlake.errors import BadRequest, MemlakeError
from memlake.moments import as_utc_or_none
from memlake.schemas import FACT_TYPES, check_agent_id

log = logging.getLogger(__name__)

RECALL_SCOPES = ("facts", "episodes", "transcript", "graph", "all")
# a recall scope -> the `Memory.search` scope it reads, and the `source` its results carry
SEARCH_SCOPES = {
    "facts": ("facts", "fact"), "episodes": ("episodes", "episode"), "transcript": ("chunks", "transcript"),
    "graph": ("graph", "graph"),
}
ALL_SCOPES = ("facts", "episodes", "transcript")  # what `all` merges: the graph's rows are names, not memories
FORGET_MATCHES = 20  # at most this many facts a forget by query previews (and so may forget)

# What a result says of each hit or fact: provenance (conversation, message ids, dates) always.
HIT_FIELDS = ("text", "score", "key", "conversation_id", "message_ids", "created_at")
HIT_FIELDS_BY_SOURCE = {
    "fact": ("fact_id", "version", "type", "subject", "slot", "status"),
    "episode": ("title",),
    "transcript": ("role", "speaker"),
    "graph": ("kind", "conversation_ids"),
}
FACT_FIELDS = ("fact_id", "version", "type", "subject", "slot", "value", "content", "tags", "importance", "status",
               "created_at", "valid_from", "valid_until", "source_conversation_ids", "source_message_ids",
               "source_interface")


def _nullable(json_type: str, description: str, **more: Any) -> dict[str, Any]:
    """An optional argument. OpenAI's strict mode wants every property required, so optional means `null`
    allowed; the dispatcher also takes a missing one as null."""
    return {"type": [json_type, "null"], "description": description, **more}


def _function(name: str, description: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "strict": True,
            "parameters": {"type": "object", "properties": properties, "required": list(properties),
                           "additionalProperties": False},
        },
    }


_LIMIT = "How many results at most (1 to 50; default 10)."
_DAY = "An ISO date or time (UTC), or null."

TOOLS: list[dict[str, Any]] = [
    _function(
        "recall",
        "Search the long-term memory of this conversation's user. scope: facts (what is known about the user), "
        "episodes (summaries of past conversations), transcript (what was said, turn by turn), graph (the people, "
        "places, organizations and projects named, and their relations in force: until is read as the moment) "
        "or all (the best of facts, episodes and transcript, merged). Every result carries its source "
        "conversation and message ids, and a date where it has one.",
        {
            "query": {"type": "string", "description": "What to look for, in words."},
            "scope": {"type": "string", "enum": list(RECALL_SCOPES), "description": "Which memory to search."},
            "limit": _nullable("integer", _LIMIT, minimum=1, maximum=50),
            "since": _nullable("string", "Only what was said from this " + _DAY),
            "until": _nullable("string", "Only what was said up to this " + _DAY),
        },
    ),
    _function(
        "store",
        "Remember a fact about the user, stated in one sentence. It wins over anything extracted from "
        "conversations. To correct a fact, give its fact_id as replaces.",
        {
            "content": {"type": "string", "description": "The fact, as one sentence."},
            "type": _nullable("string", "The kind of fact, or null to let memlake decide.",
                              enum=[*FACT_TYPES, None]),
            "subject": _nullable("string", "Whom it is about (default: the user)."),
            "slot": _nullable("string", "The attribute it sets (employer, home_city, diet, ...), or null."),
            "value": _nullable("string", "The attribute's value, or null."),
            "tags": _nullable("array", "Labels to find it by, or null.", items={"type": "string"}),
            "importance": _nullable("number", "0 to 1, or null.", minimum=0, maximum=1),
            "replaces": _nullable("string", "The fact_id this one corrects, or null."),
        },
    ),
    _function(
        "forget",
        "Forget facts for good. By fact_id: that fact (all its versions) goes at once. By query: the first call "
        "returns a preview of exactly the facts whose words match (with their ids) and forgets nothing; call "
        "again with confirm true and those fact_ids to forget them.",
        {
            "fact_id": _nullable("string", "The fact to forget, or null to forget by query."),
            "query": _nullable("string", "Words of the facts to forget, or null to forget by fact_id."),
            "confirm": _nullable("boolean", "true to forget what a preview of this query showed."),
            "fact_ids": _nullable("array", "With confirm: the fact_ids the preview showed.",
                                  items={"type": "string"}),
            "reason": _nullable("string", "Why, for the forget log, or null."),
        },
    ),
    _function(
        "list",
        "List the facts known about the user, newest first, optionally of one type, with one tag, or said in a "
        "date window.",
        {
            "type": _nullable("string", "Only facts of this type.", enum=[*FACT_TYPES, None]),
            "tag": _nullable("string", "Only facts with this tag."),
            "since": _nullable("string", "Only facts said from this " + _DAY),
            "until": _nullable("string", "Only facts said up to this " + _DAY),
            "include_history": _nullable("boolean", "true to list replaced and ended versions too."),
            "limit": _nullable("integer", _LIMIT, minimum=1, maximum=50),
        },
    ),
]
SCHEMAS = {tool["function"]["name"]: tool["function"]["parameters"] for tool in TOOLS}


class BadArguments(BadRequest):
    """Arguments that do not fit the tool's schema."""


def check_arguments(name: str, arguments: dict[str, Any] | str) -> dict[str, Any]:
    """The tool's arguments, every property present (a missing optional one is None), checked against its schema:
    the schema is the one statement of what a tool accepts."""
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments, parse_constant=_not_json) if arguments.strip() else {}
        except (json.JSONDecodeError, BadArguments) as exc:
            raise BadArguments(f"the arguments are not valid JSON: {exc}") from None
        except RecursionError:  # Python's parser recurses per level of nesting
            raise BadArguments("the arguments are nested too deeply") from None
    if not isinstance(arguments, dict):
        raise BadArguments(f"the arguments are a JSON object, got {type(arguments).__name__}")
    schema = SCHEMAS[name]
    unknown = sorted(set(arguments) - set(schema["properties"]))
    if unknown:
        fixed = " (the agent is fixed by the connection)" if "agent_id" in unknown else ""
        raise BadArguments(f"{name} takes no argument {', '.join(map(repr, unknown))}{fixed}; it takes "
                           f"{', '.join(schema['properties'])}")
    checked = {}
    for key, spec in schema["properties"].items():
        value = arguments.get(key)
        if key not in arguments and "null" not in _types(spec):
            raise BadArguments(f"{name} needs the argument {key!r}")
        problem = _problem(value, spec)
        if problem:
            raise BadArguments(f"{key}: {problem}")
        checked[key] = int(value) if "integer" in _types(spec) and isinstance(value, float) else value
    return checked


def _not_json(constant: str) -> None:
    raise BadArguments(f"{constant} is not a JSON number")


def _types(spec: dict[str, Any]) -> list[str]:
    return spec["type"] if isinstance(spec["type"], list) else [spec["type"]]


_TYPE_CHECKS: dict[str, Callable[[object], bool]] = {
    "string": lambda v: isinstance(v, str),
    # as JSON Schema counts them: 5.0 is an integer, True is no number
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer()),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}


def _problem(value: object, spec: dict[str, Any]) -> str | None:
    """What is wrong with `value` under the subset of JSON Schema the tool schemas use, or None."""
    types = _types(spec)
    if not any(_TYPE_CHECKS[t](value) for t in types):
        return f"expected {' or '.join(types)}, got {json.dumps(value)[:80]}"
    if value is None:
        return None
    if "enum" in spec and value not in spec["enum"]:
        return f"expected one of {', '.join(str(v) for v in spec['enum'] if v is not None)}, got {value!r}"
    if "minimum" in spec and value < spec["minimum"]:  # type: ignore[operator]
        return f"at least {spec['minimum']}, got {value}"
    if "maximum" in spec and value > spec["maximum"]:  # type: ignore[operator]
        return f"at most {spec['maximum']}, got {value}"
    if isinstance(value, list):
        wrong = [item for item in value if not _TYPE_CHECKS[spec["items"]["type"]](item)]
        if wrong:
            return f"a list of {spec['items']['type']}s, got {json.dumps(wrong[0])[:80]} in it"
    return None


def _jsonable(value: object) -> object:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, list):
        return [_jsonable(item) for item in value]
    return value


def _records(frame: pl.DataFrame, fields: tuple[str, ...]) -> list[dict[str, Any]]:
    present = [field for field in fields if field in frame.columns]
    return [{key: _jsonable(value) for key, value in row.items()} for row in frame.select(present).to_dicts()]


class MemoryTools:
    """The memory tools of one agent: every call reads and writes that agent's memory only."""

    def __init__(self, memory: Memory, agent_id: str) -> None:
        self.memory = memory
        self.agent_id = check_agent_id(agent_id)
        self._tools: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
            "recall": self._recall, "store": self._store, "forget": self._forget, "list": self._list,
        }

    def call(self, name: str, arguments: dict[str, Any] | str | None = None) -> dict[str, Any]:
        """Run one tool call (arguments as a dict or the JSON text a model sends); a JSON-able result, `ok` true
        or false, never an exception."""
        if name not in self._tools:
            return _error(name, "unknown_tool", f"no tool {name!r}: the tools are {', '.join(self._tools)}")
        tool = self._tools[name]
        return tool_result(name, lambda: tool(check_arguments(name, {} if arguments is None else arguments)))

    def _recall(self, args: dict[str, Any]) -> dict[str, Any]:
        limit = args["limit"] or 10
        scopes = list(ALL_SCOPES) if args["scope"] == "all" else [args["scope"]]
        found = [self._search(args["query"], scope, limit, args["since"], args["until"]) for scope in scopes]
        if len(found) == 1:
            return {"query": args["query"], "scope": args["scope"], "results": found[0]}
        # scores of different indexes do not compare: `all` orders every scope's hits by one relevance measure,
        # so a scope's best (a lone remembered fact, say) comes first only when it is nearest the query
        interleaved = [hit for rank in zip(*_padded(found), strict=True) for hit in rank if hit is not None]
        relevance = self.memory.relevance(args["query"], [hit["text"] for hit in interleaved])
        order = sorted(range(len(interleaved)), key=lambda i: -relevance[i])  # stable: ties keep each scope's turn
        return {"query": args["query"], "scope": args["scope"], "results": [interleaved[i] for i in order][:limit]}

    def _search(self, query: str, scope: str, limit: int, since: str | None, until: str | None) -> list[Any]:
        search_scope, source = SEARCH_SCOPES[scope]
        if scope == "graph":  # the graph as it stood at `until`; it keeps no time range of what was said
            if since is not None:
                raise BadArguments("a graph recall takes no since: until gives the moment the graph is read at")
            frame = self.memory.search(query, self.agent_id, k=limit, scope=search_scope, as_of=until)
        else:
            frame = self.memory.search(query, self.agent_id, k=limit, scope=search_scope, since=since, until=until)
        fields = HIT_FIELDS + HIT_FIELDS_BY_SOURCE[source]
        return [{"source": source, **record} for record in _records(frame, fields)]

    def _store(self, args: dict[str, Any]) -> dict[str, Any]:
        made = self.memory.remember(self.agent_id, args["content"], replaces=args["replaces"], type=args["type"],
                                    subject=args["subject"], slot=args["slot"], value=args["value"],
                                    importance=args["importance"], tags=args["tags"], author="tool")
        return {"stored": _records(made, FACT_FIELDS)}

    def _forget(self, args: dict[str, Any]) -> dict[str, Any]:
        if (args["fact_id"] is None) == (args["query"] is None):
            raise BadArguments("forget takes exactly one of fact_id and query")
        if args["fact_id"] is not None:
            gone = self.memory.forget(self.agent_id, fact_id=args["fact_id"], reason=args["reason"])
            return {"forgotten": _records(gone, FACT_FIELDS)}
        matches = self._forget_matches(args["query"])
        ids = list(dict.fromkeys(matches["fact_id"].to_list()))
        if not args["confirm"]:
            return {"preview": True, "query": args["query"], "fact_ids": ids,
                    "would_forget": _records(matches, FACT_FIELDS),
                    "to_confirm": "call forget again with this query, confirm true and these fact_ids" if ids
                    else "nothing matches: nothing to forget"}
        if args["fact_ids"] is None:
            raise BadArguments("confirm needs the fact_ids the preview showed")
        if sorted(set(args["fact_ids"])) != sorted(ids):
            raise BadArguments(f"the query now matches {ids}, not the fact_ids given: nothing was forgotten; "
                               "preview again")
        forgotten = [self.memory.forget(self.agent_id, fact_id=fact_id, reason=args["reason"]) for fact_id in ids]
        return {"forgotten": [record for frame in forgotten for record in _records(frame, FACT_FIELDS)]}

    def _forget_matches(self, query: str) -> pl.DataFrame:
        return self.memory.forget_preview(self.agent_id, query, k=FORGET_MATCHES)

    def _list(self, args: dict[str, Any]) -> dict[str, Any]:
        since = as_utc_or_none(args["since"])
        until = as_utc_or_none(args["until"], end_of_day=True)
        facts = self.memory.facts(self.agent_id, type=args["type"], include_history=bool(args["include_history"]))
        if args["tag"] is not None:
            facts = facts.filter(pl.col("tags").list.contains(args["tag"]))
        if since is not None:
            facts = facts.filter(pl.col("created_at") >= since)
        if until is not None:
            facts = facts.filter(pl.col("created_at") <= until)
        facts = facts.sort("created_at", "fact_id", "version", descending=True)
        limit = args["limit"] or 10
        return {"total": facts.height, "facts": _records(facts.head(limit), FACT_FIELDS)}


def _padded(lists: list[list[Any]]) -> list[list[Any]]:
    longest = max(len(items) for items in lists)
    return [items + [None] * (longest - len(items)) for items in lists]


def tool_result(name: str, run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The tool boundary: `run()`'s result, `ok`, or why not, as a model should read it, never an exception.
    What memlake refuses (`MemlakeError`) is `refused`, with its type (`refusal`: bad_request, not_found, ...) and
    its message; anything else is memlake's bug, `internal`, its trace in the log and not shown to the model."""
    try:
        return {"ok": True, "tool": name, **run()}
    except BadArguments as exc:
        return _error(name, "bad_arguments", str(exc))
    except Exception as exc:
        fault = disk_fault(exc)
        if fault is not None:  # the machine's state: the model may say so, and try again later
            return _error(name, "read_only" if fault.read_only else "no_space", f"{fault}: nothing was written")
        if isinstance(exc, MemlakeError):
            return {"ok": False, "tool": name, "error": {"kind": "refused", "refusal": exc.kind, "message": str(exc)}}
        log.exception("memory tool %s failed", name)
        return _error(name, "internal", f"{type(exc).__name__}: the memory tool failed; see the service log")


def _error(tool: str, kind: str, message: str) -> dict[str, Any]:
    return {"ok": False, "tool": tool, "error": {"kind": kind, "message": message}}
