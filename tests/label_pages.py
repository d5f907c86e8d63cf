"""The labelling page under test: a batch to label, a signed-in client, a label posted, and
the hostile text the page must keep inert."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from toolscore.calibration.batches import BatchCase, Batches
from toolscore.calibration.web import TOKEN_HEADER, create_app
from toolscore.store import open_store

TOKEN = "test-token-0123456789"


PORT = 8123


BASE = f"http://127.0.0.1:{PORT}"


SCRIPT = "<script>alert(1)</script>"


ATTRIBUTE = '"><img src=x onerror=alert(1)>'


PWN = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script>'


"""A payload that sets `window.__pwned` if the page ever runs it (the browser test looks)."""


EXACT_REASON = "EXACT-REASON: /city is 'paris', not 'Paris'"


ACCEPTED_NOTE = "ACCEPTED-NOTE: casefold accepts 'paris'"


MISMATCH_NOTE = "MISMATCH-NOTE: expected 'order-77', got 'order-78'"


def difference(
    plan_call: int | None,
    call: int | None,
    path: str,
    accepted: bool,
    message: str,
    rule: str | None = None,
    **values: Any,
) -> dict[str, Any]:
    """One entry of a view's `differences` (`values`: `expected` and `produced`, if any)."""
    return {"plan_call": plan_call, "call": call, "path": path, **values,
            "accepted": accepted, "rule": rule, "message": message}  # fmt: skip


def mismatch(code: str, path: str, message: str, **values: Any) -> dict[str, Any]:
    """One of the rule scorer's mismatches as a view keeps it (`values`: the rest)."""
    return {"code": code, "path": path, "rule": None, "call": 0, "plan_call": 0,
            "message": message, **values}  # fmt: skip


def weather_view() -> dict[str, Any]:
    """A case the rule scorer passes and exact JSON fails: the city differs in case."""
    return {
        "prompt": "Weather in Paris?",
        "plans": [[{"name": "get_weather", "args": {"city": "Paris"}}]],
        "plan": 0,
        "produced": [
            {
                "name": "get_weather",
                "args": {"city": "paris", "unit": "celsius"},
                "raw_args": None,
                "error": None,
            }
        ],
        "pairs": [[0, 0]],
        "differences": [
            difference(
                0,
                0,
                "/city",
                True,
                ACCEPTED_NOTE,
                expected="Paris",
                produced="paris",
                rule="casefold",
            ),
            difference(0, 0, "/unit", True, "enum default", produced="celsius", rule="enum"),
        ],
        "mismatches": [],
        "exact_reason": EXACT_REASON,
    }


def refund_view() -> dict[str, Any]:
    """A case the rule scorer fails: the refund names another order; plan 1 looks it up."""
    return {
        "prompt": "Refund order 77",
        "plans": [
            [{"name": "refund", "args": {"order_id": "order-77", "amount": 12.5}}],
            [
                {"name": "get_order", "args": {"order_id": "order-77"}},
                {"name": "refund", "args": {"order_id": {"$ref": "look#/order_id"}}},
            ],
        ],
        "plan": 0,
        "produced": [
            {
                "name": "refund",
                "args": {"order_id": "order-78", "amount": 12.5},
                "raw_args": None,
                "error": None,
            }
        ],
        "pairs": [[0, 0]],
        "differences": [
            difference(
                0,
                0,
                "/order_id",
                False,
                MISMATCH_NOTE,
                expected="order-77",
                produced="order-78",
                rule="exact",
            ),
        ],
        "mismatches": [
            mismatch(
                "value_mismatch",
                "/order_id",
                MISMATCH_NOTE,
                rule="exact",
                expected="order-77",
                produced="order-78",
            ),
        ],
        "exact_reason": "argument /order_id differs",
    }


