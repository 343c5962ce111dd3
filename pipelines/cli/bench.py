"""`memlake bench`: the benchmarks (the memlake_bench package, outside the product). Each command imports
them inside itself, so no other command loads them (import-linter's contract in pyproject.toml)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from memlake.cpu import serve_workers
from memlake.settings import existing_home, load_settings
from pipelines.cli.shared import REPO_DIR

if TYPE_CHECKING:
    from memlake_bench.pipeline import HomePipeline


bench_app = typer.Typer(
    no_args_is_help=True,
    help="Benchmarks: LoCoMo retrieval recall, context blocks, RealMem retrieval, ingest, search at scale, the "
    "distiller, the fact change sets; all of them.",
)


def bench_runs() -> HomePipeline:
    """The runs a benchmark builds its home with: the pipeline's own, in process."""
    from memlake_bench.in_process import IN_PROCESS  # deferred: the benchmarks load only for a `bench` command

    return IN_PROCESS


LOCOMO_DATA = REPO_DIR.parent / "shared" / "benchmarks" / "locomo" / "locomo10.json"
BENCH_DIR = REPO_DIR / "docs" / "benchmarks"


# options of the benchmarks that build (or reuse) a LoCoMo home
LocomoData = Annotated[Path, typer.Option(exists=True, dir_okay=False, help="locomo10.json")]
LimitOption = Annotated[int | None, typer.Option(help="only the first N samples (smoke run)")]
ModelOption = Annotated[str, typer.Option(help="embedding model ('' = default, 'hash' = test double)")]
BenchHomeOption = Annotated[Path | None, typer.Option(help="build into this home (default: a temporary one)")]
ReuseOption = Annotated[bool, typer.Option(help="reuse an already built --home")]


@bench_app.command("locomo")
def bench_locomo(
    data: LocomoData = LOCOMO_DATA,
    out: Annotated[Path, typer.Option(help="JSON results")] = BENCH_DIR / "locomo.json",
    limit: LimitOption = None,
    model: ModelOption = "",
    home: BenchHomeOption = None,
    reuse: ReuseOption = False,
    sweeps: Annotated[bool, typer.Option(help="also run the tuning sweeps on conversations 0-4")] = True,
    adapted: Annotated[
        bool, typer.Option(help="also the model adapted on conversations 0-4's own question-reply pairs")
    ] = True,
) -> None:
    """LoCoMo: land the conversations, run the pipeline, ask the questions through Memory.search."""
    from memlake_bench.locomo import run_locomo  # deferred: the benchmarks load only for a `bench` command

    report = run_locomo(data, out, limit=limit, model=model, home=home, reuse=reuse, sweeps=sweeps,
                        adapted=adapted, log=typer.echo, pipeline=bench_runs())
    for name in ("hybrid", "hybrid_adapted"):
        if name in report["systems"]:
            overall = report["systems"][name]["all"]
            typer.echo(
                f"{name}: turn recall_any@10 {overall['turn_any@10']:.3f}, session recall_all@5 "
                f"{overall['session_all@5']:.3f} over {overall['n']} questions -> {out}"
            )


@bench_app.command("context")
def bench_context(
    data: LocomoData = LOCOMO_DATA,
    out: Annotated[Path, typer.Option(help="JSON results")] = BENCH_DIR / "context.json",
    limit: LimitOption = None,
    model: ModelOption = "",
    home: BenchHomeOption = None,
    reuse: ReuseOption = False,
) -> None:
    """Context blocks on LoCoMo: evidence in the block, compact (800 tokens) and full, beside search cut to 800."""
    from memlake_bench.context import run_context  # deferred: as the other benchmarks beside locomo

    report = run_context(data, out, home=home, reuse=reuse, limit=limit, model=model, log=typer.echo,
                         pipeline=bench_runs())
    for name, mode in report["modes"].items():
        typer.echo(f"{name}: evidence in block {mode['evidence_in_block']['all']['any']:.3f}, tokens mean "
                   f"{mode['tokens_mean']}, assembly p50 {mode['assembly_ms_p50']} ms -> {out}")


