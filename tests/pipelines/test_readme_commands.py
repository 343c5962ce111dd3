"""The README's command list is the CLI's: every command and subcommand `memlake` has is named there, and
nothing there is not a command (the `memlake bench` line named 5 of 10 and pointed outside the repository)."""

from __future__ import annotations

import re

import typer

from pipelines.cli import app
from tests.conftest import REPO


def readme_commands() -> list[str]:
    """The commands of the README's "Commands" code block, each with the comment lines that follow it."""
    text = (REPO / "README.md").read_text()
    block = text.split("## Commands", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    commands: list[str] = []
    for line in block.splitlines():
        if line.startswith("memlake "):
            commands.append(line)
        elif commands and line.lstrip().startswith("#"):
            commands[-1] += " " + line.strip()
    return commands


def named(lines: list[str]) -> dict[str, set[str]]:
    """command -> the subcommands the lines name (empty for a command without any)."""
    found: dict[str, set[str]] = {}
    for line in lines:
        words = line.split("#", 1)[0].split()
        command = words[1]
        subs = found.setdefault(command, set())
        if len(words) > 2 and re.fullmatch(r"[a-z][a-z-]*(\|[a-z][a-z-]*)*", words[2]):
            subs.update(words[2].split("|"))
        subs.update(re.findall(rf"\| {command} ([a-z][a-z-]*)", line))  # "... | token list | token revoke ID"
    return found


def cli_commands() -> dict[str, set[str]]:
    group = typer.main.get_command(app)
    return {name: set(getattr(command, "commands", {}) or {}) for name, command in group.commands.items()}


def test_the_readme_names_every_command_and_subcommand_and_nothing_else() -> None:
    cli = cli_commands()
    listed = named(readme_commands())
    assert set(listed) == set(cli), (sorted(set(cli) - set(listed)), sorted(set(listed) - set(cli)))
    for command, subcommands in cli.items():
        if subcommands:  # a group: each subcommand named; a plain command's arguments are not checked
            assert listed[command] == subcommands, (command, sorted(subcommands ^ listed[command]))


def test_the_bench_line_points_inside_the_repository() -> None:
    [bench] = [line for line in readme_commands() if line.startswith("memlake bench ")]
    paths = re.findall(r"[\w./-]*(?:docs|data|tests)/[\w./-]*", bench)
    assert paths and "../" not in bench
    for path in paths:
        assert (REPO / path.rstrip(".,")).exists(), path
