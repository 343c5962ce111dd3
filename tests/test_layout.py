"""The layout holds: imports point one way (pipelines -> assets -> resources -> memlake), the core imports no
Dagster, no package has an import cycle (the contracts in pyproject.toml), and an import left inside a function
says why it is deferred."""

import ast
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

PACKAGES = ("memlake", "assets", "resources", "pipelines")


def test_the_import_contracts_hold():
    linter = Path(sys.executable).with_name("lint-imports")
    checked = subprocess.run([str(linter)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-2000:]
    assert "0 broken" in checked.stdout


def function_level_imports(path: Path) -> list[tuple[int, str]]:
    """(line, source line with the line above it) of every import inside a function of `path`."""
    source = path.read_text()
    lines = source.splitlines()
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Import | ast.ImportFrom):
                    above = lines[inner.lineno - 2].strip() if inner.lineno > 1 else ""
                    found.append((inner.lineno, f"{above} | {lines[inner.lineno - 1].strip()}"))
    return sorted(set(found))


def test_an_import_inside_a_function_says_why_it_is_deferred():
    """Never to dodge a cycle: an import stays inside a function only for what is slow to import (a model
    library, Dagster for a read command), and its line says so (`# deferred: ...`)."""
    unexplained = [
        f"{path.relative_to(REPO)}:{line}: {text.split(' | ', 1)[1]}"
        for package in PACKAGES
        for path in sorted((REPO / package).rglob("*.py"))
        for line, text in function_level_imports(path)
        if "# deferred" not in text
    ]
    assert not unexplained, "\n".join(unexplained)
