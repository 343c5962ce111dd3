"""The `memlake` command keeps its shape when its code moves: every command and group, in the order `--help` lists
them, with its help and each option's names, type, default and help, as tests/expected/cli_tree.json holds it
(written from the CLI before it was split into pipelines/cli/). A change meant to alter the CLI rewrites that
file with `python -m tests.pipelines.cli_tree` and shows the difference in its diff."""

from __future__ import annotations

import json

from tests.pipelines.cli_tree import EXPECTED, memlake_tree


def _paths(tree: dict, prefix: str = "memlake") -> dict[str, dict]:  # type: ignore[type-arg]
    """command path -> its node without its subcommands, so a difference names the command it is in."""
    found = {prefix: {key: value for key, value in tree.items() if key != "commands"}}
    for name, sub in tree.get("commands", {}).items():
        found.update(_paths(sub, f"{prefix} {name}"))
    return found


def test_the_command_tree_is_the_one_recorded() -> None:
    expected = json.loads(EXPECTED.read_text())
    actual = json.loads(json.dumps(memlake_tree()))
    assert list(_paths(actual)) == list(_paths(expected)), "commands added, dropped or reordered"
    for path, node in _paths(expected).items():
        assert _paths(actual)[path] == node, path

