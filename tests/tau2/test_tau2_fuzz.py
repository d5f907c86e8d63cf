"""Fuzz the tau2-bench readers with mutated copies of the fixture's files (tests/mutate.py
mutates): the results converter and the task reader give only a one-line input error naming
the file, every line the converter writes reads as an outputs line (or fails as one, in one
line), and the converter's lines do not depend on the order of the simulations."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mutate
from toolscore.errors import InputError, OutputError
from toolscore.inputs.jsonl import parse_line
from toolscore.inputs.outputs import parse_output
from toolscore.tau2 import import_tau2
from toolscore.tau2.results import convert_results

FIXTURE = Path(__file__).parents[1] / "tau2_fixture"
RESULTS = json.loads((FIXTURE / "results.json").read_text())
TASKS_PATH = Path("data") / "tau2" / "domains" / "retail" / "tasks.json"
TASKS = json.loads((FIXTURE / TASKS_PATH).read_text())
SETTINGS = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


def _one_line(error: InputError, path: Path) -> None:
    text = str(error)
    assert text.startswith(str(path)), text
    assert "\n" not in text, text
    assert "\r" not in text, text


@SETTINGS
@given(data=st.data())
def test_mutated_results_convert_or_fail_with_one_line(data: st.DataObject, tmp_path: Path) -> None:
    raw = mutate.line(RESULTS, lambda n: data.draw(st.integers(0, n - 1)))
    path = tmp_path / "results.json"
    path.write_bytes(raw)
    try:
        lines = list(convert_results(str(path)))
    except InputError as error:  # any other error fails the test
        _one_line(error, path)
        return
    for number, line in enumerate(lines, 1):
        problem = ""
        try:
            encoded = json.dumps(line).encode()
            parse_output(parse_line(encoded, "o.jsonl", number, OutputError), "o.jsonl", number)
        except OutputError as error:  # a line may fail to read, in one line; nothing else
            problem = str(error)
        assert "\n" not in problem, problem


@SETTINGS
@given(order=st.permutations(range(len(RESULTS["simulations"]))))
def test_the_lines_do_not_depend_on_the_order_of_simulations(
    order: list[int], tmp_path: Path
) -> None:
    shuffled = {**RESULTS, "simulations": [RESULTS["simulations"][i] for i in order]}
    path = tmp_path / "results.json"
    path.write_text(json.dumps(shuffled))
    assert list(convert_results(str(path))) == list(convert_results(str(FIXTURE / "results.json")))


@SETTINGS
@given(data=st.data())
def test_mutated_tasks_import_or_fail_with_one_line(data: st.DataObject, tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    if not checkout.exists():
        shutil.copytree(FIXTURE, checkout)
    path = checkout / TASKS_PATH
    path.write_bytes(mutate.line(TASKS, lambda n: data.draw(st.integers(0, n - 1))))
    try:
        import_tau2(str(checkout), "retail")
    except InputError as error:  # any other error fails the test
        text = str(error)
        assert "\n" not in text, text
        assert "\r" not in text, text
        assert text.startswith((str(path), str(checkout))), text
