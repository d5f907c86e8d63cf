"""Where an HTML report's data comes from: a report JSON file, read as a stream, and the
plans and produced calls of chosen cases, scored again from the cases and outputs files.

`score --json` (and `show --json`) write the header and summary on the first line and one
case a line after it; that layout is read line by line, so a report of a million cases is
never held in memory. Any other layout of valid JSON (pretty-printed, say) is read whole.
The report JSON keeps each case's verdict and mismatches, not its plans, produced calls or
tags: those come from the input files, scored again for the embedded cases only.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Iterator, Mapping
from pathlib import Path
from typing import IO, Any

import orjson

from toolscore.errors import InputError
from toolscore.specs.loading import SpecSet

_OPENING = b',"cases":['


class ReportFile:
    """A report JSON file: its header and summary (`head`) and a stream of its cases."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._handle: IO[bytes] | None = None
        self._whole: list[Any] | None = None
        try:
            self._handle = open(path, "rb")  # noqa: SIM115 - closed by close()
            first = self._handle.readline()
        except OSError as error:
            raise InputError(path, f"cannot read: {error.strerror or error}") from None
        if first.rstrip().endswith(_OPENING):
            self.head = self._parse(first.rstrip()[: -len(_OPENING)] + b"}")
        else:
            data = self._parse(first + self._handle.read())
            self.close()
            cases = data.pop("cases", [])
            if not isinstance(cases, list):
                raise InputError(path, "must be a list", field="cases")
            self.head, self._whole = data, cases
        check_summary(self.head.get("summary"), path)

    def _parse(self, raw: bytes) -> dict[str, Any]:
        try:
            data = orjson.loads(raw)
        except orjson.JSONDecodeError as error:
            self.close()
            raise InputError(self.path, f"not valid JSON: {error}") from None
        if not isinstance(data, dict):
            self.close()
            raise InputError(self.path, "not a toolscore report JSON: not an object")
        return data

    def cases(self) -> Iterator[dict[str, Any]]:
        """Each case entry, in the order of the report."""
        if self._whole is not None:
            yield from (case for case in self._whole if isinstance(case, dict))
            return
        assert self._handle is not None
        for number, line in enumerate(self._handle, 2):
            text = line.strip().rstrip(b",")
            if not text or text == b"]}":
                continue
            try:
                case = orjson.loads(text)
            except orjson.JSONDecodeError as error:
                raise InputError(self.path, f"not valid JSON: {error}", line=number) from None
            if isinstance(case, dict):
                yield case

    def close(self) -> None:
        """Close the file (the cases cannot be read after this)."""
        if self._handle is not None:
            with contextlib.suppress(OSError):
                self._handle.close()
            self._handle = None


_RATES = ("name_accuracy", "argument_accuracy", "abstention_accuracy")
_CALL_RATES = ("unknown_tool_rate", "missing_argument_rate", "unexpected_argument_rate")
"""Rates a report JSON has since issue 26 (docs/formats.md 7.6): checked when present."""


def check_summary(summary: Any, path: str) -> None:
    """InputError naming the field unless `summary` has what every page shows: the counts,
    the accuracy and the three rates (`{"value", "n", "passed"}`)."""
    if not isinstance(summary, dict):
        raise InputError(path, "not a toolscore report JSON: no summary", field="summary")
    for key in ("cases", "passed"):
        if type(summary.get(key)) is not int:
            raise InputError(path, "must be a count", field=f"summary.{key}")
    if not isinstance(summary.get("accuracy"), int | float | None):
        raise InputError(path, "must be a number or null", field="summary.accuracy")
    for key in (*_RATES, *(k for k in _CALL_RATES if k in summary)):
        node = summary.get(key)
        if not isinstance(node, dict) or not {"value", "n", "passed"} <= node.keys():
            raise InputError(path, "must be a rate {value, n, passed}", field=f"summary.{key}")
    for key in ("baselines", "codes", "per_tool", "per_argument"):
        if not isinstance(summary.get(key, {}), dict):
            raise InputError(path, "must be an object", field=f"summary.{key}")
    _check_partial(summary, path)


def _number(value: Any) -> bool:
    return value is None or (isinstance(value, int | float) and not isinstance(value, bool))


