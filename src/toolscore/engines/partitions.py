"""Join a cases file and an outputs file by id into partitions of joined records, once, so
that a distributed engine only has to read and score them (it never joins).

A directory written by `write_joined` holds the parts (`part-00000.jsonl`, or `.parquet`),
each `rows_per_part` records (`batch.RECORD_KEYS`) in cases-file order, and `join.json`: the
files joined (their names stand in every error about their lines), the parts in order, and
the counts `score` reports about joining (cases, missing outputs, unmatched outputs and the
first ids of those). The
join is `rawjoin.joined_chunks`, the local run's own, so it accepts and refuses the same
inputs with the same errors; lines are checked only as far as joining needs (their ids),
the rest when they are scored.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any, NamedTuple

import orjson

from toolscore.engines.batch import RECORD_KEYS
from toolscore.errors import CaseError, InputError, OutputError
from toolscore.inputs.join import CHUNK_BYTES, joined_chunks, pairs
from toolscore.inputs.missing import IDS_KEPT

MANIFEST = "join.json"
FORMATS = ("jsonl", "parquet")
ROWS_PER_PART = 100_000
"""Records per part by default: parts of some tens of megabytes."""
_JOIN_CHUNK = 2000
"""Cases joined at a time (as `parallel.CHUNK`), and at most `join.CHUNK_BYTES` of lines."""


class Joined(NamedTuple):
    """A directory of joined records, as `join.json` describes it."""

    directory: Path
    cases: str
    outputs: str
    format: str
    parts: list[str]
    """The parts' file names, in cases-file order."""
    cases_count: int
    missing_outputs: int
    unmatched_outputs: int
    unmatched_output_ids: Sequence[str] = ()
    """The first ids of those (`missing.IDS_KEPT`), in the outputs file's order (absent from
    the manifest of a join written before it was kept)."""

    def paths(self) -> list[str]:
        """The parts' paths, in cases-file order."""
        return [str(self.directory / part) for part in self.parts]

    def to_json(self) -> dict[str, Any]:
        """What `join.json` holds (the directory is where it lies)."""
        data = self._asdict()
        del data["directory"]
        return data


def _record(
    seq: int, case: tuple[int, bytes, str], outputs: list[tuple[int, bytes]]
) -> dict[str, Any]:
    number, raw, case_id = case
    encoded: list[str] = []
    return {
        "seq": seq,
        "id": case_id,
        "case_line": number,
        "case": _text(raw, "case", encoded),
        "output_lines": [line for line, _ in outputs],
        "outputs": [_text(text, f"outputs.{n}", encoded) for n, (_, text) in enumerate(outputs)],
        "encoded": encoded,
    }


def _text(raw: bytes, name: str, encoded: list[str]) -> str:
    """A line's text: as it is when it is UTF-8 (nearly always), else in base64, its name
    added to `encoded` (an agent's line may hold encoded lone surrogates, which are read)."""
    try:
        return raw.decode()
    except UnicodeDecodeError:
        encoded.append(name)
        return base64.b64encode(raw).decode()


def joined_records(
    cases_path: str, outputs_path: str, on_unmatched: Any = None, budget: int = CHUNK_BYTES
) -> Iterator[dict[str, Any]]:
    """Every case joined to its output lines, in cases-file order, as a joined record (read
    in chunks of at most `budget` bytes of lines); `on_unmatched` is called at the end with
    the ids of outputs matching no case."""
    seq = 0
    errors = (CaseError, OutputError)
    for chunk in joined_chunks(
        cases_path, outputs_path, _JOIN_CHUNK, errors, on_unmatched, budget=budget
    ):
        for case, outputs in pairs(chunk):
            lines = [(output.line, output.raw) for output in outputs]
            yield _record(seq, (case.line, case.raw, case.id), lines)
            seq += 1


