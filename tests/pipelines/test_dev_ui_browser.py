"""`make dev`'s Dagster UI in a real browser (Debian's chromium, driven by playwright), as an operator uses it
(issue 40, "What it must show"): the Automation page lists both maintenance schedules; a drop holding a broken
export shows the quarantine warning on `landing_manifest`, naming the file; a backfill of two days gives each day
of `turns` its own row count and none of the run's totals; the lint sweep launched from the UI's launchpad writes
a lint report, shown as a Markdown table on the page of `maintenance/reports` (the node it was launched from),
not a consolidation, in a run named for the UI (a kind that is not one is refused in the launchpad, before any
run). Every step is screenshotted into the test's tmp folder
and copied to `test-artifacts/` at the repository's root (git-ignored). `make install` installs chromium;
playwright never downloads a browser of its own. Everything is done through the UI's pages, buttons and dialogs;
the one exception is the launchpad's config editor, filled through its CodeMirror API (typing into it
auto-indents YAML line by line)."""

import os
import re
import shutil
import time
from pathlib import Path

import pytest
from playwright.sync_api import Page, sync_playwright

from pipelines.jobs import UI_JOB
from tests.pipelines.test_dev_server import asset_keys_served, dev_server

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
AUTOMATION_PAGE = "/automation"  # dagster-webserver 1.13's route for the Automation page (schedules and sensors)
SCHEDULES = ("daily_consolidation", "nightly_lint")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
WAIT_MS = 60_000  # one UI wait for a page's data
RUN_SECONDS = 300  # one run to end: the sensor's, the backfill's (queued behind the lake writers' pool), on 2 cores
# Two days, one conversation each: 2 turns on the first, 1 on the second (a day showing 3 shows the run's count).
CHAT = (
    '{"conversation_id":"c1","message_id":"m1","role":"user","content":"I live in Berlin.",'
    '"created_at":"2024-03-01T10:00:00Z"}\n'
    '{"conversation_id":"c1","message_id":"m2","role":"assistant","content":"Noted.",'
    '"created_at":"2024-03-01T10:01:00Z"}\n'
    '{"conversation_id":"c2","message_id":"m1","role":"user","content":"I like tea.",'
    '"created_at":"2024-03-07T10:00:00Z"}\n'
)
ROWS_BY_DAY = {"2024-03-01": "2", "2024-03-07": "1"}
BROKEN = '{"conversation_id": "x", "turns": ['  # an export cut short
LINT_CONFIG = 'ops:\n  maintenance_sweep:\n    config:\n      kind: lint\n      as_of: "2025-06-01T00:00:00Z"\n'
LINT_HEADING = "lint sweep lint-2025-06-01T00:00:00.000000Z"


