"""`make dev`'s Dagster UI in a real browser (Debian's chromium, driven by playwright): the Automation page lists
both maintenance schedules, and a sweep's report shows on its asset's page as a Markdown table. `make install`
installs chromium; playwright never downloads a browser of its own."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

from tests.pipelines.test_dev_server import asset_keys_served, dev_server

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
AUTOMATION_PAGE = "/automation"  # dagster-webserver 1.13's route for the Automation page (schedules and sensors)
SWEEP_ASSET_PAGE = "/assets/maintenance/fact_status"
SCHEDULES = ("daily_consolidation", "nightly_lint")


def sweep(home: Path) -> None:
    """`memlake maintain --lint` on the home, recorded in its Dagster instance as the UI's runs are."""
    env = {**os.environ, "MEMLAKE_HOME": str(home)}
    env.pop("DAGSTER_HOME", None)
    done = subprocess.run([str(Path(sys.executable).with_name("memlake")), "maintain", "--lint", "--as-of",
                           "2025-06-01T00:00:00Z"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def test_the_automation_page_shows_both_maintenance_schedules(tmp_path: Path) -> None:
    assert shutil.which("chromium") == CHROMIUM, "no Debian chromium: `make install` installs it"
    with dev_server(tmp_path) as (port, server):
        assert asset_keys_served(port, server, 120), (tmp_path / "dev.log").read_text()[-3000:]
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                page.goto(f"http://127.0.0.1:{port}{AUTOMATION_PAGE}", wait_until="domcontentloaded")
                for name in SCHEDULES:  # the UI is a JS app: its rows appear after its own GraphQL calls
                    page.get_by_text(name, exact=True).first.wait_for(state="visible", timeout=30_000)
                page.screenshot(path=str(tmp_path / "automation.png"), full_page=True)
                sweep(tmp_path / "home")
                page.goto(f"http://127.0.0.1:{port}{SWEEP_ASSET_PAGE}", wait_until="domcontentloaded")
                # the report's Markdown rendered: a table with a row per step, the bold heading without its stars
                page.locator("table td", has_text="audited_changes").first.wait_for(state="visible", timeout=30_000)
                # the UI fills the page's panels one after another: the heading may come after the table
                page.get_by_text("lint sweep lint-2025-06-01T00:00:00.000000Z").first.wait_for(timeout=30_000)
                assert "lint sweep lint-2025-06-01T00:00:00.000000Z" in page.inner_text("body")
                assert "**lint sweep**" not in page.inner_text("body")
                page.screenshot(path=str(tmp_path / "sweep_asset.png"), full_page=True)
            finally:
                browser.close()
    assert (tmp_path / "automation.png").stat().st_size > 0