@bench_app.command("serve")
def bench_serve(
    home: Annotated[Path | None, typer.Option(
        help="an existing home to serve (the LoCoMo home of `bench locomo --home`); default: the LoCoMo "
        "conversations built into a temporary home first")] = None,
    data: LocomoData = LOCOMO_DATA,
    out: Annotated[Path, typer.Option(help="JSON results")] = BENCH_DIR / "serve.json",
    report: Annotated[Path, typer.Option(help="the Markdown report it renders again")] = REPO_DIR / "docs" /
    "benchmarks.md",
    token: Annotated[str | None, typer.Option(help="a token of every agent, when the home has tokens")] = None,
    calls: Annotated[int, typer.Option(min=1, help="calls per client count and kind, each query asked once")] = 200,
    pipeline: Annotated[bool, typer.Option(help="run `memlake run` on a copy of the landing files meanwhile")] = True,
    workers: Annotated[int | None, typer.Option(min=1, max=64, help="`memlake serve --workers` (default as "
                                                "there: one per core, at most 2)")] = None,
) -> None:
    """Search and context p50/p95 through `memlake serve` at 1, 8 and 32 concurrent clients while a pipeline run
    materializes, errors, and the same calls in process."""
    from memlake_bench.locomo import built_home  # deferred: as the other benchmarks beside locomo
    from memlake_bench.render import render  # deferred: as above
    from memlake_bench.serve import run_serve_bench  # deferred: the HTTP client and the service, for this one

    with tempfile.TemporaryDirectory(prefix="memlake-bench-serve-") as tmp:
        if home is None:
            home = Path(tmp) / "locomo"
            built_home(json.loads(data.read_bytes()), home, "", False, bench_runs(), typer.echo)
        result = run_serve_bench(existing_home(load_settings(home)).home, out, data=data, token=token,
                                 calls_per_run=calls, pipeline=pipeline, workers=workers or serve_workers(),
                                 log=typer.echo)
    typer.echo(f"errors {result['errors']}; p95 targets at 8 clients: {result['met']} -> {out}")
    if out.parent.resolve() == BENCH_DIR.resolve():  # a run kept elsewhere leaves the report alone
        report.write_text(render(BENCH_DIR))
        typer.echo(f"wrote {report}")


REALMEM_DATA = REPO_DIR.parent / "shared" / "benchmarks" / "realmem"
RealmemData = Annotated[Path, typer.Option(exists=True, file_okay=False, help="the RealMem folder")]
PersonasOption = Annotated[
    str, typer.Option(help="comma-separated persona indexes, 0-9 in file-name order (default all; 0-4 tune)")
]


def persona_indexes(text: str) -> list[int] | None:
    """`--personas 0,5` as [0, 5]; empty: all of them. Anything else is a clear error."""
    if not text.strip():
        return None
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise typer.BadParameter(f"--personas takes comma-separated numbers, got {text!r}") from None


@bench_app.command("realmem")
def bench_realmem(
    data: RealmemData = REALMEM_DATA,
    out: Annotated[Path, typer.Option(help="JSON results")] = BENCH_DIR / "realmem.json",
    personas: PersonasOption = "",
    model: ModelOption = "",
    home: BenchHomeOption = None,
    reuse: ReuseOption = False,
) -> None:
    """RealMem: gold sessions of long-answer chats, memlake beside BM25 in the same run; personas 5-9 apart."""
    from memlake_bench.realmem import run_realmem  # deferred: as the other benchmarks beside locomo

    try:
        report = run_realmem(data, out, personas=persona_indexes(personas), model=model, home=home, reuse=reuse,
                             log=typer.echo, pipeline=bench_runs())
    except (FileNotFoundError, ValueError) as exc:
        raise typer.BadParameter(str(exc)) from None
    for name, system in report["systems"].items():
        for half in ("tune_0_4", "held_5_9"):
            row = system[half]
            if row.get("n"):
                typer.echo(f"{name} {half}: session all@5 {row['session_all@5']:.3f}, evidence in 750 words "
                           f"{row['words750_share']:.3f} over {row['n']} queries")
    typer.echo(f"-> {out}")