def _check_partial(summary: dict[str, Any], path: str) -> None:
    """InputError naming the field unless the `partial`, `efficiency` and `forbidden_calls`
    blocks, when present, hold numbers where the page writes numbers."""
    partial, efficiency = summary.get("partial"), summary.get("efficiency")
    if partial is not None:
        for key in ("precision", "recall", "f1"):
            node = partial.get(key) if isinstance(partial, dict) else None
            bounds = node.get("macro_ci95") if isinstance(node, dict) else None
            if not (
                isinstance(node, dict)
                and _number(node.get("micro"))
                and _number(node.get("macro"))
                and (bounds is None or (isinstance(bounds, list) and len(bounds) == 2
                                        and all(_number(b) for b in bounds)))
            ):  # fmt: skip
                raise InputError(
                    path, "must be {micro, macro, macro_ci95}", field=f"summary.partial.{key}"
                )
        tools = partial.get("per_tool", {})
        if not isinstance(tools, dict) or not all(
            isinstance(row, dict)
            and all(_number(row.get(k)) for k in ("matched", "expected", "produced", "f1"))
            for row in tools.values()
        ):
            raise InputError(path, "must map tools to counts", field="summary.partial.per_tool")
    if efficiency is not None and not (
        isinstance(efficiency, dict)
        and all(
            _number(efficiency.get(k))
            for k in ("extra", "excused", "repeated", "calls_per_expected_call")
        )
    ):
        raise InputError(path, "must hold counts", field="summary.efficiency")
    forbidden = summary.get("forbidden_calls")
    if forbidden is not None and not (
        isinstance(forbidden, dict)
        and type(forbidden.get("calls")) is int
        and type(forbidden.get("cases")) is int
        and isinstance(forbidden.get("rate"), dict)
        and isinstance(forbidden.get("per_tool", {}), dict)
    ):
        raise InputError(
            path, "must be {calls, cases, rate, per_tool}", field="summary.forbidden_calls"
        )


def details_from_files(
    specs: SpecSet, cases_path: str, outputs_path: str, chosen: Mapping[str, dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """The plans, produced calls and tags of the chosen cases (by id, their report entries),
    scored again from a cases and an outputs file."""
    from toolscore.inputs.jsonl import iter_lines  # noqa: PLC0415

    return _details(
        specs, iter_lines(cases_path), iter_lines(outputs_path), (cases_path, outputs_path), chosen
    )


def details_from_store(
    store: Any, info: Any, specs: SpecSet, chosen: Mapping[str, dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """As `details_from_files`, from the cases and outputs files a stored run keeps."""
    sources = (
        f"{info.cases_path} (stored with run {info.id})",
        f"{info.outputs_path} (stored with run {info.id})",
    )
    case_lines = store.content_lines(info.cases_sha256)
    output_lines = store.content_lines(info.outputs_sha256)
    return _details(specs, case_lines, output_lines, sources, chosen)


def _details(
    specs: SpecSet,
    case_lines: Any,
    output_lines: Any,
    sources: tuple[str, str],
    chosen: Mapping[str, dict[str, Any]],
) -> dict[str, dict[str, Any]]:
    from toolscore.calibration.disagreements import rescored_views  # noqa: PLC0415

    def stored_of(case_id: str) -> tuple[dict[str, Any], list[str | None]]:
        return chosen[case_id], []

    found: dict[str, dict[str, Any]] = {}
    # A case's trials share its id, and the page keys details by id: trials get none.
    wanted: Collection[str] = {key for key, case in chosen.items() if "trial" not in case}
    if not wanted:
        return found
    views = rescored_views(specs, case_lines, output_lines, sources, wanted, stored_of)
    for case, view, _, _ in views:
        view["tags"] = list(case.tags)
        found[case.id] = view
        if len(found) == len(wanted):
            break  # the chosen cases come early in a large run: read no further
    return found


def file_sha256(path: str) -> str | None:
    """The sha256 of a regular file's bytes, or None for a stream or an unreadable file."""
    from toolscore.inputs.paths import is_stream  # noqa: PLC0415
    from toolscore.store.content import file_sha256 as sha256  # noqa: PLC0415

    if is_stream(path) or not Path(path).is_file():
        return None
    try:
        return sha256(path)
    except OSError:
        return None
