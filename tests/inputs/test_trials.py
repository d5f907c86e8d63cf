"""Trials: several outputs lines per case (a `trial` field), each scored, and pass^k / pass@k
in the summary; required outputs found in any assistant message or the final response only,
under the default or tau-bench normalisation."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mutate
from fuzz_seeds import fuzz_case, output_groups
from toolscore import parse_case, parse_output, score
from toolscore.cli.app import cli, example_dir
from toolscore.engines.local import ParallelScoring
from toolscore.errors import CaseError, OutputError
from toolscore.inputs.jsonl import parse_line
from toolscore.inputs.trials import pass_at, pass_hat
from toolscore.report.json_report import case_to_json
from toolscore.specs.loading import load_specs
from toolscore.state import load_environment
from toolscore.state.outputs import missing_outputs

SPECS = load_specs(example_dir() / "tools.yaml")


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def _refund(order_id: str, amount: float) -> dict[str, Any]:
    return {"name": "refund", "args": {"order_id": order_id, "amount": amount}}


CASES = [
    {"id": f"c{i}", "plans": [[_refund(f"o-{i}", 10)]]} for i in range(3)
]  # fmt: skip


def _outputs(passes: dict[str, list[bool]]) -> list[dict[str, Any]]:
    """One line per trial, in case order: a right refund where True, a wrong amount where
    False; trial labels given from 0 in reverse (the report sorts them)."""
    lines = []
    for case_id, wins in passes.items():
        for trial in reversed(range(len(wins))):
            amount = 10 if wins[trial] else 11
            lines.append(
                {"id": case_id, "trial": trial, "calls": [_refund(f"o-{case_id[1:]}", amount)]}
            )
    return lines


def _write(
    folder: Path, cases: list[dict[str, Any]], outputs: list[dict[str, Any]]
) -> tuple[str, str]:
    folder.mkdir(parents=True, exist_ok=True)
    cases_path, outputs_path = folder / "cases.jsonl", folder / "outputs.jsonl"
    cases_path.write_bytes(b"".join(orjson.dumps(c) + b"\n" for c in cases))
    outputs_path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in outputs))
    return str(cases_path), str(outputs_path)


def _summary(cases: list[dict[str, Any]], outputs: list[dict[str, Any]]) -> dict[str, Any]:
    run = score(
        SPECS,
        [parse_case(c, SPECS, "cases.jsonl", n) for n, c in enumerate(cases, 1)],
        [parse_output(o, "outputs.jsonl", n) for n, o in enumerate(outputs, 1)],
    )
    list(run)
    summary: dict[str, Any] = run.summary().to_dict()
    return summary


def _values(curve: dict[str, Any], name: str) -> list[float]:
    return [entry["value"] for entry in curve[name]]


# --- the estimators, by hand -----------------------------------------------------------


def test_pass_hat_and_pass_at_by_hand_on_a_small_table() -> None:
    # c0 passes 4 of 4 trials, c1 2 of 4, c2 0 of 4 (n = 4).
    summary = _summary(
        CASES,
        _outputs({"c0": [True] * 4, "c1": [True, False, True, False], "c2": [False] * 4}),
    )
    trials = summary["trials"]
    assert (trials["n"], trials["cases"], trials["missing_trials"]) == (4, 3, 0)
    calls = trials["calls"]
    # pass^k = mean over cases of C(c, k) / C(4, k):
    #   k=1: (4/4 + 2/4 + 0) / 3 = 0.5
    #   k=2: (6/6 + 1/6 + 0) / 3 = 7/18 = 0.3889
    #   k=3: (4/4 + 0/4 + 0) / 3 = 1/3
    #   k=4: (1/1 + 0 + 0) / 3 = 1/3
    assert _values(calls, "pass_hat_k") == [0.5, 0.3889, 0.3333, 0.3333]
    # pass@k = mean over cases of 1 - C(4 - c, k) / C(4, k):
    #   k=1: (1 + (1 - 2/4) + (1 - 4/4)) / 3 = 0.5
    #   k=2: (1 + (1 - 1/6) + 0) / 3 = 11/18 = 0.6111
    #   k=3: (1 + (1 - 0/4) + 0) / 3 = 2/3
    #   k=4: 2/3
    assert _values(calls, "pass_at_k") == [0.5, 0.6111, 0.6667, 0.6667]
    # The interval of pass^2: per-case values 1, 1/6, 0, mean 7/18; sample variance
    # ((11/18)^2 + (4/18)^2 + (7/18)^2) / 2 = (121 + 16 + 49) / 324 / 2 = 186/648;
    # se = sqrt(186/648 / 3); 95%: mean +/- 1.959964 se, clipped to [0, 1].
    se = math.sqrt(186 / 648 / 3)
    expected = [0.0, round(7 / 18 + 1.959963984540054 * se, 4)]
    assert calls["pass_hat_k"][1]["ci95"] == expected
    assert expected[1] == 0.9951
    # k = 1 is the accuracy over all trials (each trial is an entry of the report).
    assert (summary["cases"], summary["passed"], summary["accuracy"]) == (12, 6, 0.5)
    assert calls["pass_hat_k"][0]["value"] == summary["accuracy"]
    assert trials["distribution"] == [
        {"trials": 4, "passed": 0, "state_passed": None, "cases": 1},
        {"trials": 4, "passed": 2, "state_passed": None, "cases": 1},
        {"trials": 4, "passed": 4, "state_passed": None, "cases": 1},
    ]


def test_the_estimators_match_their_definitions() -> None:
    assert pass_hat(2, 4, 2) == 1 / 6
    assert pass_at(2, 4, 2) == 1 - 1 / 6
    assert pass_hat(0, 3, 1) == 0.0
    assert pass_at(3, 3, 3) == 1.0
    for n in range(1, 7):
        for c in range(n + 1):
            assert pass_hat(c, n, 1) == pytest.approx(c / n)
            assert pass_at(c, n, 1) == pytest.approx(c / n)
            assert pass_hat(c, n, n) == (1.0 if c == n else 0.0)
            assert pass_at(c, n, n) == (1.0 if c else 0.0)


def test_one_trial_all_passing_and_none_passing() -> None:
    one = _summary(CASES, _outputs({"c0": [True], "c1": [False], "c2": [True]}))["trials"]
    assert one["n"] == 1
    assert _values(one["calls"], "pass_hat_k") == [0.6667]
    assert _values(one["calls"], "pass_at_k") == [0.6667]
    every = _summary(CASES, _outputs({f"c{i}": [True] * 3 for i in range(3)}))["trials"]
    assert _values(every["calls"], "pass_hat_k") == [1.0, 1.0, 1.0]
    assert every["calls"]["pass_hat_k"][2]["ci95"] == [1.0, 1.0]  # no spread: zero width
    none = _summary(CASES, _outputs({f"c{i}": [False] * 3 for i in range(3)}))["trials"]
    assert _values(none["calls"], "pass_hat_k") == [0.0, 0.0, 0.0]
    assert _values(none["calls"], "pass_at_k") == [0.0, 0.0, 0.0]
    single = _summary(CASES[:1], _outputs({"c0": [True, False]}))["trials"]
    assert single["calls"]["pass_hat_k"][0] == {"k": 1, "value": 0.5, "ci95": None}


def test_uneven_trials_count_the_absent_ones_as_failures() -> None:
    # c0: 3 trials, 2 pass; c1: 1 trial, passing; c2: no output line at all. n = 3.
    summary = _summary(CASES, _outputs({"c0": [True, False, True], "c1": [True]}))
    trials = summary["trials"]
    assert (trials["n"], trials["cases"], trials["missing_trials"]) == (3, 3, 2 + 3)
    # pass^1: (2/3 + 1/3 + 0) / 3 = 1/3; pass^2: (C(2,2)/C(3,2) + 0 + 0) / 3 = 1/9
    assert _values(trials["calls"], "pass_hat_k") == [0.3333, 0.1111, 0.0]
    # pass@2: (1 - C(1,2)/3 + 1 - C(2,2)/3 + 0) / 3 = (1 + 2/3) / 3 = 5/9
    assert _values(trials["calls"], "pass_at_k") == [0.3333, 0.5556, 0.6667]
    # The entries: 3 + 1 trials and the missing case's one entry.
    assert (summary["cases"], summary["passed"], summary["missing_outputs"]) == (5, 3, 1)


# --- the report, the join and input errors ----------------------------------------------


def test_each_trial_is_an_entry_in_case_order_then_trial_order(tmp_path: Path) -> None:
    cases = CASES[:2]
    outputs: list[dict[str, Any]] = [
        {"id": "c1", "trial": "b", "calls": [_refund("o-1", 10)]},
        {"id": "c1", "trial": 2, "calls": [_refund("o-1", 11)]},
        {"id": "c1", "trial": "a", "calls": [_refund("o-1", 10)]},
        {"id": "c0", "trial": 0, "calls": [_refund("o-0", 10)]},
    ]
    paths = _write(tmp_path, cases, outputs)
    report = tmp_path / "report.json"
    page = tmp_path / "report.html"
    result = _run("score", "--specs", str(example_dir() / "tools.yaml"), "--cases", paths[0],
                  "--outputs", paths[1], "--json", str(report), "--html", str(page))  # fmt: skip
    assert result.exit_code == 1, result.output  # absent trials are missing outputs
    assert page.read_text(encoding="utf-8").count('"trial":') == 4  # every trial is listed
    data = json.loads(report.read_text())
    entries = [(e["id"], e["trial"], e["passed"], e["trials"]) for e in data["cases"]]
    assert entries == [
        ("c0", 0, True, {"n": 1, "passed": 1}),
        ("c1", 2, False, {"n": 3, "passed": 2}),  # integers first, then strings
        ("c1", "a", True, {"n": 3, "passed": 2}),
        ("c1", "b", True, {"n": 3, "passed": 2}),
    ]
    assert list(data["cases"][0])[:4] == ["id", "trial", "trials", "passed"]
    assert "pass^k" in result.output
    assert "Trials (3 per case, 2 cases" in result.output


def test_a_run_without_trials_has_no_trial_keys(tmp_path: Path) -> None:
    outputs = [{"id": c["id"], "calls": [_refund(f"o-{i}", 10)]} for i, c in enumerate(CASES)]
    summary = _summary(CASES, outputs)
    assert "trials" not in summary
    run = score(SPECS, [parse_case(c, SPECS) for c in CASES], [parse_output(o) for o in outputs])
    assert all("trial" not in case_to_json(r) and "trials" not in case_to_json(r) for r in run)


DUPLICATE = "duplicate output for case 'c0'"
BAD_TRIAL = "must be an integer or a non-empty string"


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        ([{"trial": 1}, {"trial": 1}], f"2: trial: {DUPLICATE} trial 1"),
        ([{"trial": "x"}, {"trial": 0}, {"trial": "x"}], f"3: trial: {DUPLICATE} trial 'x'"),
        ([{}, {}], f"2: id: {DUPLICATE}"),
        ([{"trial": 0}, {}], f"2: trial: {DUPLICATE}: other lines"),
        ([{"trial": 1.5}], f"1: trial: {BAD_TRIAL}, got 1.5"),
        ([{"trial": True}], f"1: trial: {BAD_TRIAL}, got true"),
        ([{"trial": ""}], f"1: trial: {BAD_TRIAL}"),
    ],
)  # fmt: skip
@pytest.mark.parametrize("workers", ["1", "2"])
def test_repeated_or_bad_trials_are_one_line_naming_file_line_and_field(
    tmp_path: Path, lines: list[dict[str, Any]], expected: str, workers: str
) -> None:
    outputs = [{"id": "c0", **line, "calls": []} for line in lines]
    cases_path, outputs_path = _write(tmp_path, CASES[:1], outputs)
    result = _run("score", "--specs", str(example_dir() / "tools.yaml"), "--cases", cases_path,
                  "--outputs", outputs_path, "--workers", workers)  # fmt: skip
    assert result.exit_code == 2, result.output
    lines_out = result.stderr.strip().splitlines()
    assert len(lines_out) == 1, result.stderr
    assert lines_out[0].startswith(f"toolscore: error: {outputs_path}:{expected}"), lines_out[0]


def test_a_trial_after_its_case_was_scored_is_refused(tmp_path: Path) -> None:
    outputs = [
        {"id": "c0", "trial": 0, "calls": []},
        {"id": "c1", "trial": 0, "calls": []},
        {"id": "c0", "trial": 1, "calls": []},
    ]
    cases_path, outputs_path = _write(tmp_path, CASES[:2], outputs)
    result = _run("score", "--specs", str(example_dir() / "tools.yaml"), "--cases", cases_path,
                  "--outputs", outputs_path)  # fmt: skip
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"toolscore: error: {outputs_path}:3: id: duplicate output for case 'c0' (the trials "
        "of a case must come together, on consecutive lines)"
    )


def _trial_run(seed: int, cases: int = 40) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rng = random.Random(seed)
    case_lines = [{"id": f"c{i}", "plans": [[_refund(f"o-{i}", 10)]]} for i in range(cases)]
    outputs: list[dict[str, Any]] = []
    for i in range(cases):
        for trial in range(rng.randint(0, 4)):  # some cases have no output line at all
            amount = rng.choice([10, 10, 11])
            outputs.append({"id": f"c{i}", "trial": trial, "calls": [_refund(f"o-{i}", amount)]})
    return case_lines, outputs


@pytest.mark.parametrize("chunk", [1, 3, 7])
def test_workers_give_the_same_report_and_summary(tmp_path: Path, chunk: int) -> None:
    cases, outputs = _trial_run(chunk)
    paths = _write(tmp_path, cases, outputs)
    serial = score(
        SPECS,
        [parse_case(c, SPECS) for c in cases],
        [parse_output(o, paths[1], n) for n, o in enumerate(outputs, 1)],
    )
    expected_cases = [case_to_json(r) for r in serial]
    expected = serial.summary().to_dict()
    run = ParallelScoring(SPECS, *paths, 2, want_report=True, chunk_size=chunk)
    lines = [json.loads(line) for outcome in run for line in outcome.report_lines]
    assert lines == json.loads(json.dumps(expected_cases))
    assert run.summary().finish().to_dict() == expected
    assert "trials" in expected


def test_the_cli_with_two_workers_prints_the_same_report(tmp_path: Path) -> None:
    cases, outputs = _trial_run(11, cases=300)
    paths = _write(tmp_path, cases, outputs)
    reports = []
    for workers in ("1", "2"):
        target = tmp_path / f"w{workers}.json"
        result = _run("score", "--specs", str(example_dir() / "tools.yaml"), "--cases",
                      paths[0], "--outputs", paths[1], "--workers", workers, "--json",
                      str(target))  # fmt: skip
        assert result.exit_code == 1, result.output  # some trials are absent
        reports.append(target.read_bytes())
    assert reports[0] == reports[1]


def test_a_saved_run_with_trials_reopens_with_show(tmp_path: Path) -> None:
    cases, outputs = _trial_run(5, cases=12)
    paths = _write(tmp_path, cases, outputs)
    report, db = tmp_path / "report.json", tmp_path / "results.db"
    for _ in range(2):
        result = _run("score", "--specs", str(example_dir() / "tools.yaml"), "--cases",
                      paths[0], "--outputs", paths[1], "--json", str(report), "--db",
                      str(db))  # fmt: skip
        assert result.exit_code == 1, result.output  # some trials are absent
    shown = _run("show", "latest", "--db", str(db), "--json")
    assert shown.exit_code == 0, shown.output
    stored = json.loads(shown.stdout)
    written = json.loads(report.read_text())
    stored.pop("run")
    stored.pop("environment", None)
    assert stored["summary"] == written["summary"]
    assert stored["cases"] == written["cases"]
    assert "trials" in stored["summary"]
    printed = _run("show", "latest", "--db", str(db))
    assert printed.exit_code == 0, printed.output
    assert "pass^k" in printed.output
    # Commands that pair results one to one by case id say they do not take trials.
    for command in (["compare", "1", "2"], ["disagreements", "latest"]):
        result = _run(*command, "--db", str(db))
        assert result.exit_code == 2, result.output
        assert "has trials (several outputs per case)" in result.stderr


# --- outcomes over trials, and required outputs --------------------------------------------


def _ledger(folder: Path, **options: str) -> Any:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "store.sql").write_text("CREATE TABLE log (entry TEXT PRIMARY KEY);\n", "utf-8")
    (folder / "tools.py").write_text(
        "def refund(db, order_id, amount, unit='EUR', note=None):\n"
        "    db.execute('INSERT INTO log VALUES (?)', (order_id,))\n"
        "def get_order(db, order_id):\n"
        "    return {'order_id': order_id}\n",
        encoding="utf-8",
    )
    config = {"database": "store.sql", "tools": "tools.py", **options}
    return load_environment(config, folder, "tools.yaml")


def _chat(*turns: tuple[str, str]) -> list[dict[str, Any]]:
    return [{"role": role, "content": text} for role, text in turns]


def test_outcome_pass_hat_counts_state_and_outputs_per_trial(tmp_path: Path) -> None:
    env = _ledger(tmp_path)
    case = parse_case(
        {"id": "c0", "plans": [[_refund("o-0", 10)]], "goal_state": {"log": [{"entry": "o-0"}]}},
        SPECS,
    )
    made = [
        parse_output({"id": "c0", "trial": 0, "calls": [_refund("o-0", 11)]}),  # state right
        parse_output({"id": "c0", "trial": 1, "calls": [_refund("o-9", 10)]}),  # state wrong
        parse_output({"id": "c0", "trial": 2, "calls": [_refund("o-0", 10)]}),  # both right
    ]
    run = score(SPECS, [case], made, env=env)
    results = list(run)
    assert [r.state.passed for r in results] == [True, False, True]
    trials = run.summary().to_dict()["trials"]
    # calls: 1 of 3 pass; outcome: 2 of 3. pass^2 = C(1,2)/C(3,2) = 0 and C(2,2)/C(3,2) = 1/3
    assert _values(trials["calls"], "pass_hat_k") == [0.3333, 0.0, 0.0]
    assert _values(trials["state"], "pass_hat_k") == [0.6667, 0.3333, 0.0]
    assert trials["distribution"] == [{"trials": 3, "passed": 1, "state_passed": 2, "cases": 1}]


SAID_EARLIER = _chat(
    ("user", "Refund order o-0."),
    ("assistant", "Your refund of 1,093.34 EUR is on its way."),
    ("user", "Thanks!"),
    ("assistant", "You are welcome."),
)


@pytest.mark.parametrize(
    ("where", "normalise", "required", "passes"),
    [
        ("final", "default", ["1093.34"], False),  # said earlier, not in the final response
        ("any", "default", ["1093.34"], True),
        ("any", "tau-bench", ["1093.34"], True),
        ("any", "tau-bench", ["YOUR REFUND"], True),  # lower-cased
        ("any", "tau-bench", ["1,093.34"], False),  # commas go from messages, not from required
        ("final", "default", ["WELCOME"], True),
        ("any", "default", ["refund of 1093.34 eur is on its way. you are"], False),  # one message
    ],
)
def test_required_outputs_in_any_message_or_the_final_one(
    tmp_path: Path, where: str, normalise: str, required: list[str], passes: bool
) -> None:
    case = parse_case(
        {"id": "c0", "plans": [], "required_outputs": required,
         "required_outputs_in": where, "normalise": normalise},
        SPECS,
    )  # fmt: skip
    made = parse_output({"id": "c0", "messages": SAID_EARLIER})
    assert made.said == ("Your refund of 1,093.34 EUR is on its way.", "You are welcome.")
    result = next(iter(score(SPECS, [case], [made], env=_ledger(tmp_path))))
    assert result.state.outputs_passed is passes


def test_the_environment_sets_the_mode_and_a_case_overrides_it(tmp_path: Path) -> None:
    env = _ledger(tmp_path, required_outputs_in="any", normalise="tau-bench")
    assert env.describe()["required_outputs_in"] == "any"
    made = parse_output({"id": "c0", "messages": SAID_EARLIER})
    base = {"id": "c0", "plans": [], "required_outputs": ["1093.34"]}
    found = next(iter(score(SPECS, [parse_case(base, SPECS)], [made], env=env)))
    assert found.state.outputs_passed is True
    final = parse_case({**base, "required_outputs_in": "final"}, SPECS)
    assert next(iter(score(SPECS, [final], [made], env=env))).state.outputs_passed is False


def test_bad_modes_are_input_errors_naming_the_field(tmp_path: Path) -> None:
    with pytest.raises(
        Exception, match=r"environment\.normalise: must be one of default, tau-bench"
    ):
        _ledger(tmp_path / "a", normalise="loose")
    case = parse_case(
        {"id": "c0", "plans": [], "required_outputs": ["x"], "required_outputs_in": "all"},
        SPECS, "cases.jsonl", 4,
    )  # fmt: skip
    made = parse_output({"id": "c0", "response": "x"})
    with pytest.raises(CaseError) as caught:
        list(score(SPECS, [case], [made], ("cases.jsonl", "o"), env=_ledger(tmp_path / "b")))
    assert str(caught.value) == (
        "cases.jsonl:4: required_outputs_in: case 'c0': must be one of final, any, got 'all'"
    )


def test_the_two_normalisations_exactly() -> None:
    # default: NFKC, casefold, thousands commas only, whitespace runs folded
    assert missing_outputs(["1000", "strasse", "a b"], "1,000 STRAẞE a \n b") == ()
    assert missing_outputs(["1250"], "12,50") == ("1250",)
    # tau-bench: required lower-cased; the message lower-cased with every comma deleted
    tau = {"place": "final", "normalise": "tau-bench"}
    assert missing_outputs(["1250", "order"], "12,50 ORDER", **tau) == ()
    assert missing_outputs(["strasse"], "STRAẞE", **tau) == ("strasse",)  # lower, not casefold
    assert missing_outputs(["a b"], "a  b", **tau) == ("a b",)  # whitespace as written
    wide_x = "\uff58"  # FULLWIDTH LATIN SMALL LETTER X: NFKC makes it x
    assert missing_outputs([wide_x], "x") == ()
    assert missing_outputs([wide_x], "x", **tau) == (wide_x,)  # no NFKC


def test_any_with_a_calls_line_looks_in_its_response() -> None:
    made = parse_output({"id": "c0", "calls": [], "response": "done: 42"})
    assert made.said == ()
    assert missing_outputs(["42"], made.response, said=made.said, place="any") == ()


# --- fuzz --------------------------------------------------------------------------------

FUZZ_SPECS, FUZZ_CASE = fuzz_case()
SEEDS = [seed for group in output_groups().values() for seed in group]
TRIALS = st.one_of(
    st.integers(-3, 3), st.text(max_size=3), st.none(), st.booleans(), st.floats(), st.just([1])
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_outputs_with_trials_read_or_fail_with_one_line_and_score(
    data: st.DataObject,
) -> None:
    """Several mutated lines for one case, each with a drawn `trial`: the reader and the join
    give one-line input errors or results, one per line, each carrying its trial."""
    lines = []
    for _ in range(data.draw(st.integers(1, 4))):
        seed = {**data.draw(st.sampled_from(SEEDS)), "id": FUZZ_CASE.id}
        seed["trial"] = data.draw(TRIALS)
        raw = mutate.line(seed, lambda n: data.draw(st.integers(0, n - 1)), max_steps=2)
        lines.append(raw)
    try:
        made = [
            parse_output(parse_line(raw, "out.jsonl", n, OutputError), "out.jsonl", n)
            for n, raw in enumerate(lines, 1)
        ]
        run = score(FUZZ_SPECS, [FUZZ_CASE], made, ("cases.jsonl", "out.jsonl"))
        results = list(run)
        summary = run.summary().to_dict()
    except OutputError as error:
        text = str(error)
        assert text.startswith("out.jsonl:"), text
        assert "\n" not in text, text
        return
    joined = [t for t in made if t.case_id == FUZZ_CASE.id]
    assert len(results) == max(1, len(joined))
    if any(t.trial is not None for t in joined):  # a line whose id was mutated joins nothing
        assert summary["trials"]["cases"] == 1
    for result in results:
        orjson.dumps(case_to_json(result))


def test_outcome_trials_merge_across_workers(tmp_path: Path) -> None:
    env = _ledger(tmp_path / "env")
    cases, outputs = _trial_run(2, cases=9)
    for i, case in enumerate(cases):
        if i % 3:  # two cases in three are judged on state, one also on its response
            case["goal_state"] = {"log": [{"entry": f"o-{i}"}]}
        if i % 3 == 2:
            case["required_outputs"] = ["done"]
    for k, line in enumerate(outputs):
        line["response"] = "done" if k % 2 else "later"
    paths = _write(tmp_path, cases, outputs)
    serial = score(
        SPECS,
        [parse_case(c, SPECS) for c in cases],
        [parse_output(o, paths[1], n) for n, o in enumerate(outputs, 1)],
        paths,
        env=env,
    )
    list(serial)
    expected = serial.summary().to_dict()
    assert expected["trials"]["state"]["cases"] == 6
    run = ParallelScoring(SPECS, *paths, 2, chunk_size=2, env=env)
    list(run)
    assert run.summary().finish().to_dict() == expected