@bench_app.command("ingest")
def bench_ingest(
    locomo_data: LocomoData = LOCOMO_DATA,
    realmem_data: RealmemData = REALMEM_DATA,
    out: Annotated[Path, typer.Option(help="JSON results")] = BENCH_DIR / "ingest.json",
    datasets: Annotated[str, typer.Option(help="comma-separated: locomo, realmem")] = "locomo,realmem",
    locomo_limit: Annotated[int | None, typer.Option(help="only the first N LoCoMo samples")] = None,
    personas: PersonasOption = "",
    model: ModelOption = "",
    home: Annotated[Path | None, typer.Option(help="build the homes under this folder (default: a temporary one)")]
    = None,
) -> None:
    """Ingest on LoCoMo and RealMem: turns/s end to end, texts embedded per turn, index size, peak memory; the
    default chunking beside today's (no bound on long turns) in the same run."""
    from memlake_bench.ingest import run_ingest  # deferred: as the other benchmarks beside locomo

    try:
        report = run_ingest(locomo_data, realmem_data, out, datasets=[d.strip() for d in datasets.split(",")],
                            locomo_limit=locomo_limit, personas=persona_indexes(personas), model=model, home=home,
                            log=typer.echo, pipeline=bench_runs())
    except (FileNotFoundError, ValueError) as exc:
        raise typer.BadParameter(str(exc)) from None
    for dataset in ("locomo", "realmem"):
        if dataset in report:
            typer.echo(f"{dataset}: default over today's {report[dataset]['budget_over_today']}")
    typer.echo(f"-> {out}")


@bench_app.command("scale")
def bench_scale(
    out: Annotated[Path, typer.Option(help="JSON results")] = BENCH_DIR / "scale.json",
    sizes: Annotated[str, typer.Option(help="comma-separated cases: single:ROWS or agents:AGENTS:ROWS")] = (
        "single:100000,agents:1000:1000000"
    ),
    queries: Annotated[int, typer.Option(help="queries per case")] = 200,
    home: Annotated[Path | None, typer.Option(help="build into this folder (default: a temporary one)")] = None,
    ingest_samples: Annotated[int, typer.Option(
        min=0, help="also build LoCoMo's first N conversations once per worker count (0: no ingest)")] = 0,
    workers: Annotated[str, typer.Option(help="comma-separated worker counts (run_workers) of the ingest")] = "1,2",
    data: Annotated[Path, typer.Option(exists=True, dir_okay=False, help="locomo10.json")] = LOCOMO_DATA,
    model: Annotated[str, typer.Option(help="embedding model of the ingest (default: the packaged one)")] = "",
    storage_samples: Annotated[int, typer.Option(
        min=0, help="also build LoCoMo's first N conversations on local disk and on an S3-compatible server on "
        "loopback (moto), and time the reader's search on each (0: not measured)")] = 0,
) -> None:
    """Search p50/p95 and the reader's peak memory over synthetic vectors and text; with --ingest-samples, ingest
    throughput on LoCoMo with each worker count (days built at once); with --storage-samples, the reader's search
    p50/p95 with the lake and indexes on an object store vs local disk."""
    from memlake_bench.in_process import IN_PROCESS  # deferred: Dagster, only for the ingest
    from memlake_bench.scale import IngestCase, StorageCase, run_scale  # deferred: LanceDB costs ~1 s to import

    try:
        counts = tuple(int(count) for count in workers.split(","))
    except ValueError:
        raise typer.BadParameter(f"--workers {workers!r}: comma-separated whole numbers, e.g. 1,2") from None
    if any(count < 1 for count in counts):
        raise typer.BadParameter(f"--workers {workers!r}: each count is at least 1")
    ingest = IngestCase(data, ingest_samples, counts, model, IN_PROCESS) if ingest_samples else None
    storage = StorageCase(data, storage_samples, model, IN_PROCESS, queries) if storage_samples else None
    run_scale(out, sizes=sizes, queries=queries, home=home, log=typer.echo, ingest=ingest, storage=storage)


@bench_app.command("distill")
def bench_distill(
    data: Annotated[Path, typer.Option(exists=True, dir_okay=False, help="locomo10.json")] = LOCOMO_DATA,
    out: Annotated[Path, typer.Option(help="JSON results")] = BENCH_DIR / "distill.json",
    rounds: Annotated[int, typer.Option(help="timed passes (the median is reported)")] = 3,
) -> None:
    """Distillation on LoCoMo: offline throughput, model calls per conversation, the cache on a rerun."""
    from memlake_bench.distill import run_distill_benchmark  # deferred: the benchmarks load only for `bench`

    run_distill_benchmark(data, out, rounds=rounds, log=typer.echo)
    typer.echo(f"-> {out}")


