"""The check every benchmark importer makes before writing: the converted spec and cases load.

BFCL's and tau-bench's importers share it (`toolscore.inputs.import_check`), so a spec or case
toolscore would refuse is refused at import, naming the source file, in the same words.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolscore.bfcl import importer as bfcl_importer
from toolscore.bfcl import multiturn as bfcl_multiturn
from toolscore.errors import InputError
from toolscore.inputs.import_check import check_loads, import_files, read_json_file, spec_yaml
from toolscore.tau2 import importer as tau2_importer
from toolscore.tau2 import results as tau2_results
from toolscore.taubench import importer as taubench_importer
from toolscore.taubench import results as taubench_results

SPEC: dict[str, Any] = {"version": "v1", "tools": {"refund": {"args": {"order_id": "exact"}}}}
CASE: dict[str, Any] = {"id": "c0", "plans": [[{"name": "refund", "args": {"order_id": "o0"}}]]}


def test_a_spec_and_cases_that_load_pass() -> None:
    check_loads(SPEC, [CASE], "data.json")


def test_a_spec_that_does_not_load_names_the_source() -> None:
    bad = {"tools": {"refund": {"args": {"order_id": "no-such-kind"}}}}
    with pytest.raises(InputError, match=r"^data\.json: converted spec does not load: "):
        check_loads(bad, [CASE], "data.json")


def test_a_spec_too_deep_for_yaml_is_an_input_error() -> None:
    deep: dict[str, Any] = {}
    node = deep
    for _ in range(5_000):
        node["a"] = {}
        node = node["a"]
    with pytest.raises(InputError, match="converted spec does not load"):
        check_loads({**SPEC, "deep": deep}, [], "data.json")


@pytest.mark.parametrize("item", ["case", "task"])
def test_a_case_that_does_not_load_is_named_as_the_importer_calls_it(item: str) -> None:
    bad = {"id": "c1", "plans": "not a list"}
    with pytest.raises(InputError, match=rf"^tasks\.py: {item} c1 does not convert: "):
        check_loads(SPEC, [CASE, bad], "tasks.py", item=item)


def test_a_case_json_cannot_hold_is_an_input_error() -> None:
    bad = {**CASE, "id": "c2", "meta": {1, 2}}
    with pytest.raises(InputError, match="case c2 does not convert"):
        check_loads(SPEC, [bad], "data.json")


def test_the_importers_share_the_check_and_the_spec_text() -> None:
    assert vars(bfcl_importer)["check_loads"] is check_loads
    assert vars(bfcl_multiturn)["check_loads"] is check_loads
    assert vars(taubench_importer)["check_loads"] is check_loads
    assert vars(tau2_importer)["check_loads"] is check_loads
    for importer in (bfcl_importer, taubench_importer, tau2_importer):
        assert vars(importer)["import_files"] is import_files
    for reader in (taubench_results, tau2_results):
        assert vars(reader)["read_json_file"] is read_json_file


def test_an_import_s_files_hold_the_spec_text_the_cases_and_what_it_says_of_itself() -> None:
    files = import_files("# header\n", SPEC, [CASE], {"m.py": "x = 1\n"}, {"counts": {}})
    assert files["tools.yaml"] == "# header\n" + spec_yaml(SPEC)
    assert files["cases.jsonl"].splitlines() == [json.dumps(CASE, ensure_ascii=False)]
    assert files["m.py"] == "x = 1\n"
    assert json.loads(files["import.json"]) == {"counts": {}}
