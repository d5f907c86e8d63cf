"""The labelling page in a real browser: `toolscore label` serves it, headless Chromium labels
three cases with the keyboard, reloads and resumes, and the store holds the labels.

Chromium comes from the system (Debian package `chromium`): `playwright install` cannot
download browsers here. Without it the test skips on a developer's machine and fails under
CI, whose `.ci/run` installs it.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import (
    Browser,
    ConsoleMessage,
    Dialog,
    Page,
    expect,
    sync_playwright,
)

from label_pages import CHROMIUM_FLAGS, PWN, SCRIPT, WAIT_MS, chromium, make_batch
from toolscore.calibration.batches import Batches
from toolscore.store import open_store

STARTUP_SECONDS = 30.0


@pytest.fixture
def browser() -> Iterator[Browser]:
    executable = chromium()
    flags = CHROMIUM_FLAGS + (["--no-sandbox"] if os.geteuid() == 0 else [])
    expect.set_options(timeout=WAIT_MS)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=flags)
        try:
            yield launched
        finally:
            launched.close()


class Server:
    """`toolscore label` running in its own process, and the address it printed."""

    def __init__(self, db: Path, labeller: str) -> None:
        self.db = db
        self.process = subprocess.Popen(
            [sys.executable, "-c", "from toolscore.cli.app import main; main()", "label", "1",
             "--db", str(db), "--labeller", labeller],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        assert self.process.stdout is not None
        self.printed: list[str] = []
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line:
                break
            self.printed.append(line)
            if "labels are saved as you go" in line:
                break
        found = re.search(r"http://127\.0\.0\.1:\d+/\?token=[\w-]+", "".join(self.printed))
        if found is None:
            self.process.kill()
            _, errors = self.process.communicate()
            pytest.fail(f"toolscore label printed no address: {self.printed} {errors}")
        self.address = found.group(0)
        self.base = self.address.split("/?", 1)[0]

    def stop(self) -> tuple[int, str]:
        """Stop it as a person does (Ctrl-C); its exit status and what it printed then."""
        self.process.send_signal(signal.SIGINT)
        rest, errors = self.process.communicate(timeout=STARTUP_SECONDS)
        return self.process.returncode, rest + errors


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    db = tmp_path / "results.db"
    make_batch(db)
    running = Server(db, "carol")
    try:
        yield running
    finally:
        if running.process.poll() is None:
            running.process.kill()
            running.process.communicate()


def ready(page: Page, position: int) -> None:
    """Wait until the page of case `position` is loaded and its shortcuts are live."""
    expect(page).to_have_url(re.compile(rf"/case/{position}$"))
    expect(page.locator("html[data-ready=true]")).to_have_count(1)


def labelled(page: Page, position: int) -> None:
    """Wait until the page shows case `position` labelled (its verdicts are in the page)."""
    expect(page.locator("#verdicts")).to_be_visible()
    ready(page, position)


class Watched:
    """A browser page, and the dialogs, script errors and console errors it has shown."""

    def __init__(self, browser: Browser) -> None:
        self.page = browser.new_page()
        self.dialogs: list[str] = []
        self.problems: list[str] = []
        self.page.on("dialog", self._dialog)
        self.page.on("pageerror", lambda error: self.problems.append(str(error)))
        self.page.on("console", self._console)

    def _dialog(self, dialog: Dialog) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.problems.append(message.text)


def label_three_cases(page: Page) -> None:
    """Label cases 1 to 3 correct, incorrect (with a note) and unsure, by keyboard only."""
    expect(page.locator("#progress")).to_have_text("0 / 5 labelled")
    expect(page.locator("#verdicts")).to_have_count(0)
    page.keyboard.press("c")
    labelled(page, 1)
    expect(page.locator("#progress")).to_have_text("1 / 5 labelled")
    page.keyboard.press("Enter")
    ready(page, 2)
    expect(page.locator("#verdicts")).to_have_count(0)
    page.keyboard.press("n")
    expect(page.locator("#note")).to_be_focused()
    page.keyboard.type("order id is wrong, c i u")  # shortcuts are off while typing
    page.keyboard.press("Escape")
    page.keyboard.press("i")
    labelled(page, 2)
    expect(page.locator("#note")).to_have_value("order id is wrong, c i u")
    page.keyboard.press("Enter")
    ready(page, 3)
    page.keyboard.press("u")
    labelled(page, 3)


def test_label_three_cases_with_the_keyboard_reload_and_resume(
    browser: Browser, server: Server
) -> None:
    watched = Watched(browser)
    page, base = watched.page, server.base
    page.goto(server.address)
    ready(page, 1)
    label_three_cases(page)

    page.reload()
    labelled(page, 3)
    expect(page.locator("#progress")).to_have_text("3 / 5 labelled")
    page.goto(f"{base}/")
    ready(page, 4)
    expect(page.locator("#progress")).to_have_text("3 / 5 labelled")
    page.keyboard.press("ArrowLeft")
    ready(page, 3)
    expect(page.locator(".label-button.label-unsure")).to_have_attribute("aria-pressed", "true")
    with open_store(server.db, create=False) as store:
        labels = [
            (label.case_id, label.labeller, label.label, label.note)
            for label in Batches.of(store).labels(1)
        ]
    assert labels == [
        ("weather", "carol", "correct", ""),
        ("refund", "carol", "incorrect", "order id is wrong, c i u"),
        ("broken", "carol", "unsure", ""),
    ]

    # Model output that carries markup is shown as text and never runs, labelled or not.
    page.goto(f"{base}/case/5")
    ready(page, 5)
    expect(page.locator(".prompt .text")).to_contain_text(SCRIPT)
    expect(page.locator(".prompt .text")).to_contain_text(PWN)
    page.locator(".label-button.label-incorrect").click()
    labelled(page, 5)
    expect(page.locator("#verdicts")).to_contain_text(PWN)
    assert page.evaluate("() => typeof window.__pwned") == "undefined"
    assert page.locator("img").count() == 0
    assert watched.dialogs == []
    assert watched.problems == []

    status, printed = server.stop()
    assert status == 0, printed
    assert "stopped: 4 of 5 cases of batch 1 labelled by carol" in printed