@bench_app.command("facts")
def bench_facts(
    data: Annotated[Path, typer.Option(exists=True, dir_okay=False, help="locomo10.json")] = LOCOMO_DATA,
    out: Annotated[Path, typer.Option(help="JSON results")] = BENCH_DIR / "facts.json",
    sample: Annotated[int, typer.Option(help="write a seeded sample of N held-out facts to judge by hand")] = 0,
    sealed: Annotated[bool, typer.Option(help="also score the sealed half of the blind set (only when final)")]
    = False,
    realmem_sample: Annotated[int, typer.Option(
        help="write a seeded sample of N facts from RealMem's held-back personas 5-9 to judge by hand")] = 0,
    realmem_data: Annotated[Path, typer.Option(file_okay=False, help="the RealMem folder")] = REALMEM_DATA,
    blind_4_sealed: Annotated[bool, typer.Option(
        help="also score the sealed half of blind set 4 (issue 37: never by default; once, after the last rule)")]
    = False,
) -> None:
    """Facts on LoCoMo observations about the user (samples 0-4 and 5-9 apart) and on the blind phrasing sets (their
    dev halves; a sealed half only when its flag asks); the judged RealMem sample when it is asked for or already
    beside --out."""
    from memlake.embedding import SentenceEmbedder  # deferred: it loads the embedding model
    from memlake_bench.facts import run_facts_benchmark

    if realmem_sample < 0:
        raise typer.BadParameter(f"--realmem-sample takes a count of facts, got {realmem_sample}")
    if realmem_sample and not realmem_data.is_dir():
        raise typer.BadParameter(f"--realmem-data: no RealMem folder at {realmem_data}")
    run_facts_benchmark(data, SentenceEmbedder(), out, sample_size=sample, sealed=sealed, log=typer.echo,
                        realmem=realmem_data if realmem_data.is_dir() else None,
                        realmem_sample_size=realmem_sample, sealed_4=blind_4_sealed)
    typer.echo(f"-> {out}")


@bench_app.command("changes")
def bench_changes(
    out: Annotated[Path, typer.Option(help="JSON results")] = BENCH_DIR / "changes.json",
    stories: Annotated[int, typer.Option(help="generated change stories")] = 240,
) -> None:
    """Fact changes: generated change stories through the pipeline; is the new value first, the old in history?"""
    from memlake_bench.changes import run_changes  # deferred: the benchmarks load only for a `bench` command

    report = run_changes(out, bench_runs(), n_stories=stories, log=typer.echo)
    typer.echo(f"new value first with the old in history: {report['overall']['both']:.3f} -> {out}")


@bench_app.command("all")
def bench_all(
    data: Annotated[Path, typer.Option(exists=True, dir_okay=False, help="locomo10.json")] = LOCOMO_DATA,
    out_dir: Annotated[Path, typer.Option(help="folder of the JSON results")] = BENCH_DIR,
    report: Annotated[Path, typer.Option(help="the Markdown report")] = REPO_DIR / "docs" / "benchmarks.md",
) -> None:
    """Run every benchmark and render docs/benchmarks.md."""
    from memlake_bench.changes import run_changes  # deferred: as in `bench changes`
    from memlake_bench.context import run_context  # deferred: as in `bench context`
    from memlake_bench.distill import run_distill_benchmark  # deferred: as in `bench distill`
    from memlake_bench.locomo import run_locomo  # deferred: as in `bench locomo`
    from memlake_bench.render import render  # deferred: as in `bench serve`
    from memlake_bench.scale import run_scale  # deferred: as in `bench scale`

    with tempfile.TemporaryDirectory(prefix="memlake-bench-") as tmp:  # one LoCoMo home for both benchmarks
        home = Path(tmp) / "locomo"
        run_locomo(data, out_dir / "locomo.json", home=home, log=typer.echo, pipeline=bench_runs())
        run_context(data, out_dir / "context.json", home=home, reuse=True, log=typer.echo,
                    pipeline=bench_runs())

    run_scale(out_dir / "scale.json", log=typer.echo)
    run_distill_benchmark(data, out_dir / "distill.json", log=typer.echo)
    from memlake.embedding import SentenceEmbedder  # deferred: as in `bench facts`
    from memlake_bench.facts import run_facts_benchmark

    run_facts_benchmark(data, SentenceEmbedder(), out_dir / "facts.json", sealed=True, log=typer.echo)
    run_changes(out_dir / "changes.json", bench_runs(), log=typer.echo)
    report.write_text(render(out_dir))
    typer.echo(f"wrote {report}")
