"""The scale benchmark end to end at a tiny size (the real sizes come from `make bench`)."""

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
