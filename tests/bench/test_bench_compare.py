"""memlake_bench.compare: two benchmark reports, figure by figure (the check that a behaviour-neutral change kept
every figure): a moved figure is named and fails, timings and one run's facts never do, a system only one report
holds is information."""

import copy
import json

from memlake_bench.compare import main


def report() -> dict:
    """The shape of a `memlake bench locomo` report, trimmed: systems, ingest, adaptation, latency (hybrid: 8
    figures, its empty overrides none)."""
    summary = {"n": 1536, "turn_any@10": 0.8125, "turn_all@10": 0.6871, "session_all@5": 0.9012,
               "budget_recall": 0.7702, "words@10": 231.4}
    return {
        "benchmark": "locomo", "date": "2026-11-28T23:50:00+00:00",
        "machine": {"cpu": "AMD EPYC", "load_average_1m": 3.1},
        "data": {"file": "locomo10.json", "sha256": "ab12", "questions": 1536},
        "settings": {"rrf_k": 20, "mmr_lambda": 0.9},
        "ingest": {"turns": 5882, "chunks": 28418, "run_seconds_all_layers": 149.1,
                   "step_seconds": {"transcripts__chunks": 3.2}, "end_to_end_vs_raw": 2.05},
        "systems": {
            "hybrid": {"overrides": {}, "all": dict(summary),
                       "by_category": {"1 multi-hop": {"n": 282, "turn_any@10": 0.61}}},
            "bm25": {"overrides": {"lists": ["text"]}, "all": dict(summary, **{"turn_any@10": 0.7011})},
        },
        "sweeps": [{"setting": "mmr_lambda=1.0", "tune_0_4": {"turn_any@10": 0.8}}],
        "adaptation": {"pairs": 830, "train_seconds": 479.6, "index_reused": False, "model": "adapted-5be7"},
        "latency": {"search_ms_p50": 23.5, "python_speed_ms": [24.0, 38.3]},
    }


def run(tmp_path, before: dict, after: dict, *flags: str) -> int:
    (tmp_path / "before.json").write_text(json.dumps(before))
    (tmp_path / "after.json").write_text(json.dumps(after))
    return main([str(tmp_path / "before.json"), str(tmp_path / "after.json"), *flags])


def test_the_same_figures_pass_though_every_timing_and_run_fact_differs(tmp_path, capsys):
    after = copy.deepcopy(before := report())
    after["date"], after["machine"]["load_average_1m"] = "2026-11-29T00:20:00+00:00", 5.7
    after["ingest"]["run_seconds_all_layers"], after["ingest"]["step_seconds"]["transcripts__chunks"] = 201.0, 9.9
    after["ingest"]["end_to_end_vs_raw"] = 1.7
    after["adaptation"].update(train_seconds=None, index_reused=True)  # a rerun that found the adapter built
    after["latency"] = {"search_ms_p50": 40.2, "python_speed_ms": [30.1, 51.0]}
    after["systems"]["hybrid"]["all"]["turn_any@10"] += 1e-12  # float noise
    assert run(tmp_path, before, after) == 0
    assert capsys.readouterr().out.splitlines()[-1].endswith(" figures compared, 0 differ")


def test_a_moved_figure_is_named_with_both_values_and_fails(tmp_path, capsys):
    after = copy.deepcopy(before := report())
    after["systems"]["hybrid"]["by_category"]["1 multi-hop"]["turn_any@10"] = 0.6135
    after["sweeps"][0]["tune_0_4"]["turn_any@10"] = 0.7999
    after["ingest"]["chunks"] = 28420  # the home itself differs
    assert run(tmp_path, before, after) == 1
    out = capsys.readouterr().out
    assert "systems.hybrid.by_category.1 multi-hop.turn_any@10: 0.61 -> 0.6135" in out
    assert "sweeps.0.tune_0_4.turn_any@10: 0.8 -> 0.7999" in out
    assert "ingest.chunks: 28418 -> 28420" in out
    assert out.splitlines()[-1].endswith(" 3 differ")


def test_a_changed_setting_or_override_is_a_difference_too(tmp_path, capsys):
    after = copy.deepcopy(before := report())
    after["systems"]["bm25"]["overrides"]["lists"] = ["vector"]
    after["adaptation"]["model"] = "adapted-0000"  # another adapter was trained: not the same home's index
    assert run(tmp_path, before, after) == 1
    out = capsys.readouterr().out
    assert "systems.bm25.overrides.lists.0: 'text' -> 'vector'" in out
    assert "adaptation.model: 'adapted-5be7' -> 'adapted-0000'" in out


def test_a_system_or_setting_only_one_report_holds_is_listed_not_failed(tmp_path, capsys):
    after = copy.deepcopy(before := report())
    after["systems"]["hybrid_graph_list"] = copy.deepcopy(after["systems"]["hybrid"])
    after["settings"]["search_graph_weight"] = 0.0
    del after["systems"]["bm25"]
    assert run(tmp_path, before, after, "--markdown") == 0
    out = capsys.readouterr().out
    assert "only in after" in out and "systems.hybrid_graph_list" in out and "settings.search_graph_weight" in out
    assert "only in before" in out and "systems.bm25" in out
    table = [line for line in out.splitlines() if line.startswith("| `")]
    assert table == ["| `hybrid` | 8 | 0 | 0.8125 / 0.8125 | 0.6871 / 0.6871 | 0.9012 / 0.9012 | 0.7702 / 0.7702 |"]
