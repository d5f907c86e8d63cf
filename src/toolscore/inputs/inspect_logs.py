"""Inspect AI eval logs as an outputs file, read without inspect_ai.

A log is a `.eval` file (a zip holding `header.json` and one `samples/ID_epoch_N.json` per
sample and epoch) or a `.json` file (one object whose `samples` list holds them all). Each
sample becomes one outputs line: its id (as a string), its messages as an `inspect`
transcript (formats/inspect_messages.py), and, when some sample ran more than once (Inspect's
epochs), its epoch as the line's `trial`. The lines of one sample are written together, its
epochs in order, as trials must come (docs/formats.md 4.4). Read as a cases file, a log gives
one case per sample, with the plans its target or metadata keep (inspect_plans.py).

Long strings that Inspect moved to the sample's `attachments` (`attachment://HASH`) are put
back. A member is decompressed no further than its declared size, itself bounded
(zip_members.py). Every `score` imports this module for its `sniff`, so json and zipfile are
imported only by the functions that convert. A log whose samples are not Inspect samples (no
id, a message without a role, a tool call without a function) is an input error naming the
file, the sample and the field.
"""

from __future__ import annotations

import functools
import re
import zlib
from collections.abc import Callable, Mapping
from typing import IO, TYPE_CHECKING, Any

from toolscore.core.values import json_type
from toolscore.errors import InputError
from toolscore.inputs.conversion import Conversion
from toolscore.inputs.inspect_plans import PlansError, case_data
from toolscore.inputs.zip_members import ZIP_MAGIC, read_member

if TYPE_CHECKING:
    import zipfile

SAMPLE_FILE = re.compile(r"\Asamples/(.+)_epoch_(\d+)\.json\Z")
ATTACHMENT = ("attachment://", "tc://")  # "tc://" is how older Inspect versions wrote them


Run = tuple[int, str, Callable[[], Mapping[str, Any]]]
"""One sample's run: its epoch, where it is in the log, and how to read it."""


def convert(path: str, conversion: Conversion, out: IO[bytes]) -> None:
    """Write the log at `path` to `out` as outputs (a line per sample and epoch) or as cases
    (a line per sample, its plans from its metadata or target: inspect_plans.py)."""
    write = _write_outputs if conversion.kind == "outputs" else _write_cases
    if not _is_zip(path):
        write(path, _json_runs(path), out)
        return
    import zipfile  # noqa: PLC0415

    try:
        with zipfile.ZipFile(path) as archive:
            write(path, _eval_runs(path, archive), out)
    except (zipfile.BadZipFile, EOFError, zlib.error) as error:
        raise InputError(path, f"not a readable Inspect eval log (bad zip: {error})") from None


def _write_outputs(path: str, runs: dict[str, list[Run]], out: IO[bytes]) -> None:
    """The lines of each sample together, its epochs in order; `trial` when some sample ran
    more than once."""
    if not runs:
        raise InputError(path, "the log holds no samples (written with --no-log-samples?)")
    import json  # noqa: PLC0415

    trials = any(len(group) > 1 for group in runs.values())
    for group in runs.values():
        for _, where, read in sorted(group, key=lambda run: run[0]):
            sample = read()
            case_id, epoch = _identity(path, where, sample)
            line: dict[str, Any] = {"id": case_id, "format": "inspect"}
            line["messages"] = _messages(path, where, sample)
            if trials:
                line["trial"] = epoch
            out.write(json.dumps(line).encode() + b"\n")


def _write_cases(path: str, runs: dict[str, list[Run]], out: IO[bytes]) -> None:
    """A case per sample, from its first epoch (every epoch has the same target)."""
    if not runs:
        raise InputError(path, "the log holds no samples (written with --no-log-samples?)")
    import json  # noqa: PLC0415

    for group in runs.values():
        _, where, read = min(group, key=lambda run: run[0])
        sample = read()
        case_id, _ = _identity(path, where, sample)
        try:
            data, _ = case_data(sample.get("target", ""), sample.get("metadata"))
        except PlansError as error:
            raise InputError(path, error.message, field=_at(where, error.field)) from None
        data["id"] = case_id
        if "prompt" not in data and sample.get("input") is not None:
            data["prompt"] = sample["input"]
        out.write(json.dumps(data).encode() + b"\n")


def _is_zip(path: str) -> bool:
    with open(path, "rb") as handle:
        return handle.read(len(ZIP_MAGIC)) == ZIP_MAGIC


def _eval_runs(path: str, archive: zipfile.ZipFile) -> dict[str, list[Run]]:
    """The samples of a `.eval` zip by the sample each file is named after; each is read
    only when its line is written, so a log of any size is held one sample at a time."""
    names = archive.namelist()
    if "header.json" not in names and not any(SAMPLE_FILE.match(name) for name in names):
        raise InputError(path, "not an Inspect eval log: the zip has no header.json")
    runs: dict[str, list[Run]] = {}
    for name in names:
        match = SAMPLE_FILE.match(name)
        if match:
            read = functools.partial(_sample, path, name, archive)
            runs.setdefault(match[1], []).append((int(match[2]), name, read))
    return runs


