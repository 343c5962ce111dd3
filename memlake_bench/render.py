"""Render docs/benchmarks.md from the JSON results in docs/benchmarks/ (locomo.json, scale.json, serve.json, ...)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memlake_bench.changes import render_changes_section
from memlake_bench.distill import render_distill_section
from memlake_bench.locomo import KS, SEARCH_K, SESSION_KS
from memlake_bench.markdown import markdown_table
from memlake_bench.scale_ingest import render_markdown as render_ingest_with_workers
from memlake_bench.scale_storage import render_markdown as render_search_by_store

TARGETS = {"turn_any@10": 0.90, "session_all@5": 0.95}
TARGET_SERVE_CLIENTS = 8  # the serve latency targets hold at this many concurrent clients


def _pct(value: Any) -> str:
    return "-" if value is None else f"{100 * float(value):.1f}"


def _recall_rows(label: str, summary: dict[str, Any]) -> list[list[Any]]:
    rows = []
    for unit in ("turn", "session"):
        for mode in ("any", "all"):
            rows.append([label, f"{unit} recall_{mode}", *(_pct(summary.get(f"{unit}_{mode}@{k}")) for k in KS)])
    rows.append([label, "words returned (mean)", *(_words(summary.get(f"words@{k}")) for k in KS)])
    return rows


def _words(value: Any) -> str:
    return "-" if value is None else f"{float(value):.0f}"


def _first_k_reaching(summary: dict[str, Any], measure: str, target: float, ks: tuple[int, ...]) -> str:
    if not summary.get("n"):
        return "-"
    reached = [k for k in ks if (summary.get(f"{measure}@{k}") or 0.0) >= target]
    if not reached:
        return f"not by k = {max(ks)}"
    k = reached[0]
    return f"k = {k} ({_pct(summary.get(f'{measure}@{k}'))}, {_words(summary.get(f'words@{k}'))} words)"


_TARGETS_LINE = (f"Targets: turn recall_any@10 ≥ {_pct(TARGETS['turn_any@10'])}, "
                 f"session recall_all@5 ≥ {_pct(TARGETS['session_all@5'])}.")


def _adapted_on(adaptation: dict[str, Any]) -> str:
    trained = (f"{adaptation['train_seconds']} s of training" if adaptation["train_seconds"] is not None
               else "the adapter an earlier run had trained on the same pairs, found in the home")
    indexed = (f"its index built in an earlier run ({adaptation['reindex_seconds']} s) searched as it is"
               if adaptation.get("index_reused") else f"{adaptation['reindex_seconds']} s to index again")
    return (f"(`memlake adapt`) on the {adaptation['pairs']} question-reply pairs of conversations 0-4's own turns "
            f"({', '.join(adaptation['trained_on'])}; no question, answer or label of the benchmark; {trained}, "
            f"{indexed})")


def _headline(systems: dict[str, Any]) -> str:
    rows = [
        [name, *(_pct(s[split].get(measure)) for measure in ("turn_any@10", "session_all@5")
                 for split in ("all", "tune_0_4", "held_5_9")),
         _pct(s["all"].get("budget_recall")), _pct(s["all"].get("budget_ctx_recall"))]
        for name, s in systems.items()
    ]
    return markdown_table(["system", "turn any@10 (all)", "(0-4 tuned)", "(5-9 held)", "session all@5 (all)", "(0-4)",
                   "(5-9)", "750-word budget recall (hits)", "(hits + window)"], rows)


GRAPH_HOP_SYSTEMS = ("hybrid", "hybrid_graph_hop", "hybrid_graph_list")


def render_graph_hop(systems: dict[str, Any]) -> str:
    """The graph-assisted row beside the default: multi-hop questions' session recall_all@5 and the overall
    figures, each on the tuning half (0-4) and the held-back half (5-9)."""
    rows = []
    for name in GRAPH_HOP_SYSTEMS:
        s = systems.get(name)
        if s is None or "multi_hop_held_5_9" not in s:
            continue
        rows.append([name, *(_pct(s[half].get("session_all@5")) for half in ("multi_hop_tune_0_4",
                                                                             "multi_hop_held_5_9")),
                     *(_pct(s[split].get(measure)) for measure in ("session_all@5", "turn_any@10")
                       for split in ("tune_0_4", "held_5_9"))])
    return markdown_table(["system", "multi-hop session all@5 (0-4)", "(5-9)", "session all@5 (0-4)", "(5-9)",
                   "turn any@10 (0-4)", "(5-9)"], rows) if rows else ""


def render_locomo_other_model(report: dict[str, Any], default_run: dict[str, Any] | None = None) -> str:
    """A LoCoMo run with another embedding model (`--model`, `docs/benchmarks/locomo-*.json`): its headline
    and what the model costs, and which settings differ from the default model's run (`default_run`).
    `make bench` renders it again but cannot run it again: the model is no dependency of the project."""
    model = report["settings"]["embedding_model"]
    default_settings = (default_run or {}).get("settings", {})
    differ = [f"`{k}` {v} (above: {default_settings[k]})" for k, v in report["settings"].items()
              if k != "embedding_model" and k in default_settings and default_settings[k] != v]
    same = ("Same questions, settings and systems as above." if not differ
            else "Same questions and systems as above; settings that differ: " + ", ".join(differ) + ".")
    ingest, latency = report.get("ingest", {}), report.get("latency", {})
    adaptation = report.get("adaptation")
    parts = [f"## LoCoMo with another embedding model: `{Path(model).name}`", "",
             f"Measured {report['date']} with `memlake bench locomo --model <its folder>"
             f"{'' if report.get('sweeps') else ' --no-sweeps'}`; the model "
             "is not a dependency of memlake (no package this project installs ships it), so `make bench` shows "
             f"this run again but does not repeat it. {same}", "",
             _headline(report["systems"]), "", _TARGETS_LINE, ""]
    if adaptation:
        parts += [f"The `_adapted` systems: this model adapted {_adapted_on(adaptation)}.", ""]
    costs = [[k, _cell(k, latency.get(k))] for k in ("query_embedding_ms_p50", "search_ms_p50", "search_ms_p95",
                                                   "python_speed_ms") if k in latency]
    costs += [[k, ingest.get(k)] for k in ("raw_embedder_texts_per_second", "end_to_end_vs_raw") if k in ingest]
    if costs:
        parts += [markdown_table(["cost", "value"], costs), ""]
    return "\n".join(parts)


def render_locomo(report: dict[str, Any]) -> str:
    systems = report["systems"]
    ingest = report.get("ingest", {})
    latency = report.get("latency", {})
    parts = [
        "## LoCoMo retrieval",
        "",
        f"Data: `{report['data']['file']}` (sha256 `{report['data']['sha256'][:12]}…`), "
        f"{report['data']['samples']} conversations, {report['data']['questions']} questions of categories 1-4. "
        "Each sample's conversation went through the real landing path (one agent per sample, one "
        "conversation per session); questions were asked through `Memory.search` with `as_of` = the "
        "sample's last session date. Percentages; k = distinct message ids (turn) or conversation ids "
        "(session) in rank order.",
        "",
        f"Settings: `{json.dumps(report.get('settings', {}))}`",
        "",
        "### Headline",
        "",
    ]
    parts += [_headline(systems), "", _TARGETS_LINE, "",
              "`hybrid` is the default configuration; `bm25` and `vector` are each list alone, over turn "
              "chunks only (no sentence or question keys); `untuned_rrf` "
              "fuses the same two lists by textbook RRF (k 60, ranks only) with none of the lifts and boosts "
              "tuned on 0-4, so hybrid's gain over it on 5-9 says whether that tuning holds. "
              "`hybrid_no_session_lift` is `hybrid` without the session lift (`search_session_weight` 0), "
              "which shows what the lift buys on each half.", ""]
    graph_hop = render_graph_hop(systems)
    if graph_hop:
        parts += ["### Graph-assisted retrieval", "",
                  "`hybrid_graph_hop` is `hybrid` with the graph's second hop (`memlake.graph.hop`): the sessions "
                  "sharing rare entities with the first sessions found move up. Multi-hop questions (category 1) "
                  "have their evidence in several sessions. `hybrid_graph_list` is `hybrid` with the graph's "
                  "candidate list (`memlake.graph.links`): the turns naming the question's entities and its first "
                  "hits' join the fusion.", "", graph_hop, ""]
    adaptation = report.get("adaptation")
    if adaptation:
        parts += ["`hybrid_adapted`, `hybrid_adapted_no_session_lift` and `vector_adapted` are `hybrid`, "
                  f"`hybrid_no_session_lift` and `vector` with the model adapted {_adapted_on(adaptation)}: on 5-9 "
                  "neither the adapter nor any setting saw the text or the answers.", ""]
    reach = []
    for name, s in systems.items():
        for split in ("all", "tune_0_4", "held_5_9"):
            reach.append([name, split, _first_k_reaching(s[split], "turn_any", TARGETS["turn_any@10"], KS),
                          _first_k_reaching(s[split], "session_all", TARGETS["session_all@5"], SESSION_KS)])
    parts += ["### What k the targets would need", "",
              "The smallest k in the tables below at which each system reaches each target, with the mean words "
              "of text its first k turns return (a hit's dated, speaker-labelled text; windows not counted). "
              f"Session ranks are measured up to k = {max(SESSION_KS)}: they are the distinct conversations of "
              f"the first {SEARCH_K} turn rows, which name fewer than 20 conversations for most questions.", "",
              markdown_table(["system", "questions", f"turn recall_any ≥ {_pct(TARGETS['turn_any@10'])}",
                      f"session recall_all ≥ {_pct(TARGETS['session_all@5'])}"], reach), ""]
    for split, title in (("all", "all ten conversations"), ("tune_0_4", "conversations 0-4 (tuning half)"),
                         ("held_5_9", "conversations 5-9 (held back)")):
        rows = []
        for name, s in systems.items():
            rows += _recall_rows(name, s[split])
        parts += [f"### Recall@k, {title}", "", markdown_table(["system", "measure", *(f"@{k}" for k in KS)], rows), ""]
    rows = []
    for name, s in systems.items():
        for category, summary in s["by_category"].items():
            rows.append([name, category, summary.get("n"), _pct(summary.get("turn_any@10")),
                         _pct(summary.get("turn_all@10")), _pct(summary.get("session_all@5")),
                         _pct(summary.get("budget_recall"))])
    parts += ["### By category (all ten)", "",
              markdown_table(["system", "category", "questions", "turn any@10", "turn all@10", "session all@5",
                      "budget recall"], rows), ""]
    if report.get("sweeps"):
        rows = [[s["setting"], _pct(s["tune_0_4"].get("turn_any@10")), _pct(s["tune_0_4"].get("turn_all@10")),
                 _pct(s["tune_0_4"].get("session_all@5")), _pct(s["multi_evidence"].get("turn_all@10")),
                 _pct(s["multi_evidence"].get("turn_all@20")), s["multi_evidence"].get("n")]
                for s in report["sweeps"]]
        note = report.get("sweeps_note", "one setting changed from the defaults")
        parts += [f"### Tuning sweeps (conversations 0-4 only; {note})", "",
                  markdown_table(["setting", "turn any@10", "turn all@10", "session all@5",
                          "multi-evidence turn all@10", "multi-evidence turn all@20", "multi-evidence n"], rows),
                  ""]
    if ingest:
        steps = ingest.get("step_seconds", {})
        measures = [[k, v] for k, v in ingest.items() if k != "step_seconds"]
        parts += ["### Ingest", "", markdown_table(["measure", "value"], measures), ""]
        if steps:
            parts += ["Seconds per run step (the transcript path is landing_manifest, turns, its check, chunks and "
                      "chunk_index):", "", markdown_table(["step", "seconds"], [[k, v] for k, v in steps.items()]), ""]
    if latency:
        parts += ["### Search latency (LoCoMo homes, k = 10)", "",
                  markdown_table(["measure", "value"], [[k, _cell(k, v)] for k, v in latency.items()]), ""]
    return "\n".join(parts)


def _cell(key: str, value: Any) -> Any:
    if key == "indexes":
        return ", ".join(value or [])
    return " → ".join(str(v) for v in value) if isinstance(value, list) else value  # before → after


def render_scale(report: dict[str, Any]) -> str:
    keys = ["case", "rows", "agents", "indexes", "write_seconds", "index_seconds", "hybrid_ms_p50",
            "hybrid_ms_p95", "hybrid_again_ms_p50", "hybrid_again_ms_p95", "python_speed_ms", "snapshot_load_ms_p50",
            "snapshot_load_ms_max", "snapshot_rows_setting", "agent_uses_ann", "vector_auto_ms_p50",
            "vector_auto_ms_p95", "auto_recall@10_vs_exact", "vector_ivf_memory_ms_p50", "vector_ivf_memory_ms_p95",
            "ivf_memory_recall@10_vs_exact", "ivf_memory_recall@100_vs_exact", "vector_ann_ms_p50",
            "vector_ann_ms_p95", "ann_recall@10_vs_exact", "ann_recall@100_vs_exact", "vector_exact_memory_ms_p50",
            "vector_exact_memory_ms_p95", "vector_exact_ms_p50", "vector_exact_ms_p95", "full_text_ms_p50",
            "full_text_ms_p95", "peak_rss_mb"]
    rows = [[_cell(k, c.get(k, "-")) for k in keys] for c in report["cases"]]
    columns = ["measure", *(c["case"] for c in report["cases"])]
    transposed = [[k, *(row[i] for row in rows)] for i, k in enumerate(keys) if k != "case"]
    return "\n".join([
        "## Search at scale (synthetic)",
        "",
        report.get("note", ""),
        "",
        "Targets at 100k chunks: hybrid search p50 ≤ 10 ms, p95 ≤ 30 ms (query embedding excluded); "
        "reader ≤ 4 GB at 1M chunks.",
        "",
        markdown_table(columns, transposed),
        "",
        "`hybrid` is a reader's first pass over the queries (for 1,000 agents it includes loading each agent's "
        "snapshot), `hybrid_again` a second pass. `vector_auto` is what search does: an exact scan of the "
        "reader's snapshot below 50k rows, IVF lists built in memory above (`vector_ivf_memory`); "
        "`vector_ann` is LanceDB's IVF index and `vector_exact` its flat scan, for comparison. "
        "`python_speed_ms` times one fixed pure-Python loop just before and just after the two hybrid passes "
        "(`memlake_bench.machine.python_speed_ms`). The machine is a shared VM whose speed drifts, so read "
        "the latencies against it: a larger value means a slower machine at that moment.",
        "",
        render_ingest_with_workers(report),  # `--ingest-samples`: LoCoMo ingest with 1 and 2 workers
        render_search_by_store(report),  # `--storage-samples`: search on an object store vs local disk
    ])


def render_serve(report: dict[str, Any]) -> str:
    """`memlake bench serve` (docs/benchmarks/serve.json): latency through the service at each client count."""
    targets = report["targets_p95_ms_at_8_clients"]
    rows = []
    for name, result in report["http"].items():
        kind, clients = name.split("@")
        rows.append([kind, clients, result["p50_ms"], result["p95_ms"], result["requests_per_s"], result["errors"],
                     result["ratio_p50_to_in_process"], "yes" if result.get("pipeline_running") else "no"])
    for name, result in report.get("floor", {}).items():
        kind, clients = name.split("@")
        rows.append([f"floor: {kind}", clients, result["p50_ms"], result["p95_ms"], result["requests_per_s"],
                     result["errors"], "", "yes" if result.get("pipeline_running") else "no"])
    in_process = ", ".join(f"{kind} p50 {r['p50_ms']} ms, p95 {r['p95_ms']} ms" for kind, r in
                           report["in_process"].items())
    met = ", ".join(f"{kind} {'met' if ok else 'not met'}" for kind, ok in report.get("met", {}).items())
    pipeline = report["pipeline"]
    runs = (f" ({pipeline['runs_started']} started, {pipeline['runs_finished']} finished, "
            f"{pipeline['runs_failed']} failed)" if "runs_started" in pipeline else "")
    return "\n".join([
        "## memlake serve: latency through HTTP",
        "",
        f"{report['date']}, home `{report['home']}` ({report['agents']} agents), `memlake serve --workers "
        f"{report.get('server_workers', 1)}`; queries: {report['queries']}, "
        f"{report['distinct_queries']} distinct, each client count asking its own {report['calls_per_run']} of "
        f"them once per kind. Concurrent load: {pipeline['what']}{runs}. 1-minute load average "
        f"{report['machine'].get('load_average_1m')} at the start, {report.get('load_average_1m_after')} at the end "
        f"({report['machine'].get('cores')} cores); Python speed {report['python_speed_ms']} ms (before, after: "
        "larger is a slower machine).",
        "",
        f"Targets at {TARGET_SERVE_CLIENTS} clients: search p95 ≤ {targets['search']} ms, context p95 ≤ "
        f"{targets['context']} ms: {met}. Errors: {report['errors']}.",
        "",
        markdown_table(["call", "clients", "p50 ms", "p95 ms", "requests/s", "errors", "p50 / in process",
                "pipeline running"], rows),
        "",
        f"The same calls in process (one at a time, the 1-client slice): {in_process}.",
        "",
        *(["The floor rows: a server of the same uvicorn workers whose one route embeds the question with the "
           "home's embedder and does nothing else, asked the search questions under the same load. A search "
           "embeds its question first, so no search through HTTP is faster than the floor on this machine.", ""]
          if report.get("floor") else []),
    ])


def render(folder: Path) -> str:
    """The whole docs/benchmarks.md from the JSON files present in `folder`."""
    parts = ["# Benchmarks", "",
             "Written by `make bench` (`memlake bench all`) from the JSON files in `docs/benchmarks/`. "
             "Do not edit by hand.", ""]
    reports = {}
    for name in ("locomo", "scale"):
        path = folder / f"{name}.json"
        if path.is_file():
            reports[name] = json.loads(path.read_text())
    first = next(iter(reports.values()), None)
    if first:
        machine = first["machine"]
        parts += [f"Machine: {machine.get('cpu')}, {machine.get('cores')} cores, {machine.get('memory_gb')} GB, "
                  f"Python {machine.get('python')}, {machine.get('platform')}.", ""]
        loads = ", ".join(f"{n} {r['machine'].get('load_average_1m')}" for n, r in reports.items())
        parts += [f"1-minute load average when each benchmark finished: {loads} (2 cores; above 2 the "
                  "machine was shared with other work and every timing is inflated).", ""]
        parts += ["Dates: " + ", ".join(f"{n} {r['date']}" for n, r in reports.items()), ""]
    if "locomo" in reports:
        parts.append(render_locomo(reports["locomo"]))
    others = sorted(folder.glob("locomo-*.json"))
    for path in others:
        parts.append(render_locomo_other_model(json.loads(path.read_text()), reports.get("locomo")))
    if "scale" in reports:
        parts.append(render_scale(reports["scale"]))

    parts.append(render_distill_section(folder / "distill.json"))
    parts.append(render_changes_section(folder / "changes.json"))
    if (folder / "serve.json").is_file():
        parts.append(render_serve(json.loads((folder / "serve.json").read_text())))
    rendered = {*reports, "distill", "changes", "serve", *(path.stem for path in others)}
    for path in sorted(folder.glob("*.json")):  # other benchmarks bring their own Markdown
        if path.stem not in rendered:
            other = json.loads(path.read_text())
            if isinstance(other, dict) and isinstance(other.get("markdown"), str):
                parts += [other["markdown"], ""]
    return "\n".join(parts) + "\n"