def write_joined(
    cases_path: str,
    outputs_path: str,
    directory: str | Path,
    rows_per_part: int = ROWS_PER_PART,
    fmt: str = "jsonl",
    names: tuple[str, str] | None = None,
) -> Joined:
    """Join the two files into parts in `directory` (made if need be; it must hold no
    earlier join) and write its `join.json`, which names the files as `names` says (the
    files the user gave, when the two read are their JSON Lines conversions)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}")
    out = Path(directory)
    if out.exists() and not out.is_dir():
        raise InputError(str(out), "is not a directory")
    if (out / MANIFEST).exists():
        raise InputError(str(out), "already holds a join: choose an empty directory")
    out.mkdir(parents=True, exist_ok=True)
    unmatched: list[str] = []
    parts: list[str] = []
    counts = [0, 0]  # cases, missing outputs
    writer = _PartWriter(out, fmt, rows_per_part, parts)
    try:
        for record in joined_records(cases_path, outputs_path, unmatched.extend):
            counts[0] += 1
            counts[1] += not record["outputs"]
            writer.add(record)
        writer.close()
    except BaseException:
        writer.remove()
        raise
    cases_name, outputs_name = names or (cases_path, outputs_path)
    joined = Joined(
        out, cases_name, outputs_name, fmt, parts, counts[0], counts[1], len(unmatched),
        unmatched[:IDS_KEPT],
    )  # fmt: skip
    _write_manifest(out / MANIFEST, joined)
    return joined


def _write_manifest(path: Path, joined: Joined) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_bytes(orjson.dumps(joined.to_json(), option=orjson.OPT_INDENT_2) + b"\n")
    os.replace(temporary, path)


def read_joined(directory: str | Path) -> Joined:
    """The join a directory holds; an input error naming it when it holds none."""
    out = Path(directory)
    manifest = out / MANIFEST
    try:
        data = orjson.loads(manifest.read_bytes())
    except FileNotFoundError:
        raise InputError(str(out), f"holds no {MANIFEST}: write it with `toolscore join`") from None
    except (OSError, orjson.JSONDecodeError) as error:
        raise InputError(str(manifest), f"cannot read: {error}") from None
    try:
        joined = Joined(out, **data)
    except TypeError:
        raise InputError(str(manifest), "not a join manifest") from None
    for part in joined.paths():
        if not Path(part).is_file():
            raise InputError(part, "no such file (a part of the join)")
    return joined


class _PartWriter:
    """Writes records into numbered parts of `rows_per_part` records each."""

    def __init__(self, out: Path, fmt: str, rows_per_part: int, parts: list[str]) -> None:
        self.out = out
        self.fmt = fmt
        self.rows_per_part = max(1, rows_per_part)
        self.parts = parts
        self.rows: list[dict[str, Any]] = []
        self._handle: IO[bytes] | None = None
        self._count = 0

    def add(self, record: dict[str, Any]) -> None:
        if self.fmt == "parquet":
            self.rows.append(record)
            if len(self.rows) == self.rows_per_part:
                self._flush_parquet()
            return
        if self._handle is None:
            self._handle = open(self._next_part(), "wb")  # noqa: SIM115 - closed at its end
        self._handle.write(orjson.dumps(record) + b"\n")
        self._count += 1
        if self._count == self.rows_per_part:
            self._close_jsonl()

    def _next_part(self) -> Path:
        name = f"part-{len(self.parts):05d}.{self.fmt}"
        self.parts.append(name)
        return self.out / name

    def _close_jsonl(self) -> None:
        if self._handle is not None:
            self._handle.close()
        self._handle = None
        self._count = 0

    def _flush_parquet(self) -> None:
        # Only Parquet parts need pyarrow.
        import pyarrow as pa  # type: ignore[import-untyped]  # noqa: PLC0415
        import pyarrow.parquet as pq  # type: ignore[import-untyped]  # noqa: PLC0415

        table = pa.Table.from_pylist(self.rows, schema=record_schema())
        pq.write_table(table, self._next_part())
        self.rows = []

    def close(self) -> None:
        """Write what is left."""
        if self.rows:
            self._flush_parquet()
        self._close_jsonl()

    def remove(self) -> None:
        """Remove the parts written so far (the join failed)."""
        self._close_jsonl()
        for part in self.parts:
            (self.out / part).unlink(missing_ok=True)


def record_schema() -> Any:
    """The Arrow schema of joined records (pyarrow is imported here only)."""
    import pyarrow as pa  # noqa: PLC0415

    types = {
        "seq": pa.int64(),
        "id": pa.string(),
        "case_line": pa.int64(),
        "case": pa.string(),
        "output_lines": pa.list_(pa.int64()),
        "outputs": pa.list_(pa.string()),
        "encoded": pa.list_(pa.string()),
    }
    return pa.schema([(key, types[key]) for key in RECORD_KEYS])
