"""docs/architecture.md lists every module and test file the tree has, and none that is gone: its file list is
written by scripts/architecture.py from the tree (rerun it after adding, moving or removing a file)."""

from __future__ import annotations

import re
from pathlib import Path

from scripts.architecture import BEGIN, END, PAGE, listed_files, section
from tests.conftest import REPO

RERUN = "run `python scripts/architecture.py` to write the list again"


def listed_in_page() -> set[str]:
    page = PAGE.read_text()
    assert page.count(BEGIN) == 1 and page.count(END) == 1, f"the file list's markers are missing: {RERUN}"
    block = page.split(BEGIN, 1)[1].split(END, 1)[0]
    return set(re.findall(r"^- `([^`]+)`", block, flags=re.M))


def test_every_module_and_test_file_is_in_the_architecture_page() -> None:
    missing = sorted({path.as_posix() for path in listed_files()} - listed_in_page())
    assert not missing, f"not in docs/architecture.md: {missing}; {RERUN}"


def test_every_file_the_architecture_page_lists_exists() -> None:
    gone = sorted(path for path in listed_in_page() if not (REPO / path).is_file())
    assert not gone, f"gone from the tree: {gone}; {RERUN}"


def test_the_list_names_each_file_with_its_docstrings_first_sentence(tmp_path: Path) -> None:
    (tmp_path / "memlake" / "search").mkdir(parents=True)
    (tmp_path / "memlake" / "__init__.py").write_text("")  # a package marker: nothing to list
    (tmp_path / "memlake" / "search" / "fusion.py").write_text(
        '"""Fuses the candidate lists. Reciprocal ranks,\nweighted."""\nX = 1\n')
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_fusion.py").write_text("def test_x():\n    pass\n")
    assert [path.as_posix() for path in listed_files(tmp_path)] == ["memlake/search/fusion.py", "tests/test_fusion.py"]
    assert section(tmp_path).split("\n") == [
        "", "**`memlake/search/`**", "", "- `memlake/search/fusion.py`: Fuses the candidate lists",
        "", "**`tests/`**", "", "- `tests/test_fusion.py`", ""]
