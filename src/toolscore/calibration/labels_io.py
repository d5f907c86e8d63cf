"""Labels to and from files, for teams that label elsewhere: JSON Lines or CSV.

Both forms carry the same fields: `case_id`, `labeller`, `label` (correct, incorrect or
unsure), `note` and `updated`; export adds the batch id and each case's position. Import needs
`case_id` and `label`; a missing labeller is taken from `--labeller`. An import is stored
whole or not at all, and a bad row is one error naming the file, the line and the field.

CSV cells are opened by spreadsheets, which run a cell starting with `=`, `+`, `-` or `@`
(or a tab or carriage return) as a formula; a note or a case id can be anything. As OWASP
advises for CSV injection, export prefixes such a cell with a single quote (`'=1+1`), which
spreadsheets show as text, and import takes that one quote off again, so a file exported and
imported gives back every value exactly.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from toolscore.calibration.batches import Batches, Label
from toolscore.errors import InputError
from toolscore.inputs.jsonl import read_jsonl
from toolscore.inputs.paths import close_input, open_input

FIELDS = ("batch", "position", "case_id", "labeller", "label", "note", "updated")
FORMATS = ("jsonl", "csv")

_FORMULA = re.compile("'*[=+\\-@\t\r\n\uff1d\uff0b\uff0d\uff20]")
"""A cell a spreadsheet would run as a formula (ASCII or full-width `=+-@`, or a tab, CR or
LF first), possibly behind quotes already: export adds one quote, import removes one."""


def neutralised(value: Any) -> Any:
    """A CSV cell that no spreadsheet runs as a formula: text matching `_FORMULA` gets a
    leading single quote; anything else is returned as it is."""
    return "'" + value if isinstance(value, str) and _FORMULA.match(value) else value


def restored(cell: str) -> str:
    """A CSV cell as it was before `neutralised`: one leading quote removed where export
    added it."""
    return cell[1:] if cell.startswith("'") and _FORMULA.match(cell, 1) else cell


def file_format(path: str | Path, given: str | None = None) -> str:
    """The format of a labels file: `given`, else from its extension (.csv is CSV)."""
    if given is not None:
        return given
    return "csv" if str(path).lower().endswith(".csv") else "jsonl"


def export_rows(
    batches: Batches, batch_id: int, labeller: str | None = None
) -> list[dict[str, Any]]:
    """The batch's labels as rows of FIELDS, in batch order."""
    positions = {case_id: n for n, case_id in enumerate(batches.case_ids(batch_id), 1)}
    return [
        {"batch": batch_id, "position": positions[label.case_id], **label.to_json()}
        for label in batches.labels(batch_id, labeller)
    ]


def render(rows: list[dict[str, Any]], fmt: str) -> bytes:
    """Rows as JSON Lines or as CSV with a header line."""
    if fmt == "jsonl":
        return b"".join(orjson.dumps(row) + b"\n" for row in rows)
    text = io.StringIO()
    # RFC 4180 line ends: the writer then quotes a cell holding a lone CR, as readers need.
    writer = csv.DictWriter(text, fieldnames=FIELDS, lineterminator="\r\n")
    writer.writeheader()
    writer.writerows({key: neutralised(value) for key, value in row.items()} for row in rows)
    return text.getvalue().encode()


def read_labels(path: str | Path, fmt: str, labeller: str | None) -> tuple[list[Label], list[int]]:
    """The labels in a file and the line of each (InputError naming file, line and field)."""
    rows = _csv_rows(path) if fmt == "csv" else _jsonl_rows(path)
    labels, lines = [], []
    source = str(path)
    for number, row in rows:
        labels.append(_label(row, source, number, labeller))
        lines.append(number)
    if not labels:
        raise InputError(source, "has no labels")
    return labels, lines


def import_labels(
    batches: Batches, batch_id: int, path: str | Path, fmt: str, labeller: str | None
) -> int:
    """Store the labels of a file in the batch (all or none); return how many."""
    labels, lines = read_labels(path, fmt, labeller)
    return batches.set_labels(batch_id, labels, str(path), lines)


def _label(row: dict[str, Any], source: str, line: int, labeller: str | None) -> Label:
    values = {}
    for key in ("case_id", "label", "labeller", "note", "updated"):
        value = row.get(key)
        if value is None or value == "":
            if key in ("case_id", "label"):
                raise InputError(source, "is required", line=line, field=key)
            value = labeller if key == "labeller" else ""
            if value is None:
                raise InputError(
                    source, "is required (or give --labeller NAME)", line=line, field=key
                )
        if not isinstance(value, str):
            raise InputError(source, "must be a string", line=line, field=key)
        values[key] = value
    return Label(**values)


def _jsonl_rows(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, _, row in read_jsonl(path):
        yield number, row


def _csv_rows(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    source = str(path)
    handle = open_input(path)
    try:
        text = handle.read().decode("utf-8-sig")  # bytes: a CR in a cell stays a CR
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(source, f"cannot read: {error}") from None
    finally:
        close_input(handle)
    reader = csv.DictReader(io.StringIO(text, newline=""))
    if reader.fieldnames is None or not {"case_id", "label"} <= set(reader.fieldnames):
        raise InputError(source, "needs a header line with at least case_id and label", line=1)
    try:
        for row in reader:
            if None in row:
                raise InputError(source, "has more values than the header", line=reader.line_num)
            yield reader.line_num, {k: restored(v) if v else v for k, v in row.items()}
    except csv.Error as error:
        raise InputError(source, f"not valid CSV: {error}", line=reader.line_num) from None
