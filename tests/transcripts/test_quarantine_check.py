"""A quarantined file shows at status level: a WARN check on the landing manifest names each file newly
quarantined, its reason and where in the file, so a drop of only a bad file is no silent green."""

from __future__ import annotations

import dagster as dg
import pytest

from tests.conftest import land
from tests.transcripts.helpers import CONVERSATION, jsonl, msg

MANIFEST = dg.AssetKey(["transcripts", "landing_manifest"])


@pytest.fixture
def scan(fast_resources):
    """Materialize the landing manifest with its checks, as a run does; returns its check evaluations."""
    from assets.transcripts import CHECKS, landing_manifest

    instance = dg.DagsterInstance.ephemeral()

    def run() -> list[dg.AssetCheckEvaluation]:
        result = dg.materialize([landing_manifest, *CHECKS], selection=[MANIFEST], resources=fast_resources,
                                instance=instance, raise_on_error=False)
        assert result.success  # a bad file never fails the run: the other files go on
        return [e for e in result.get_asset_check_evaluations() if e.asset_key == MANIFEST]

    return run


def listed(evaluation: dg.AssetCheckEvaluation) -> list[dict]:
    return evaluation.metadata["quarantined"].value


def test_a_drop_of_only_a_bad_file_is_a_warning_naming_it_its_reason_and_where(settings, scan) -> None:
    land(settings, "alice", "broken.jsonl", jsonl(*CONVERSATION)[:-1] + '\n{"conversation_id": "c9", "role"\n')

    [evaluation] = scan()

    assert not evaluation.passed and evaluation.severity == dg.AssetCheckSeverity.WARN
    [bad] = listed(evaluation)
    assert bad["file"] == "alice/broken.jsonl"
    assert bad["reason"] and bad["where"] == "line 4"
    assert bad["quarantine_path"].startswith("quarantine/")
    assert "alice/broken.jsonl" in evaluation.description and "line 4" in evaluation.description


@pytest.mark.parametrize(("name", "content", "where"), [
    ("future.jsonl", jsonl(msg("f1", 0, "user", "Hola!"), msg("f1", 1, "assistant", "Hi", day="2099-12-01")),
     "conversation"),
    ("empty.json", "", None),
    ("other-agent.jsonl", jsonl(msg("z1", 0, "user", "Hi", agent_id="bob")), "conversation"),
])
def test_only_the_bad_files_of_a_mixed_drop_are_named(settings, scan, name, content, where) -> None:
    land(settings, "alice", "good.jsonl", jsonl(*CONVERSATION))
    land(settings, "alice", name, content)

    [evaluation] = scan()

    assert not evaluation.passed
    [bad] = listed(evaluation)
    assert bad["file"] == f"alice/{name}" and bad["reason"]
    assert (bad["where"] is None) if where is None else where in bad["where"]


def test_a_scan_with_nothing_newly_quarantined_passes_though_old_quarantine_stays(settings, scan) -> None:
    land(settings, "alice", "broken.jsonl", "not json at all\n")
    assert not scan()[0].passed
    [again] = scan()  # nothing new: the old file is not news
    assert again.passed and listed(again) == []
    land(settings, "alice", "good.jsonl", jsonl(*CONVERSATION))
    [good] = scan()
    assert good.passed and good.metadata["rows_checked"].value >= 2
