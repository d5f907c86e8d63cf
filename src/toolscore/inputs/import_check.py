"""What an importer of another benchmark (BFCL, tau-bench, tau2-bench) checks before it
writes: that the converted spec and cases load as toolscore's own readers will load them; and
the two steps the importers share, reading a results file as JSON and laying out the files.

An importer that wrote a spec or a case toolscore then refuses would only move the error to
the first `score`; this check makes it the importer's, naming the source file.
"""

from __future__ import annotations

import json
from typing import Any

import orjson
import yaml

from toolscore.errors import CaseError, InputError
from toolscore.inputs.cases import parse_case
from toolscore.specs.loading import parse_specs
from toolscore.specs.parsing import safe_loader


def read_json_file(path: str) -> Any:
    """A whole JSON file's value; an input error naming the file (and the line, for bad JSON)
    when it cannot be read or is not JSON."""
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except OSError as error:
        raise InputError(path, f"cannot read: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise InputError(path, "not UTF-8 text") from None
    except json.JSONDecodeError as error:
        raise InputError(path, f"not JSON: {error.msg}", line=error.lineno) from None
    except ValueError as error:  # an integer of more digits than Python reads
        raise InputError(path, f"not readable: {error}") from None
    except RecursionError:
        raise InputError(path, "not readable: nested too deeply") from None


def import_files(
    header: str,
    spec: dict[str, Any],
    cases: list[dict[str, Any]],
    modules: dict[str, str],
    about: dict[str, Any],
) -> dict[str, str]:
    """An import's files by name: `tools.yaml` (after `header`), `cases.jsonl`, the
    generated `modules`, and `import.json` holding `about` (provenance, counts, notes)."""
    return {
        "tools.yaml": header + spec_yaml(spec),
        "cases.jsonl": "".join(
            json.dumps(case, ensure_ascii=False, allow_nan=False) + "\n" for case in cases
        ),
        **modules,
        "import.json": json.dumps(about, indent=2, ensure_ascii=False) + "\n",
    }


def spec_yaml(spec: dict[str, Any]) -> str:
    """The spec as an importer's `tools.yaml` holds it (after its comment header)."""
    return yaml.safe_dump(spec, sort_keys=False, allow_unicode=True, width=100)


def check_loads(
    spec: dict[str, Any], cases: list[dict[str, Any]], source: str, item: str = "case"
) -> None:
    """Load the result as toolscore's own readers will (the spec from its YAML text, the
    cases through orjson): what is written must load, else an input error on `source`
    naming the spec or the `item` (a case, a task) that does not."""
    try:
        loaded = yaml.load(spec_yaml(spec), Loader=safe_loader())  # libyaml's, where present
    except (yaml.YAMLError, RecursionError) as error:
        raise InputError(source, f"converted spec does not load: {error}") from None
    specs, problems = parse_specs(loaded, f"{source} (converted)")
    if problems or specs is None:
        raise InputError(
            source, f"converted spec does not load: {problems[0] if problems else '?'}"
        )
    for case in cases:
        try:
            parse_case(orjson.loads(orjson.dumps(case)), specs, f"{source} (converted)")
        except (CaseError, orjson.JSONEncodeError) as error:
            raise InputError(source, f"{item} {case['id']} does not convert: {error}") from None