def broken_view() -> dict[str, Any]:
    """A missing call, and an extra call whose arguments are not JSON."""
    return {
        "prompt": None,
        "plans": [[{"name": "lookup", "args": {"q": {"$any": ["a", "b"]}}}], []],
        "plan": 0,
        "produced": [
            {"name": "search", "args": None, "raw_args": '{"q": ', "error": "Expecting value"}
        ],
        "pairs": [],
        "differences": [
            difference(0, None, "", False, "missing call", expected="lookup"),
            difference(None, 0, "", False, "extra call", produced="search"),
        ],
        "mismatches": [mismatch("missing_call", "", "lookup not made", call=None)],
        "exact_reason": "no call matches",
    }


def abstention_view() -> dict[str, Any]:
    """The right answer is no call, and none was made."""
    return {
        "prompt": "hello there",
        "plans": [],
        "plan": None,
        "produced": [],
        "pairs": [],
        "differences": [],
        "mismatches": [],
        "exact_reason": None,
    }


def evil_view() -> dict[str, Any]:
    """Model output that tries to inject markup through every field the page shows."""
    return {
        "prompt": f"{PWN} {SCRIPT} {ATTRIBUTE}",
        "plans": [[{"name": SCRIPT, "args": {ATTRIBUTE: SCRIPT}}]],
        "plan": 0,
        "produced": [
            {
                "name": SCRIPT,
                "args": {ATTRIBUTE: PWN, "bidi": "abc\u202edef"},
                "raw_args": None,
                "error": None,
            },
            {"name": PWN, "args": None, "raw_args": PWN, "error": ATTRIBUTE},
        ],
        "pairs": [[0, 0]],
        "differences": [
            difference(
                0,
                0,
                "/" + ATTRIBUTE.replace("/", "~1"),
                False,
                PWN,
                expected=SCRIPT,
                produced=PWN,
                rule=SCRIPT,
            ),
            difference(None, 1, "", False, SCRIPT, produced=PWN),
        ],
        "mismatches": [mismatch(SCRIPT, ATTRIBUTE, PWN, rule=PWN, expected=SCRIPT, produced=PWN)],
        "exact_reason": PWN,
    }


CASES = [
    ("weather", "get_weather.city [casefold]", {"rules": True, "exact": False, "lowercase": True},
     weather_view()),
    ("refund", "refund.order_id [exact]", {"rules": False, "exact": False, "lowercase": False},
     refund_view()),
    ("broken", "lookup [missing_call]", {"rules": False, "exact": False, "lowercase": False},
     broken_view()),
    ("hello", "(abstention)", {"rules": True, "exact": True, "lowercase": True},
     abstention_view()),
    ("evil", f"{SCRIPT} [{ATTRIBUTE}]", {"rules": False, "exact": False, "lowercase": True},
     evil_view()),
]  # fmt: skip


def make_batch(db: Path) -> int:
    """A store at `db` holding one batch of the five cases above; return its id."""
    with open_store(db) as store:
        return Batches.of(store).create(
            run_id=1,
            baseline="exact",
            seed=0,
            requested=len(CASES),
            disagreements=len(CASES),
            strata={stratum: 1 for _, stratum, _, _ in CASES},
            cases=[
                BatchCase(position, case_id, stratum, verdicts, view)
                for position, (case_id, stratum, verdicts, view) in enumerate(CASES, 1)
            ],
        )


@contextmanager
def client_for(db: Path, labeller: str = "alice", batch: int = 1) -> Iterator[TestClient]:
    """A client of the app, signed in: its first request carried the token in the query."""
    with TestClient(create_app(db, batch, labeller, TOKEN), base_url=BASE) as client:
        assert client.get(f"/done?token={TOKEN}").status_code == 200
        yield client


def post_label(client: TestClient, **body: Any) -> Any:
    return client.post("/api/label", json=body, headers={TOKEN_HEADER: TOKEN})


WAIT_MS = 20_000


"""How long an expectation waits for the page (a loaded CI machine can be slow)."""


CHROMIUM_FLAGS = [
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def chromium() -> str:
    """The system's Chromium; skip (fail under CI) when there is none."""
    path = shutil.which("chromium") or "/usr/bin/chromium"
    if Path(path).is_file():
        return path
    if os.environ.get("CI"):
        pytest.fail("Chromium not found under CI: .ci/run installs the Debian package chromium")
    pytest.skip("Chromium not found (Debian package chromium): browser test skipped")
