"""`toolscore import tau2-bench --judge-url --judge-model`: the tasks' nl_assertions become
response rubrics of one judge in the spec, scored on what the agent said against the scripted
OpenAI-compatible server of tests/fake_openai.py and reported apart from the verdict; without
the options they stay unscored, and the summary and import.json say how many and which
options judge them."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from fake_openai import FakeOpenAI, Reply, judge_answer, serving
from toolscore.cli.app import cli
from toolscore.specs.loading import load_specs

FIXTURE = Path(__file__).parents[1] / "tau2_fixture"
KEY_VAR = "TOOLSCORE_TEST_TAU2_JUDGE_KEY"
ASSERTION = "The agent confirms the cancellation."


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def imported(out: Path, *judge: str) -> Result:
    return invoke(
        "import", "tau2-bench", str(FIXTURE), "--domain", "retail", "--out", str(out), *judge
    )


def met_when_confirmed(body: dict[str, Any], number: int) -> Reply:
    """1 (met) when the agent's text says it cancelled, else 0, as tau2's judge answers."""
    produced = body["messages"][-1]["content"].split("<produced>\n")[1]
    if "cancelled" in produced.casefold():
        return judge_answer('{"score": 1, "reason": "it confirms"}')
    return judge_answer('{"score": 0, "reason": "no confirmation"}')


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    for fake in serving():
        fake.chat = met_when_confirmed
        yield fake


def cases(out: Path) -> dict[str, dict[str, Any]]:
    lines = (out / "cases.jsonl").read_text().splitlines()
    return {case["id"]: case for case in map(json.loads, lines)}


def test_with_a_judge_the_assertions_become_response_rubrics(tmp_path: Path) -> None:
    out = tmp_path / "retail"
    result = imported(
        out, "--judge-url", "http://127.0.0.1:9/v1", "--judge-model", "judge-1",
        "--judge-key-env", KEY_VAR,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "1 nl assertions as response rubrics of the judge tau2_nl_assertion" in result.stdout
    assert "kept, not scored: 0 nl assertions," in result.stdout
    case = cases(out)["0"]
    assert case["response_rubrics"] == [{"rubric": "tau2_nl_assertion", "text": ASSERTION}]
    assert "tau2_nl_assertions" not in case
    specs = load_specs(out / "tools.yaml")
    judge = specs.rubrics["tau2_nl_assertion"]
    assert (judge.endpoint.base_url, judge.endpoint.model) == ("http://127.0.0.1:9/v1", "judge-1")  # type: ignore[union-attr]
    assert judge.endpoint.api_key_env == KEY_VAR  # type: ignore[union-attr]
    assert (judge.low, judge.high, judge.threshold) == (0, 1, 1.0)  # type: ignore[union-attr]
    counts = json.loads((out / "import.json").read_text())["counts"]
    assert (counts["nl_assertions"], counts["nl_assertions_judged"]) == (1, 1)
    assert counts["nl_assertions_unscored"] == 0


def test_without_a_judge_they_are_kept_and_the_options_are_named(tmp_path: Path) -> None:
    out = tmp_path / "retail"
    result = imported(out)
    assert result.exit_code == 0, result.output
    assert (
        "kept, not scored: 1 nl assertions (0 cases score them in tau2; --judge-url and "
        "--judge-model judge them)" in result.stdout
    )
    about = json.loads((out / "import.json").read_text())
    assert (about["counts"]["nl_assertions_unscored"], about["counts"]["nl_assertions_judged"]) == (
        1, 0,
    )  # fmt: skip
    assert any("give --judge-url and --judge-model" in note for note in about["notes"])
    assert cases(out)["0"]["tau2_nl_assertions"] == [ASSERTION]
    assert "rubrics" not in (out / "tools.yaml").read_text()


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (("--judge-url", "http://x/v1"), "--judge-url needs --judge-model too"),
        (("--judge-model", "m"), "--judge-model needs --judge-url too"),
        (("--judge-key-env", "K"), "--judge-key-env needs --judge-url and --judge-model"),
    ],
)
def test_judge_options_go_together(tmp_path: Path, options: tuple[str, ...], words: str) -> None:
    result = imported(tmp_path / "retail", *options)
    assert result.exit_code == 2
    assert words in result.output
    assert not (tmp_path / "retail").exists()


def test_the_judged_assertions_are_reported_apart_from_the_verdict(
    tmp_path: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_VAR, "sk-test-tau2")
    monkeypatch.setenv("TOOLSCORE_DB", str(tmp_path / "results.db"))
    out = tmp_path / "retail"
    result = imported(
        out, "--judge-url", server.url, "--judge-model", "judge-1", "--judge-key-env", KEY_VAR
    )
    assert result.exit_code == 0, result.output
    task = cases(out)["0"]
    calls = [
        {"name": "get_order_details", "args": {"order_id": "#W1"}},
        {"name": "cancel_pending_order", "args": {"order_id": "#W1", "reason": "no longer needed"}},
    ]
    lines: dict[str, dict[str, Any]] = {
        "told": {"calls": calls, "response": "Your order #W1 is cancelled."},
        "untold": {"calls": calls, "response": "Anything else?"},
        "silent": {"calls": calls},
    }
    (out / "variants.jsonl").write_text(
        "".join(json.dumps({**task, "id": name}) + "\n" for name in lines)
    )
    (out / "outputs.jsonl").write_text(
        "".join(json.dumps({"id": name, **line}) + "\n" for name, line in lines.items())
    )
    report_path = out / "report.json"
    result = invoke(
        "score", "--specs", str(out / "tools.yaml"), "--cases", str(out / "variants.jsonl"),
        "--outputs", str(out / "outputs.jsonl"), "--env", "--workers", "1",
        "--json", str(report_path),
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads(report_path.read_text())
    by_id = {case["id"]: case for case in report["cases"]}
    # the state verdict is the same for all three: the judge never decides it
    assert [by_id[name]["state_passed"] for name in lines] == [True, True, True]
    assert [by_id[name]["passed"] for name in lines] == [True, True, True]
    judged = {name: by_id[name]["rubrics"] for name in lines}
    assert [(e["score"], e["passed"]) for e in judged["told"]] == [(1.0, True)]
    assert [(e["score"], e["passed"]) for e in judged["untold"]] == [(0.0, False)]
    assert judged["silent"][0]["unscored"] == "the agent said nothing (no text in its output)"
    per_rubric = report["summary"]["rubrics"]["per_rubric"]["tau2_nl_assertion"]
    assert (per_rubric["n"], per_rubric["pass_rate"]["passed"]) == (2, 1)
    [body, _] = [seen.body for seen in server.requests("/chat/completions")]
    assert f"<rubric>\n{ASSERTION}\n</rubric>" in body["messages"][1]["content"]


# checkout.restore: a used Environment brought back to the initial one (no deep copy)


def fixture_environment() -> Any:
    from toolscore.tau2 import checkout  # noqa: PLC0415 - imports the fixture's tau2

    return checkout.load_environment(str(FIXTURE), "retail")


def test_restore_brings_back_exactly_what_a_replay_changed() -> None:
    import copy  # noqa: PLC0415

    from toolscore.tau2 import checkout  # noqa: PLC0415

    original = fixture_environment()
    initial = checkout.snapshot(original)
    used = copy.deepcopy(original)
    users = used.tools.db.users
    checkout.call_tool(used, "cancel_pending_order", {"order_id": "#W1", "reason": "x"})
    used.tools.db.orders["#W2"]["quantity"] = float(used.tools.db.orders["#W2"]["quantity"])
    used.tools.db.orders["#NEW"] = {"status": "pending"}
    compared = checkout.snapshot(used)
    assert compared != initial
    assert compared["db"]["orders"]["#W2"] == initial["db"]["orders"]["#W2"]  # 3.0 == 3
    assert checkout.restore(used, compared, original, initial) is True
    after = checkout.snapshot(used)
    assert orjson_text(after) == orjson_text(initial)  # 2.0 put back as 2: typed, as tau2's hash
    assert used.tools.db.orders["#W1"] is not original.tools.db.orders["#W1"]  # a copy
    assert used.tools.db.users is users  # what did not change is kept, not copied
    assert list(used.tools.db.orders) == ["#W1", "#W2"]  # the added order deleted


def test_restore_refuses_what_it_cannot_match() -> None:
    import copy  # noqa: PLC0415

    from toolscore.tau2 import checkout  # noqa: PLC0415

    original = fixture_environment()
    initial = checkout.snapshot(original)
    used = copy.deepcopy(original)
    del used.tools.db.orders["#W1"]
    assert checkout.restore(used, checkout.snapshot(used), original, initial) is False
    assert checkout.restore(used, None, original, initial) is False


def orjson_text(value: Any) -> bytes:
    import orjson  # noqa: PLC0415

    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
