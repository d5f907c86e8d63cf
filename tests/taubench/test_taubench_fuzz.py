"""Fuzz the tau-bench results reader with mutated copies of the fixture's results file
(tests/mutate.py mutates): only a one-line input error naming the file may come out, and
every line it writes reads as an outputs line (or fails as one, in one line)."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mutate
from toolscore.errors import InputError, OutputError
from toolscore.inputs.jsonl import parse_line
from toolscore.inputs.outputs import parse_output
from toolscore.taubench.results import convert_results

SEED = json.loads((Path(__file__).parents[1] / "taubench_fixture" / "results.json").read_text())


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_mutated_results_convert_or_fail_with_one_line(data: st.DataObject, tmp_path: Path) -> None:
    raw = mutate.line(SEED, lambda n: data.draw(st.integers(0, n - 1)))
    path = tmp_path / "results.json"
    path.write_bytes(raw)
    try:
        lines = list(convert_results(str(path)))
    except InputError as error:  # any other error fails the test
        text = str(error)
        assert text.startswith(str(path)), text
        assert "\n" not in text, text
        assert "\r" not in text, text
        return
    for number, line in enumerate(lines, 1):
        encoded = json.dumps(line).encode()
        problem = ""
        try:
            parse_output(parse_line(encoded, "o.jsonl", number, OutputError), "o.jsonl", number)
        except OutputError as error:  # a line may fail to read, in one line; nothing else
            problem = str(error)
        assert "\n" not in problem, problem
