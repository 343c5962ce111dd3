"""The scale benchmark end to end at a tiny size (the real sizes come from `make bench`)."""

import json
import re
from pathlib import Path

from memlake_bench.render import render_scale
from memlake_bench.scale import run_scale


def test_the_scale_benchmark_measures_each_case_in_a_fresh_reader_and_renders_its_table(tmp_path):
    out = tmp_path / "scale.json"
    report = run_scale(out, sizes="single:2000,agents:4:4000", queries=20, log=lambda _: None)

    assert out.is_file() and [c["case"] for c in report["cases"]] == ["single:2000", "agents:4:4000"]
    for case in report["cases"]:
        assert 0 < case["hybrid_ms_p50"] <= case["hybrid_ms_p95"]
        assert case["exact_memory_recall@10_vs_exact"] == 1.0  # the reader's in-memory scan is exact
        before, after = case["python_speed_ms"]  # the machine's speed beside the hybrid passes
        assert before > 0 and after > 0
        assert case["peak_rss_mb"] > case["rss_after_imports_mb"] > 0
    table = render_scale(report)
    assert "| hybrid_ms_p50 |" in table and "| python_speed_ms |" in table and " → " in table


def first_sessions(locomo: Path, sessions: int, out: Path) -> Path:
    """LoCoMo's first conversation cut to its first `sessions` sessions (one day each), written to `out`."""
    sample = json.loads(locomo.read_text())[0]
    kept = {key: value for key, value in sample["conversation"].items()
            if not (number := re.match(r"session_(\d+)", key)) or int(number.group(1)) <= sessions}
    out.write_text(json.dumps([{**sample, "conversation": kept}]))
    return out


def test_the_scale_benchmark_measures_ingest_with_one_and_two_workers_and_renders_it(tmp_path):
    from memlake_bench.in_process import IN_PROCESS
    from memlake_bench.scale import IngestCase
    from tests.conftest import LOCOMO

    # three sessions on three days: more than one conversation, and days for two day runs (the whole first
    # conversation, 19 days, took 86 s on CI for the same figures)
    data = first_sessions(LOCOMO, 3, tmp_path / "locomo-3-sessions.json")
    ingest = IngestCase(data, samples=1, workers=(1, 2), model="hash", pipeline=IN_PROCESS)
    report = run_scale(tmp_path / "scale.json", sizes="single:2000", queries=5, log=lambda _: None, ingest=ingest)

    one, two = report["ingest"]
    assert (one["workers"], two["workers"]) == (1, 2)
    assert one["turns"] == two["turns"] > 0 and one["conversations"] == two["conversations"] > 1
    assert one["days"] == two["days"] == 3
    for build in (one, two):
        assert build["turns_per_second"] > 0 and build["cpu_seconds"] > 0 and build["run_seconds"] > 0
        assert build["step_seconds_per_1000_turns"]["search__chunk_index"] > 0
    assert two["step_seconds_per_1000_turns"]["transcripts__chunks"] > 0
    table = render_scale(report)
    assert "| turns_per_second |" in table and "2 worker(s)" in table and "search__chunk_index" in table
