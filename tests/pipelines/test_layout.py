"""The layout holds: imports point one way (pipelines -> assets -> resources -> memlake), the core imports no
Dagster, no package has an import cycle (the contracts in pyproject.toml), and an import left inside a function
says why it is deferred."""

import ast
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

PACKAGES = ("memlake", "assets", "resources", "pipelines", "service", "memlake_bench")


def test_the_import_contracts_hold():
    linter = Path(sys.executable).with_name("lint-imports")
    checked = subprocess.run([str(linter)], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert checked.returncode == 0, checked.stdout[-3000:] + checked.stderr[-2000:]
    assert "0 broken" in checked.stdout


def function_level_imports(path: Path) -> list[tuple[int, str, bool]]:
    """(line, source line, explained) of every import inside a function of `path`; explained when a
    `# deferred` comment stands on its line or on the import lines and comments just above it (its block)."""
    source = path.read_text()
    lines = source.splitlines()
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Import | ast.ImportFrom):
                    found.add((inner.lineno, lines[inner.lineno - 1].strip(), _explained(lines, inner.lineno - 1)))
    return sorted(found)


def _explained(lines: list[str], index: int) -> bool:
    while index >= 0:
        text = lines[index].strip()
        if "# deferred" in text:
            return True
        if not (text.startswith(("import ", "from ", "#")) or text.endswith((",", "(")) or text == ")"):
            return False
        index -= 1
    return False


def test_an_import_inside_a_function_says_why_it_is_deferred():
    """Never to dodge a cycle: an import stays inside a function only for what is slow to import (a model
    library, Dagster for a read command), and its line says so (`# deferred: ...`)."""
    unexplained = [
        f"{path.relative_to(REPO)}:{line}: {text}"
        for package in PACKAGES
        for path in sorted((REPO / package).rglob("*.py"))
        for line, text, explained in function_level_imports(path)
        if not explained
    ]
    assert not unexplained, "\n".join(unexplained)
