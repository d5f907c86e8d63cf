"""A cache of parsed spec files, so that a spec read again is not parsed again.

Parsing a large YAML spec costs tens of milliseconds at every start (simple_python's 86 KB
spec about 35 ms, more than validating and compiling it), while its content rarely changes
between runs. A parsed document is kept as JSON, never pickled nor executed (data is data),
in `TOOLSCORE_CACHE_DIR`, else `$XDG_CACHE_HOME/toolscore`, else `~/.cache/toolscore`, one
file per spec content, keyed by the content's sha256, how it was parsed (YAML or JSON) and
toolscore's version. The cached data is validated and compiled again at each load, as any
spec is: only the parse is saved. An entry that is corrupt, foreign (another key in its
header) or unreadable is ignored and rewritten; a cache that cannot be written is no cache.
A document JSON cannot hold exactly (YAML dates, sets, non-string keys, infinities) is not
cached.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path
from typing import Any, Final

import orjson

from toolscore._version import __version__

CACHE_DIR_VARIABLE: Final = "TOOLSCORE_CACHE_DIR"
"""The environment variable naming the cache directory (beside XDG's)."""
MAX_ENTRIES: Final = 256
"""How many parsed specs the cache keeps; beyond that the least recently written go."""
_FORMAT: Final = 1
"""The layout of an entry; an entry of another layout is foreign."""


def cache_dir() -> Path:
    """Where parsed specs are kept (see the module docstring)."""
    named = os.environ.get(CACHE_DIR_VARIABLE)
    if named:
        return Path(named)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "toolscore"


def _key(content: bytes, kind: str) -> str:
    return f"{hashlib.sha256(content).hexdigest()}-{kind}"


def cached_document(content: bytes, kind: str) -> tuple[bool, Any]:
    """(True, data) when the cache holds the parse of `content` read as `kind` ("yaml" or
    "json") by this version of toolscore; (False, None) otherwise."""
    key = _key(content, kind)
    try:
        entry = orjson.loads((cache_dir() / "specs" / f"{key}.json").read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return False, None
    header = {"format": _FORMAT, "toolscore": __version__, "key": key}
    if not isinstance(entry, dict) or entry.get("header") != header or "data" not in entry:
        return False, None
    return True, entry["data"]


def keep_document(content: bytes, kind: str, data: Any) -> bool:
    """Keep the parse `data` of `content` (read as `kind`); whether it was kept. Data that
    JSON would not give back equal (a date, a set, an infinity) is not kept."""
    try:
        text = orjson.dumps(data, option=orjson.OPT_PASSTHROUGH_DATETIME)
    except (TypeError, orjson.JSONEncodeError):
        return False
    if orjson.loads(text) != data:  # an infinity written as null, a NaN: never equal
        return False
    key = _key(content, kind)
    header = orjson.dumps({"format": _FORMAT, "toolscore": __version__, "key": key})
    folder = cache_dir() / "specs"
    import tempfile  # noqa: PLC0415 - only when writing: a cache hit does without it

    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=folder, prefix=".", suffix=".tmp")
        with os.fdopen(handle, "wb") as out:
            out.write(b'{"header":' + header + b',"data":' + text + b"}")
        os.replace(temporary, folder / f"{key}.json")
    except OSError:
        with contextlib.suppress(OSError, UnboundLocalError):
            os.unlink(temporary)
        return False
    _prune(folder)
    return True


def _prune(folder: Path) -> None:
    """Remove the oldest entries beyond `MAX_ENTRIES` (they are only parses: any can go)."""
    try:
        entries = [(p.stat().st_mtime, p) for p in folder.glob("*.json")]
    except OSError:
        return
    if len(entries) <= MAX_ENTRIES:
        return
    for _, path in sorted(entries)[: len(entries) - MAX_ENTRIES]:
        with contextlib.suppress(OSError):
            path.unlink()
