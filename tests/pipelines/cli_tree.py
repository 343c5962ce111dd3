"""The `memlake` command's tree as plain data: every command and group in the order `--help` lists them, with
its help and each parameter's names, type, default, flags and help. `python -m tests.pipelines.cli_tree` writes
it to tests/expected/cli_tree.json; tests/pipelines/test_cli_tree.py compares the CLI with that file."""

from __future__ import annotations

import json
import sys
from typing import Any

import typer
from typer.models import DefaultPlaceholder

from tests.conftest import REPO, TESTS

EXPECTED = TESTS / "expected" / "cli_tree.json"


def command_tree(command: Any) -> dict[str, Any]:
    """`command` (Typer's click command or group) as plain data; a group's commands in the order `--help` lists
    them (the order they were added)."""
    node: dict[str, Any] = {key: _plain(getattr(command, key, None)) for key in (
        "help", "short_help", "epilog", "hidden", "deprecated", "no_args_is_help", "rich_help_panel",
        "context_settings", "options_metavar", "add_help_option")}
    node["params"] = [_param(param) for param in command.params]
    if hasattr(command, "commands"):
        node["commands"] = {name: command_tree(sub) for name, sub in command.commands.items()}
    return node


def _param(param: Any) -> dict[str, Any]:
    """Every attribute Typer keeps on a parameter (names, help, default, flags, bounds, panel), as text."""
    found: dict[str, Any] = {}
    for key, value in sorted(vars(param).items()):
        if key in ("_runtime_param", "_custom_shell_complete"):
            continue
        if key == "type_descriptor":
            found["annotation"] = repr(value.annotation)
        else:
            found[key] = _plain(value)
    return found


def _plain(value: Any) -> Any:
    """`value` as JSON: a function by its name, Typer's placeholder by what it holds, anything else not plain by
    its repr."""
    if isinstance(value, DefaultPlaceholder):
        value = value.value
    if callable(value):
        return getattr(value, "__name__", repr(type(value)))
    if isinstance(value, str | int | float | bool | type(None)):
        return value
    if isinstance(value, list | tuple) and all(isinstance(item, str) for item in value):
        return list(value)
    if isinstance(value, dict) and all(isinstance(key, str) for key in value):
        return {key: _plain(item) for key, item in value.items()}
    return repr(value).replace(str(REPO), "<repo>").replace(str(REPO.parent), "<repo>/..")  # a path the same anywhere


def memlake_tree() -> dict[str, Any]:
    from pipelines.cli import app

    return command_tree(typer.main.get_command(app))


if __name__ == "__main__":
    text = json.dumps(memlake_tree(), indent=1, sort_keys=False) + "\n"
    if sys.argv[1:] == ["--check"]:
        sys.exit(0 if EXPECTED.read_text() == text else 1)
    EXPECTED.write_text(text)
    print(f"wrote {EXPECTED}")
