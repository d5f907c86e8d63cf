"""Python functions as tool definitions (`spec init --python`): type hints to JSON Schema,
string annotations read with `ast` and never evaluated, defaults, docstrings, and every
failure one line."""

from __future__ import annotations

import datetime
import enum
import typing
from pathlib import Path
from typing import Annotated, Any, Literal, Optional

import pytest

from toolscore.drafting.python_tools import (
    annotation_schema,
    function_definition,
    python_definitions,
    resolve_annotation,
)
from toolscore.errors import SpecError

HERE = Path(__file__).parent
SAMPLE = HERE / "definitions" / "python_sample.py"


class Colour(enum.Enum):
    """An enum whose members' values are the enum's values."""

    RED = "red"
    BLUE = 2


@pytest.mark.parametrize(
    ("hint", "schema"),
    [
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (bool, {"type": "boolean"}),
        (str, {"type": "string"}),
        (list[int], {"type": "array", "items": {"type": "integer"}}),
        (typing.List[str], {"type": "array", "items": {"type": "string"}}),  # noqa: UP006
        (tuple[int, ...], {"type": "array", "items": {"type": "integer"}}),
        (tuple[int, str], {"type": "array"}),
        (dict[str, int], {"type": "object"}),
        (Literal["a", 1, True], {"enum": ["a", 1, True]}),
        (Colour, {"enum": ["red", 2]}),
        (Optional[int], {"type": "integer"}),  # noqa: UP045
        (int | None, {"type": "integer"}),
        (int | str, {"anyOf": [{"type": "integer"}, {"type": "string"}]}),
        (datetime.date, {"type": "string", "format": "date"}),
        (datetime.datetime, {"type": "string", "format": "date-time"}),
        (Annotated[str, "The city."], {"type": "string", "description": "The city."}),
        (Any, {}),
        (object, {}),
    ],
)
def test_type_hints_become_json_schema(hint: Any, schema: dict[str, Any]) -> None:
    assert annotation_schema(hint) == schema


def test_string_annotations_are_read_without_being_evaluated() -> None:
    namespace = {"list": list, "int": int, "typing": typing, "Colour": Colour}
    assert resolve_annotation("list[int]", namespace) == list[int]
    assert resolve_annotation("typing.Optional[Colour]", namespace) == Optional[Colour]  # noqa: UP045
    assert annotation_schema(resolve_annotation("int | None", namespace)) == {"type": "integer"}
    called: list[str] = []
    namespace["spy"] = lambda *a: called.append("called")
    for text in ("spy()", "spy()[int]", "Colour[int]", "Missing", "list[Missing]", "1 +", "3"):
        assert annotation_schema(resolve_annotation(text, namespace)) == {}
    assert called == []
    described = resolve_annotation('typing.Annotated[int, spy(description="n")]', namespace)
    assert annotation_schema(described) == {"type": "integer", "description": "n"}
    assert called == []


def test_the_sample_module_reads_with_docstrings_defaults_and_models() -> None:
    book, search = python_definitions(f"{SAMPLE}:book,search")
    assert book.name == "book"
    assert book.description == "Book a flight for the passengers."
    properties = book.schema["properties"]
    assert list(properties) == [
        "user_id",
        "cabin",
        "passengers",
        "when",
        "seats",
        "insurance",
        "price",
        "tags",
        "note",
        "city",
    ]  # fmt: skip - `db` (a state tool's connection) and `ctx` are not arguments
    assert properties["user_id"]["description"] == "The user who books."
    assert properties["city"] == {
        "type": "string",
        "description": "The city the user flies from, as they wrote it.",
        "default": None,
    }
    assert properties["note"] == {
        "type": "string",
        "description": "A note for the crew.",
        "default": "",
    }
    passenger = properties["passengers"]["items"]
    assert passenger["properties"]["dob"]["format"] == "date"
    assert passenger["properties"]["dob"]["description"] == "Date of birth."
    assert properties["tags"]["default"] == []
    assert book.schema["required"] == ["user_id", "cabin", "passengers", "when"]
    assert search.schema["properties"]["limit"] == {
        "type": "integer",
        "description": "At most this many.",
        "default": 10,
    }


def test_a_default_that_is_no_json_value_is_left_out() -> None:
    def f(when: datetime.date = datetime.date(2026, 1, 1), n: float = float("nan")) -> None:
        """F."""

    definition = function_definition(f, "f", "m:f")
    assert "default" not in definition.schema["properties"]["when"]
    assert "default" not in definition.schema["properties"]["n"]
    assert "required" not in definition.schema


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ("no-colon", "must be MODULE:FUNC[,FUNC...], got 'no-colon'"),
        (f"{SAMPLE}:nothing", "has no function 'nothing'"),
        ("not_a_module_anywhere:f", "cannot import 'not_a_module_anywhere': ModuleNotFoundError"),
        ("nowhere/x.py:f", "no such file"),
    ],
)
def test_every_failure_is_one_line(reference: str, message: str) -> None:
    with pytest.raises(SpecError) as raised:
        python_definitions(reference)
    text = str(raised.value)
    assert message in text
    assert "\n" not in text
    assert text.startswith("--python: ")


def test_a_module_that_fails_on_import_is_one_line(tmp_path: Path) -> None:
    module = tmp_path / "broken.py"
    module.write_text("raise RuntimeError('no database')\n")
    with pytest.raises(SpecError, match=r"cannot import .*RuntimeError: no database"):
        python_definitions(f"{module}:f")
    exits = tmp_path / "exits.py"
    exits.write_text("import sys\nsys.exit(3)\n")
    with pytest.raises(SpecError, match=r"sys\.exit\(3\) on import"):
        python_definitions(f"{exits}:f")
