"""Long work says which step it is on and how far it is: `memlake run` and `memlake reindex` report each step
of their Dagster run as it ends, out of the run's steps; the CLI shows it as a bar, quiet under --quiet."""

from typer.testing import CliRunner

from tests.conftest import land

ONE_CHAT = '{"conversation_id":"c1","role":"user","content":"I work at Acme.","created_at":"2024-03-01T10:00:00Z"}\n'


def test_a_run_and_a_reindex_report_each_step_out_of_the_runs_steps(settings, fast_resources):
    import dagster as dg

    from pipelines.runs import run_landing, run_reindex

    instance = dg.DagsterInstance.ephemeral()
    land(settings, "alice", "a.jsonl", ONE_CHAT)
    seen: list[tuple[str, int, int]] = []
    outcome = run_landing(settings, resources=fast_resources, instance=instance,
                          progress=lambda step, done, total: seen.append((step, done, total)))
    assert outcome.success
    steps = [step for step, _, _ in seen]
    assert "transcripts__turns" in steps and "episodes" in steps
    assert steps.index("transcripts__turns") < steps.index("episodes")  # in the order they ran
    assert [done for _, done, _ in seen] == list(range(1, len(seen) + 1))
    assert {total for _, _, total in seen} == {len(seen)}  # every step of the run, counted once

    seen.clear()
    assert run_reindex(settings, resources=fast_resources, instance=instance,
                       progress=lambda step, done, total: seen.append((step, done, total))).success
    assert {"search__chunk_index", "search__episode_index", "search__fact_index"} <= {s for s, _, _ in seen}
    assert seen[-1][1] == seen[-1][2]


def test_memlake_run_takes_quiet_and_prints_no_bar_when_not_a_terminal(settings):
    from pipelines.cli import app

    land(settings, "alice", "a.jsonl", ONE_CHAT)
    result = CliRunner().invoke(app, ["run", "--quiet", "--home", str(settings.home)])
    assert result.exit_code == 0, result.output
    assert "steps" not in result.output and "it/s" not in result.output


def test_the_bar_shows_the_step_and_how_far_on_a_terminal_and_nothing_under_quiet(monkeypatch, capsys):
    import sys

    from pipelines.progress import ProgressBar

    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    with ProgressBar("memlake run", "step", quiet=False) as bar:
        bar.step("transcripts__turns", 2, 5)
        bar.bar.refresh()  # type: ignore[union-attr]
    shown = capsys.readouterr().err
    assert "memlake run" in shown and "2/5" in shown and "transcripts__turns" in shown
    with ProgressBar("memlake run", "step", quiet=True) as bar:
        bar.step("transcripts__turns", 2, 5)
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(sys.stdout, "isatty", lambda: False)  # a script's log
    with ProgressBar("memlake run", "step", quiet=False) as bar:
        bar.step("transcripts__turns", 2, 5)
    assert capsys.readouterr().err == ""
