"""notebooks/explore.ipynb runs headless, every cell, against a home built from the samples."""

from __future__ import annotations

import os

import nbformat
import pytest
from nbclient import NotebookClient

from tests.conftest import REPO, land_samples

NOTEBOOK = REPO / "notebooks" / "explore.ipynb"


def test_the_notebook_is_committed_without_outputs() -> None:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code and all(not cell.outputs and cell.execution_count is None for cell in code)


@pytest.fixture
def samples_home(settings, monkeypatch, run_pipeline):
    # the samples' indexes are built with the hashing embedder: the notebook's searches must embed the same way
    (settings.home / "memlake.toml").write_text('embedding_model = "hash"\n')
    land_samples(settings)
    assert run_pipeline().success
    return settings.home


def test_every_cell_runs_on_the_samples_and_draws_its_plots(samples_home, monkeypatch) -> None:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    monkeypatch.setenv("MEMLAKE_HOME", str(samples_home))
    monkeypatch.delenv("MEMLAKE_AGENT", raising=False)
    # the kernel imports this checkout's memlake, not whichever one the venv has installed
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")

    # any cell error raises CellExecutionError, naming the cell
    NotebookClient(notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOK.parent)}}
                   ).execute()

    outputs = [out for cell in notebook.cells if cell.cell_type == "code" for out in cell.outputs]
    pictures = [out for out in outputs if "image/png" in out.get("data", {})]
    assert len(pictures) == 3  # facts and episodes over time, the profile's sections, the neighbourhood
    shown = "".join(str(out.get("data", {}).get("text/plain", "")) + out.get("text", "") for out in outputs)
    assert "'demo'" in shown and "learned" in shown
