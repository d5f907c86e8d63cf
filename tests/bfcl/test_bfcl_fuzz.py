"""Fuzzing the BFCL answer parser with mutated answers (issue 11, item 5): whatever the text,
`parse_calls` returns calls (it has no error to raise: a bad call is a malformed call), never
runs any of it, and `import bfcl-outputs` writes a line `toolscore score` reads back."""

from __future__ import annotations

import ast
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolscore import parse_output
from toolscore.bfcl import convert_result, parse_calls
from toolscore.bfcl.jsonsafe import json_problem
from toolscore.bfcl.results import dumps

FIXTURES = Path(__file__).parents[1] / "bfcl"
MARKER = Path(tempfile.gettempdir()) / f"toolscore-bfcl-fuzz-{os.getpid()}"
"""A file that answers try to create; it must never exist."""

SEEDS: list[str] = [
    json.loads(line)["result"]
    for line in (FIXTURES / "results_prompting.json").read_text().splitlines()
] + [
    "[get_weather(city='Paris', days=3), math.hypot(x=4, y=-5.5)]",
    "<TOOLCALL>[f(a=[1, (2, 3)], b={'k': None, 'l': [True, 1e3]}, c='''x\ny''')]</TOOLCALL>",
    '```python\nf(a="é\\u00e9\\U0001f600", b=-0.0)\n```',
    "[f(a=1),\r\n g(b=x), h(c={'d': {'e': [[]]}})]",
    f"[f(a=open({str(MARKER)!r}, 'w'))]",
    f"[f(a=__import__('os').system('touch {MARKER}'))]",
]

TOKENS = [
    "(", ")", "[", "]", "{", "}", "'", '"', "\\", "=", ",", ":", ".", "-", "+", "*", "**",
    "\n", "\r", "\t", "\x00", "\ud800", "\udfff", "\\ud800", "é", "日", "\U0001f600",
    "9" * 25, "9" * 400, "1e999", "0x1f", "1j", "b'x'", "None", "True", "...", "#", "'''",
    "lambda: 0", "f(", "x.y", "g()", ":=", "await ", "yield ", "if 1 else ", "[" * 60,
    "]" * 60, "<TOOLCALL>", "</TOOLCALL>", "```", "```python\n",
    f"__import__('os').system('touch {MARKER}')", f"open({str(MARKER)!r}, 'w')",
    f"exec(\"open({str(MARKER)!r}, 'w')\")",
]  # fmt: skip


@st.composite
def mutated(draw: st.DrawFn) -> str:
    """A seed answer with a few random edits: inserts, deletions, duplications, replacements."""
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(text)))
        end = draw(st.integers(at, min(len(text), at + 12)))
        piece = draw(st.sampled_from(TOKENS) | st.text(max_size=4))
        edit = draw(st.sampled_from(["insert", "delete", "duplicate", "replace"]))
        if edit == "insert":
            text = text[:at] + piece + text[at:]
        elif edit == "delete":
            text = text[:at] + text[end:]
        elif edit == "duplicate":
            text = text[:end] + text[at:end] + text[end:]
        else:
            text = text[:at] + piece + text[end:]
    return text


_WATCHING: list[str] = []
_RAN: list[str] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    # `exec` is raised for eval() and exec() of code (and for running an imported module);
    # `ast.parse` raises only `compile`. Events are recorded only while an answer is read.
    watched = {"exec", "os.system", "subprocess.Popen", "os.exec", "open"}
    if _WATCHING and event in watched and (event != "open" or str(args[0]) == str(MARKER)):
        _RAN.append(event)


sys.addaudithook(_audit)

FUZZ = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def read(text: str) -> tuple[Any, Any]:
    """The parser's calls and the converted line, with the audit hook watching."""
    _WATCHING.append("on")
    try:
        calls = parse_calls(text)
        line = convert_result({"id": "fuzz", "result": text})
    finally:
        _WATCHING.clear()
    return calls, line


@FUZZ
@given(mutated())
def test_a_mutated_answer_is_read_never_run_and_always_written(text: str) -> None:
    read_calls, line = read(text)  # no exception of any kind: the parser has no error to raise
    assert _RAN == []
    assert not MARKER.exists()
    for call in read_calls.calls:
        assert call["name"] is None or isinstance(call["name"], str)
        if "error" in call:
            assert isinstance(call["args"], str)
            assert isinstance(call["error"], str)
        else:
            assert isinstance(call["args"], dict)
            assert json_problem(call["args"]) is None
    written = dumps(line).encode("utf-8")  # never a UnicodeEncodeError
    trajectory = parse_output(orjson.loads(written))  # read back as `score` reads it
    assert len(trajectory.calls) == len(read_calls.calls)
    broken = [c for c in trajectory.calls if c.args is None]
    assert len(broken) == read_calls.malformed  # malformed calls score as unparseable


@FUZZ
@given(st.text(max_size=60))
def test_any_text_is_read(text: str) -> None:
    read_calls, line = read(text)
    assert _RAN == []
    assert orjson.loads(dumps(line).encode("utf-8"))["id"] == "fuzz"
    assert len(line["calls"]) == len(read_calls.calls)


def test_the_fuzzing_watch_would_see_code_run() -> None:
    _WATCHING.append("on")
    try:
        eval("1")  # the one deliberate evaluation, to prove that the hook sees one
    finally:
        _WATCHING.clear()
    assert _RAN == ["exec"]
    _RAN.clear()


def test_the_parser_names_no_evaluating_function() -> None:
    tree = ast.parse((Path(__file__).parents[2] / "src/toolscore/bfcl/pycall.py").read_text())
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    attributes = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    assert not names & {"eval", "exec", "compile", "__import__"}
    assert not attributes & {"literal_eval", "eval", "exec", "loads", "load"}
