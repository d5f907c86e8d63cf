"""Fuzz every reader with mutated real files: only the project's own one-line input errors
may come out, and whatever an outputs line holds is scored without raising.

The seeds are the real fixtures: every provider transcript under tests/formats/ (SDK-written
ones included), the malformed and unread lines, the golden cases' `calls` lines, cases and
specs, and the packaged examples. tests/mutate.py does the mutating; bench/fuzz.py runs the
same checks a million times.
"""

from __future__ import annotations

import random

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mutate
from fuzz_seeds import case_seeds, fuzz_case, output_groups, response_seeds, spec_seeds
from toolscore.core.model import Case, Trajectory
from toolscore.errors import CaseError, InputError, OutputError
from toolscore.inputs.cases import parse_case
from toolscore.inputs.formats import FORMATS
from toolscore.inputs.jsonl import parse_line
from toolscore.inputs.outputs import parse_output
from toolscore.report.json_report import case_to_json
from toolscore.scoring.stream import score
from toolscore.specs.loading import SpecSet, parse_specs

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

GROUPS = output_groups()
OUTPUTS = [seed for group in GROUPS.values() for seed in group]
CASES = case_seeds()
SPECS = spec_seeds()
FUZZ_SPECS, FUZZ_CASE = fuzz_case()
RESPONSES = response_seeds()
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=12,
)
"""Any JSON value (NaN and infinities too: a harness's `json.dumps` writes them)."""


def one_line(error: InputError, source: str) -> None:
    """An input error is one line naming its file."""
    text = str(error)
    assert text.startswith(source), text
    assert "\n" not in text, text
    assert "\r" not in text, text


def read_output(raw: bytes) -> Trajectory | None:
    """The trajectory of a raw outputs line, or None when it is an input error (one line)."""
    try:
        return parse_output(parse_line(raw, "out.jsonl", 3, OutputError), "out.jsonl", 3)
    except OutputError as error:  # any other error fails the test
        one_line(error, "out.jsonl:3")
        return None


def score_all(specs: SpecSet, case: Case, trajectory: Trajectory) -> None:
    """Score through the public streaming API and write the report JSON: nothing may raise."""
    run = score(specs, [case], [trajectory])
    results = list(run)
    assert len(results) == 1
    result = results[0]
    assert result.passed is (result.passed and not result.mismatches)
    if trajectory.unread:
        assert not result.passed
    orjson.dumps(case_to_json(result))
    orjson.dumps(run.summary().to_dict())


def output_for(case: Case, data: st.DataObject) -> Trajectory | None:
    """An unmutated outputs line for `case`, drawn from the seeds."""
    return read_output(orjson.dumps({**data.draw(st.sampled_from(OUTPUTS)), "id": case.id}))


@FUZZ
@given(data=st.data())
def test_mutated_outputs_read_or_fail_with_one_line_and_score(data: st.DataObject) -> None:
    group = data.draw(st.sampled_from(sorted(GROUPS)))  # each kind of line, however many
    seed = data.draw(st.sampled_from(GROUPS[group]))
    raw = mutate.line(seed, lambda n: data.draw(st.integers(0, n - 1)))
    trajectory = read_output(raw)
    if trajectory is not None:
        score_all(FUZZ_SPECS, FUZZ_CASE, trajectory)


@FUZZ
@given(data=st.data())
def test_mutated_cases_read_or_fail_with_one_line_and_score(data: st.DataObject) -> None:
    seed = data.draw(st.sampled_from(CASES))
    raw = mutate.line(seed, lambda n: data.draw(st.integers(0, n - 1)))
    try:
        case = parse_case(
            parse_line(raw, "cases.jsonl", 5, CaseError), FUZZ_SPECS, "cases.jsonl", 5
        )
    except CaseError as error:  # any other error fails the test
        one_line(error, "cases.jsonl:5")
        return
    trajectory = output_for(case, data)
    if trajectory is not None:
        score_all(FUZZ_SPECS, case, trajectory)


@FUZZ
@given(data=st.data())
def test_mutated_specs_load_or_fail_with_one_line_and_score(data: st.DataObject) -> None:
    seed = data.draw(st.sampled_from(SPECS))
    raw = mutate.line(seed, lambda n: data.draw(st.integers(0, n - 1)))
    try:
        specs, problems = parse_specs(orjson.loads(raw), "tools.json")
    except orjson.JSONDecodeError:
        return  # a spec file that is not JSON: load_specs says so in one line (tests/test_specs)
    for problem in problems:
        one_line(problem, "tools.json")
    if specs is None:
        assert problems
        return
    for case_data in CASES[:40]:
        try:
            case = parse_case(case_data, specs, "cases.jsonl", 1)
        except CaseError as error:
            one_line(error, "cases.jsonl:1")
            continue
        trajectory = read_output(
            orjson.dumps({**data.draw(st.sampled_from(OUTPUTS)), "id": case.id})
        )
        if trajectory is not None:
            score_all(specs, case, trajectory)


@FUZZ
@given(data=st.data())
def test_mutated_response_objects_and_streams_read_or_fail_with_one_line_and_score(
    data: st.DataObject,
) -> None:
    seed = data.draw(st.sampled_from(RESPONSES))
    raw = mutate.line(seed, lambda n: data.draw(st.integers(0, n - 1)))
    trajectory = read_output(raw)
    if trajectory is not None:
        score_all(FUZZ_SPECS, FUZZ_CASE, trajectory)


@FUZZ
@given(data=st.data(), value=JSON, choice=st.none() | st.integers(0, 2))
def test_any_json_anywhere_in_a_response_or_a_stream_reads_or_fails_with_one_line(
    data: st.DataObject, value: object, choice: int | None
) -> None:
    """Whatever value stands at whatever place of a response object or a stream (the
    line's own keys included), reading gives a trajectory or one OutputError line."""
    seed = data.draw(st.sampled_from(RESPONSES))
    path = data.draw(st.sampled_from(mutate.paths(seed)[1:]))
    line = mutate._replace(seed, path, lambda _: value)
    try:
        raw = orjson.dumps(line)
    except orjson.JSONEncodeError:  # NaN, or an integer beyond 64 bits: as a harness writes
        raw = mutate.dumps(line).encode("utf-8", "surrogatepass")
    try:
        trajectory = parse_output(
            parse_line(raw, "out.jsonl", 3, OutputError), "out.jsonl", 3, choice
        )
    except OutputError as error:
        one_line(error, "out.jsonl:3")
        return
    score_all(FUZZ_SPECS, FUZZ_CASE, trajectory)


def test_the_seeds_cover_every_format_and_each_kind_of_file() -> None:
    formats = set()
    for seed in OUTPUTS:
        trajectory = read_output(orjson.dumps(seed))
        if trajectory is not None and trajectory.format is not None:
            formats.add(trajectory.format)
    assert formats == set(FORMATS)  # every transcript format has a fixture under tests/formats
    assert set(GROUPS) == formats | {"calls", "input error"}
    assert len(CASES) > 50
    assert any(isinstance(spec, list) for spec in SPECS)  # an OpenAI tool list among them


def test_mutations_change_what_the_line_says() -> None:
    rng = random.Random(11)
    changed = 0
    for index in range(200):
        original = OUTPUTS[index % len(OUTPUTS)]
        try:
            changed += orjson.loads(mutate.line(original, rng.randrange)) != original
        except orjson.JSONDecodeError:
            changed += 1
    assert changed >= 190