class Shots:
    """Screenshots of the steps, in the test's tmp folder and copied to test-artifacts/<test>/ at the end."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)

    def take(self, page: Page, name: str) -> None:
        page.screenshot(path=str(self.folder / f"{name}.png"), full_page=True)

    def keep(self, name: str) -> Path:
        kept = ARTIFACTS / name
        shutil.rmtree(kept, ignore_errors=True)
        shutil.copytree(self.folder, kept)
        return kept


def open_page(page: Page, port: int, path: str) -> None:
    page.goto(f"http://127.0.0.1:{port}{path}", wait_until="domcontentloaded")


def set_config(page: Page, yaml: str) -> None:
    """The launchpad's run config, through its CodeMirror editor's API (typing would be auto-indented)."""
    page.evaluate("yaml => document.querySelector('.CodeMirror').CodeMirror.setValue(yaml)", yaml)


def metadata_value(page: Page, label: str) -> str:
    """The value beside `label` in the metadata table on the page (the UI's table: one row per entry, the label's
    cell then the value's)."""
    row = page.locator("tr", has=page.get_by_text(label, exact=True)).first
    row.wait_for(state="visible", timeout=WAIT_MS)
    return row.inner_text().replace(label, "", 1).strip()


@pytest.fixture
def shots(tmp_path: Path, request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    taken = Shots(tmp_path / "screenshots")
    yield taken
    taken.keep(request.node.name)  # kept whether the test passed or not: a failure's last page is the one to see


@pytest.mark.timeout(900)  # four runs on a cold server; on 2 busy cores that took 10 min (the suite's limit)
def test_an_operator_sees_quarantine_per_day_counts_and_the_lint_sweep_in_the_ui(tmp_path: Path, shots: Shots) -> None:
    assert shutil.which("chromium") == CHROMIUM, "no Debian chromium: `make install` installs it"
    landing = tmp_path / "home" / "landing" / "alice"
    landing.mkdir(parents=True)
    (landing / "chat.jsonl").write_text(CHAT)
    (landing / "broken.json").write_text(BROKEN)
    with dev_server(tmp_path) as (port, server):
        assert asset_keys_served(port, server, 120), (tmp_path / "dev.log").read_text()[-3000:]
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                # Dagster's newsletter prompt covers the page on a fresh instance, whenever it comes
                page.add_locator_handler(page.get_by_text("Join the Dagster community"),
                                         lambda: page.get_by_role("button", name="Skip").click())
                open_page(page, port, AUTOMATION_PAGE)
                for name in SCHEDULES:  # the UI is a JS app: its rows appear after its own GraphQL calls
                    page.get_by_text(name, exact=True).first.wait_for(state="visible", timeout=30_000)
                shots.take(page, "1_automation")

                # the landing sensor's run quarantined the broken export: a WARN (yellow) check naming it
                open_page(page, port, "/assets/transcripts/landing_manifest?view=checks")
                page.get_by_text("new file(s) quarantined: alice/broken.json: invalid JSON").first.wait_for(
                    timeout=RUN_SECONDS * 1000)
                check_row = page.locator("[class*=checkRow]", has_text="no_new_file_quarantined").first
                assert check_row.locator("[aria-label=warning_outline]").count() == 1, check_row.inner_html()
                shots.take(page, "2_quarantine_warning")

                # the lint sweep from the UI: Materialize on maintenance/reports opens the launchpad asking the kind
                open_page(page, port, "/assets/maintenance/reports")
                # (a button's name starts with its icon's: never matched exactly)
                page.get_by_role("button", name="Materialize").first.click(timeout=WAIT_MS)
                dialog = page.get_by_role("dialog")
                asks_kind = dialog.get_by_text('Missing required config entry "kind"')
                # Dagster may first ask to confirm: the sweep's other tables are written too; its parents are not
                # built yet (the sensor's run still going: the sweep's run then waits for it, the lake writers' pool)
                confirm = page.get_by_role("button", name="Confirm")
                for _ in range(3):
                    confirm.or_(asks_kind).first.wait_for(timeout=WAIT_MS)
                    if not confirm.count():
                        break
                    confirm.click()
                    page.wait_for_timeout(1000)
                asks_kind.wait_for(timeout=WAIT_MS)
                launch = dialog.get_by_role("button", name="Materialize").last  # the launchpad's own
                # a kind that is not one is refused before any run starts: no run, so no red asset or checks
                set_config(page, LINT_CONFIG.replace("kind: lint", "kind: Lint"))
                dialog.get_by_text("not in enum type").first.wait_for(timeout=WAIT_MS)
                assert launch.is_disabled()
                shots.take(page, "3_launchpad_bad_kind")
                set_config(page, LINT_CONFIG)
                page.wait_for_function("b => !b.disabled", arg=launch.element_handle(), timeout=WAIT_MS)
                shots.take(page, "3_launchpad_lint")
                launch.click()
                page.wait_for_url("**/runs/**", timeout=WAIT_MS)
                # the run is named for what started it, the UI, not Dagster's `__ASSET_JOB`
                page.get_by_text(UI_JOB, exact=True).first.wait_for(timeout=WAIT_MS)
                # the run page follows the run live: its status badge says when it ended
                page.get_by_text("Success", exact=True).first.wait_for(timeout=RUN_SECONDS * 1000)
                shots.take(page, "4_lint_run")
                # the report is on the node the sweep was launched from (it was on fact_status)
                open_page(page, port, "/assets/maintenance/reports")
                # the report's Markdown rendered: a table with a row per step, the bold heading without its stars
                page.locator("table td", has_text="audited_changes").first.wait_for(state="visible", timeout=WAIT_MS)
                # the UI fills the page's panels one after another: the heading may come after the table
                page.get_by_text(LINT_HEADING).first.wait_for(timeout=WAIT_MS)
                shots.take(page, "5_lint_report")
                body = page.inner_text("body")
                assert "**lint sweep**" not in body and "consolidation sweep" not in body
                # a backfill of both days of turns, from the asset's Materialize dialog: one run (single-run policy)
                open_page(page, port, "/assets/transcripts/turns")
                page.get_by_role("button", name="Materialize…").first.click(timeout=WAIT_MS)
                dialog = page.get_by_role("dialog")
                dialog.get_by_role("button", name="All", exact=True).click(timeout=WAIT_MS)
                dialog.get_by_text("2 partitions").wait_for(timeout=WAIT_MS)
                shots.take(page, "6_backfill_dialog")
                dialog.get_by_role("button", name="Launch backfill").click()
                for day, rows in ROWS_BY_DAY.items():  # each day's own count, once the backfill built it
                    deadline = time.monotonic() + RUN_SECONDS
                    while True:
                        open_page(page, port, f"/assets/transcripts/turns?view=partitions&partition={day}")
                        # the panel first shows "(0)" while it loads the day's events
                        page.get_by_text(re.compile(r"View all historical events \([1-9]")).first.wait_for(
                            timeout=WAIT_MS)
                        built = page.get_by_text("View all historical events (2)")  # the sensor's run, then ours
                        if built.count() or time.monotonic() > deadline:
                            break
                        page.wait_for_timeout(5000)
                    shots.take(page, f"7_turns_{day}")
                    assert built.count(), f"{day}: the backfill's materialization never showed"
                    assert metadata_value(page, "dagster/row_count") == rows, day
                    assert "rows_in_run" not in page.inner_text("body"), day  # the run's totals: in its log

            except Exception:
                shots.take(page, "failed_here")  # the page the test stopped on
                raise
            finally:
                browser.close()
    kept = {p.name for p in shots.folder.iterdir()}
    assert {"1_automation.png", "5_lint_report.png", "7_turns_2024-03-07.png"} <= kept
    assert os.path.getsize(shots.folder / "2_quarantine_warning.png") > 0
