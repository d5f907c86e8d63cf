"""Data as Python objects (as BFCL's state classes are): a tiny file system, compared through
its `snapshot` function."""

from typing import Any


class FileSystem:
    def __init__(self) -> None:
        self.files = {"readme.txt": "hello"}
        self.cwd = "/"

    def write(self, name: Any, text: Any) -> Any:
        self.files[name] = text


SHARED = FileSystem()
"""The one object `data` returns: replay must never change it."""


def make_state() -> Any:
    return {"fs": SHARED}


def snapshot(state: Any) -> Any:
    fs = state["fs"]
    return {"fs": {"files": dict(fs.files), "cwd": fs.cwd}}


def write_file(state: Any, name: Any, text: Any) -> Any:
    state["fs"].write(name, text)
    return "ok"


def broken(state: Any) -> Any:
    state["fs"].write("half.txt", "x")
    raise OSError("disk full")


PLAIN: dict[str, Any] = {"fs": {"files": {"readme.txt": "hello"}, "cwd": "/"}}
"""Plain data a data function returns: kept as JSON, and never changed by replay."""


def plain_state() -> Any:
    return PLAIN


def write_plain(state: Any, name: Any, text: Any) -> Any:
    state["fs"]["files"][name] = text
    return "ok"


RESTORED: list[Any] = []
"""Each state `restore` was handed (tests read it)."""


def restore(state: Any, compared: Any, original: Any, initial: Any) -> Any:
    """Bring a used file system back to the original one (`restore` of docs/formats.md 9.6)."""
    RESTORED.append(state)
    if compared == initial:
        return True
    state["fs"].files = dict(original["fs"].files)
    state["fs"].cwd = original["fs"].cwd
    return True


def refuse(state: Any, compared: Any, original: Any, initial: Any) -> Any:
    RESTORED.append(state)
    return "yes"  # not True: the state is dropped
