"""Labels to and from files, for teams that label elsewhere: JSON Lines or CSV.

Both forms carry the same fields: `case_id`, `labeller`, `label` (correct, incorrect or
unsure), `note` and `updated`; export adds the batch id and each case's position. Import needs
`case_id` and `label`; a missing labeller is taken from `--labeller`. An import is stored
whole or not at all, and a bad row is one error naming the file, the line and the field.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from toolscore.calibration.batches import Batches, Label
from toolscore.errors import InputError
from toolscore.jsonl import read_jsonl

FIELDS = ("batch", "position", "case_id", "labeller", "label", "note", "updated")
FORMATS = ("jsonl", "csv")


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
    writer = csv.DictWriter(text, fieldnames=FIELDS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
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
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(source, f"cannot read: {error}") from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    if reader.fieldnames is None or not {"case_id", "label"} <= set(reader.fieldnames):
        raise InputError(source, "needs a header line with at least case_id and label", line=1)
    try:
        for row in reader:
            if None in row:
                raise InputError(source, "has more values than the header", line=reader.line_num)
            yield reader.line_num, row
    except csv.Error as error:
        raise InputError(source, f"not valid CSV: {error}", line=reader.line_num) from None
