"""Writes the file list of docs/architecture.md from the tree: every module of the code folders and every test
file, each with the first sentence of its docstring, between the page's two markers.

Usage: python scripts/architecture.py           (rewrites the section; run it after adding, moving or removing
                                                 a module or a test file)
       python scripts/architecture.py --check   (exit 1 when the section is not what the tree gives)

tests/pipelines/test_architecture.py fails when a module or test file is missing from the section, or the
section names one that is gone.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PAGE = REPO / "docs" / "architecture.md"
FOLDERS = ("memlake", "resources", "assets", "pipelines", "service", "memlake_bench", "scripts", "tests")
BEGIN = "<!-- files: written by scripts/architecture.py from the tree; edit the docstrings, not this list -->"
END = "<!-- files: end -->"
SUMMARY_CHARS = 150


def listed_files(repo: Path = REPO) -> list[Path]:
    """Every Python file of the folders the page lists, relative to `repo`: a folder's own files, then its
    subfolders'; an empty `__init__.py` (a package marker, nothing to say) is left out."""
    found = []
    for folder in FOLDERS:
        for path in sorted((repo / folder).rglob("*.py"), key=lambda path: (path.parent.parts, path.name)):
            if "__pycache__" in path.parts or (path.name == "__init__.py" and not path.read_text().strip()):
                continue
            found.append(path.relative_to(repo))
    return found


def summary(path: Path) -> str:
    """The first sentence of the module's docstring, on one line (cut at SUMMARY_CHARS); '' without one."""
    try:
        docstring = ast.get_docstring(ast.parse(path.read_text())) or ""
    except SyntaxError:
        return ""
    paragraph = " ".join(docstring.split("\n\n", 1)[0].split())
    sentence = paragraph.split(". ", 1)[0].rstrip(".")
    return sentence if len(sentence) <= SUMMARY_CHARS else sentence[:SUMMARY_CHARS].rsplit(" ", 1)[0] + " …"


def section(repo: Path = REPO) -> str:
    """The lines between the markers: a list per folder, each file with its summary."""
    lines: list[str] = []
    folder = None
    for path in listed_files(repo):
        if path.parent != folder:
            folder = path.parent
            lines += ["", f"**`{folder.as_posix()}/`**", ""]
        about = summary(repo / path)
        lines.append(f"- `{path.as_posix()}`" + (f": {about}" if about else ""))
    return "\n".join(lines) + "\n"


def with_section(page: str, repo: Path = REPO) -> str:
    """`page` with its file list written again; a page without both markers is an error."""
    if page.count(BEGIN) != 1 or page.count(END) != 1:
        raise SystemExit(f"{PAGE.relative_to(REPO)} needs one {BEGIN!r} line and one {END!r} line")
    head, rest = page.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    return f"{head}{BEGIN}\n{section(repo)}\n{END}{tail}"


def main(argv: list[str]) -> int:
    page = PAGE.read_text()
    written = with_section(page)
    if argv == ["--check"]:
        return 0 if written == page else 1
    if argv:
        raise SystemExit(__doc__)
    PAGE.write_text(written)
    print(f"wrote the file list of {PAGE.relative_to(REPO)}: {len(listed_files())} files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
