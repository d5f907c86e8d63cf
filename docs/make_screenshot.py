"""Make docs/report.png, the README's picture of the HTML report.

Usage: python docs/make_screenshot.py [--out docs/report.png]

Scores the bundled support-desk example (`toolscore demo`'s files) with `--html`, opens the
page in the system's Chromium through Playwright (every request that is not the file itself
aborted), opens the failing case, and saves a small PNG of the metrics and of that case.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from click.testing import CliRunner
from playwright.sync_api import Route, sync_playwright

from toolscore.cli.app import cli, example_dir

WIDTH, HEIGHT = 900, 800
MAX_BYTES = 150_000


def write_page(folder: Path) -> Path:
    """The example's HTML report, written into `folder`."""
    example = example_dir()
    page = folder / "report.html"
    result = CliRunner().invoke(
        cli,
        [
            "score", "--specs", str(example / "tools.yaml"),
            "--cases", str(example / "cases.jsonl"), "--outputs", str(example / "outputs.jsonl"),
            "--html", str(page),
        ],
    )  # fmt: skip
    if result.exit_code != 0 or not page.exists():
        raise SystemExit(f"score --html failed: {result.output}")
    return page


def offline(route: Route) -> None:
    if route.request.url.startswith("file:"):
        route.continue_()
    else:
        route.abort()


def screenshot(page_path: Path, out: Path) -> None:
    """A PNG of the page's metrics, then of its failing case opened beside its plan."""
    executable = shutil.which("chromium") or "/usr/bin/chromium"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable, args=["--no-sandbox", "--disable-gpu"]
        )
        page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT})
        page.route("**/*", offline)
        page.goto(page_path.as_uri())
        page.select_option("#f-verdict", "failed")
        page.click("#case-rows tr")
        # The metrics and scorers, then the opened case, one above the other.
        page.evaluate(
            "for (const hide of ['header.run', '#codes', '#weak-spots', '.counts', '.foot',"
            " '#scorers > p.hint', '#embedded-note', '#case-detail > p', '#case-detail .close',"
            " '#case-detail section:last-of-type', '#shown'])"
            " document.querySelector(hide).hidden = true;"
        )
        page.screenshot(path=str(out), full_page=True)
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(Path(__file__).parent / "report.png"))
    out = Path(parser.parse_args().out)
    with tempfile.TemporaryDirectory() as folder:
        screenshot(write_page(Path(folder)), out)
    size = out.stat().st_size
    print(f"wrote {out} ({size:,} bytes)")
    if size > MAX_BYTES:
        sys.exit(f"{out} is larger than {MAX_BYTES:,} bytes: make the window smaller")


if __name__ == "__main__":
    main()