def _json_runs(path: str) -> dict[str, list[Run]]:
    """The samples of a `.json` log, which is read whole (it is one JSON object)."""
    with open(path, "rb") as handle:
        log = _json(path, None, handle.read())
    samples = log.get("samples") if isinstance(log, Mapping) else None
    if samples is None:
        message = "the log holds no samples (written with --no-log-samples?)"
        raise InputError(path, message, field="samples")
    if not isinstance(samples, list):
        raise InputError(path, f"must be a list, got {json_type(samples)}", field="samples")
    runs: dict[str, list[Run]] = {}
    for i, sample in enumerate(samples):
        where = f"samples[{i}]"
        if not isinstance(sample, Mapping):
            raise InputError(path, f"must be an object, got {json_type(sample)}", field=where)
        case_id, epoch = _identity(path, where, sample)
        runs.setdefault(case_id, []).append((epoch, where, functools.partial(_given, sample)))
    return runs


def _given(sample: Mapping[str, Any]) -> Mapping[str, Any]:
    return sample


def _sample(path: str, name: str, archive: zipfile.ZipFile) -> Mapping[str, Any]:
    sample = _json(path, name, read_member(path, archive, name))
    if not isinstance(sample, Mapping):
        raise InputError(path, f"must be an object, got {json_type(sample)}", field=name)
    return sample


def _json(path: str, where: str | None, raw: bytes) -> Any:
    """Inspect's JSON, which may hold NaN and Infinity (as Python's json writes them)."""
    import json  # noqa: PLC0415

    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as error:
        raise InputError(path, f"not JSON ({error})", field=where) from None


def _identity(path: str, where: str, sample: Mapping[str, Any]) -> tuple[str, int]:
    """The sample's id as a string, and its epoch (1 when the log gives none)."""
    case_id = sample.get("id")
    if isinstance(case_id, bool) or not isinstance(case_id, str | int) or case_id == "":
        message = f"every sample needs an id (a string or an integer), got {json_type(case_id)}"
        raise InputError(path, message, field=_at(where, "id"))
    epoch = sample.get("epoch", 1)
    if isinstance(epoch, bool) or not isinstance(epoch, int):
        message = f"must be an integer, got {json_type(epoch)}"
        raise InputError(path, message, field=_at(where, "epoch"))
    return str(case_id), epoch


def _messages(path: str, where: str, sample: Mapping[str, Any]) -> list[Any]:
    """The sample's messages with attachments put back, checked as far as Inspect's own
    schema requires (a role on every message, a function on every tool call)."""
    messages = sample.get("messages")
    if not isinstance(messages, list):
        message = f"must be a list of messages, got {json_type(messages)}"
        raise InputError(path, message, field=_at(where, "messages"))
    attachments = sample.get("attachments")
    if isinstance(attachments, Mapping) and attachments:
        try:
            messages = _resolved(messages, attachments)
        except RecursionError:
            message = "nested too deep to be read"
            raise InputError(path, message, field=_at(where, "messages")) from None
    for i, message in enumerate(messages):
        at = _at(where, f"messages[{i}]")
        if not isinstance(message, Mapping) or not isinstance(message.get("role"), str):
            raise InputError(path, "every message needs a role", field=f"{at}.role")
        tool_calls = message.get("tool_calls") or []
        if not isinstance(tool_calls, list):
            raise InputError(path, "must be a list", field=f"{at}.tool_calls")
        for j, call in enumerate(tool_calls):
            if not isinstance(call, Mapping) or not isinstance(call.get("function"), str):
                why = "every tool call needs the name of its function"
                raise InputError(path, why, field=f"{at}.tool_calls[{j}].function")
    return messages


def _at(where: str, field: str) -> str:
    """A field of a sample: `samples[3].id` in a `.json` log, `samples/3_epoch_1.json: id`
    in a `.eval` one."""
    return f"{where}: {field}" if where.endswith(".json") else f"{where}.{field}"


def _resolved(node: Any, attachments: Mapping[str, Any]) -> Any:
    """`node` with every `attachment://HASH` string replaced by the attachment it names."""
    if isinstance(node, str):
        for prefix in ATTACHMENT:
            if node.startswith(prefix):
                found = attachments.get(node[len(prefix) :])
                return found if isinstance(found, str) else node
        return node
    if isinstance(node, list):
        return [_resolved(item, attachments) for item in node]
    if isinstance(node, Mapping):
        return {key: _resolved(value, attachments) for key, value in node.items()}
    return node
