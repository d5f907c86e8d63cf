"""MCP session logs as outputs: the `mcp` transcript reader and the grouped JSON Lines log.

tests/formats/mcp.json (hand-written from the published schema) and tests/formats/mcp_sdk.json
(written by the `mcp` package's client: make_mcp_fixtures.py) are read against their `calls`
twins with every other format in tests/inputs/test_formats.py. Here: the golden points of the
reader (tests/formats/mcp/golden.json), detection, properties and fuzzing of the reader, the
log converter, and scoring end to end through the CLI.
"""

from __future__ import annotations

import io
import json
import logging
import random
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolscore.cli.app import cli
from toolscore.core.model import MISSING
from toolscore.errors import InputError, OutputError
from toolscore.inputs.conversion import Conversion
from toolscore.inputs.converted import HEAD_BYTES, layout_of
from toolscore.inputs.formats import read_transcript
from toolscore.inputs.formats.detect import detect
from toolscore.inputs.layouts import mcp_log as sniff
from toolscore.inputs.mcp_log import convert
from toolscore.inputs.outputs import parse_output
from toolscore.scoring.check import check

FORMATS_DIR = Path(__file__).parents[1] / "formats"
HERE = FORMATS_DIR / "mcp"
GOLDEN = json.loads((HERE / "golden.json").read_text(encoding="utf-8"))["cases"]
FIXTURE = json.loads((FORMATS_DIR / "mcp.json").read_text(encoding="utf-8"))
MESSAGES: list[Any] = FIXTURE["line"]["mcp"]
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def read(messages: Any, **line: Any) -> Any:
    return read_transcript({"id": "x", "format": "mcp", "mcp": messages, **line}, "o.jsonl", 2)


def as_plain(trajectory: Any) -> list[dict[str, Any]]:
    calls = []
    for call in trajectory.calls:
        plain = {"name": call.name, "args": call.args, "id": call.call_id}
        if call.result is not MISSING:
            plain["result"] = call.result
        if call.result_error:
            plain["error"] = True
        calls.append(plain)
    return calls


@pytest.mark.parametrize("case", GOLDEN, ids=[case["description"] for case in GOLDEN])
def test_golden(case: dict[str, Any]) -> None:
    trajectory = read(case["mcp"])
    assert as_plain(trajectory) == case["calls"]
    assert [entry.split(": ")[0] for entry in trajectory.unread] == case.get("unread", [])
    assert list(trajectory.notes) == case.get("notes", [])
    assert all(call.turn == 0 for call in trajectory.calls)
    assert trajectory.final_turn == 0


def test_the_golden_cases_cover_each_kind_of_trouble() -> None:
    reasons = " ".join(entry for case in GOLDEN for entry in read(case["mcp"]).unread)
    for part in ("has no response", "no pending request", "an earlier tools/call has the id",
                 "a tool's name", "must be an object", "needs an id", "empty JSON-RPC batch",
                 "which is answered", "resultType", "content list", "unknown mcp type",
                 "not a JSON-RPC message", "not both"):  # fmt: skip
        assert part in reasons, part


def test_a_unread_session_cannot_pass_and_says_where(tmp_path: Path) -> None:
    messages = [*MESSAGES, {"jsonrpc": "2.0", "id": 99, "result": {"content": []}}]
    outputs = tmp_path / "o.jsonl"
    outputs.write_text(json.dumps({"id": "s1", "mcp": messages}) + "\n")
    report = tmp_path / "r.json"
    done = score(HERE / "cases.jsonl", outputs, "--json", str(report), "--missing", "exclude")
    assert done.exit_code == 0, done.output
    entry = next(c for c in json.loads(report.read_text())["cases"] if c["id"] == "s1")
    assert entry["passed"] is False
    assert entry["unread"] == [
        f"mcp[{len(MESSAGES)}].id: a response to id 99, which no pending request in the log has"
    ]
    assert "transcript_unread" in [m["code"] for m in entry["mismatches"]]


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "a"}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ],
)
def test_json_rpc_under_messages_is_mcp(message: Any) -> None:
    assert detect("messages", [message]) == "mcp"
    assert detect("mcp", []) == "mcp"


def test_the_log_under_messages_reads_as_under_mcp() -> None:
    under_messages = read_transcript({"id": "x", "messages": MESSAGES})
    assert under_messages.format == "mcp"
    assert under_messages.notes == ("format detected: mcp",)
    assert under_messages.calls == read(MESSAGES).calls


def test_a_wrong_format_or_key_is_an_input_error() -> None:
    with pytest.raises(OutputError, match="format 'anthropic' reads messages, not 'mcp'"):
        read_transcript({"id": "x", "format": "anthropic", "mcp": MESSAGES})
    with pytest.raises(OutputError, match="written as mcp"):
        read_transcript({"id": "x", "format": "openai-chat", "messages": MESSAGES})
    with pytest.raises(OutputError, match="must be a list, got object") as failure:
        read({"jsonrpc": "2.0"})
    assert failure.value.field == "mcp"
    with pytest.raises(OutputError, match="give either calls or a transcript"):
        read(MESSAGES, calls=[])


def test_the_response_comes_from_the_line() -> None:
    assert read(MESSAGES).response is None
    assert read(MESSAGES, response="done").response == "done"


def _requests_and_responses() -> tuple[list[Any], list[Any]]:
    calls = [m for m in MESSAGES if m.get("method") == "tools/call"]
    ids = {m["id"] for m in calls}
    answers = [m for m in MESSAGES if "method" not in m and m["id"] in ids]
    return calls, answers


@given(st.randoms(use_true_random=False))
def test_the_order_of_the_responses_never_changes_the_calls(rng: random.Random) -> None:
    """Responses, sent in any order after the requests, link to the same calls."""
    calls, answers = _requests_and_responses()
    shuffled = answers[:]
    rng.shuffle(shuffled)
    assert read(calls + shuffled).calls == read(calls + answers).calls
    assert read(calls + shuffled).unread == ()


@given(st.randoms(use_true_random=False))
def test_messages_that_hold_no_call_never_change_the_calls(rng: random.Random) -> None:
    """Pings, notifications and other requests with their responses, put anywhere."""
    calls, answers = _requests_and_responses()
    noise = [
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progress": 1}},
        {"jsonrpc": "2.0", "id": "p-1", "method": "ping"},
        {"jsonrpc": "2.0", "id": "p-1", "result": {}},
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info"}},
    ]
    mixed = calls + answers
    for message in noise[:2] + noise[3:]:
        mixed.insert(rng.randrange(len(mixed) + 1), message)
    ping = mixed.index(noise[1])
    mixed.insert(rng.randrange(ping + 1, len(mixed) + 1), noise[2])
    assert read(mixed).calls == read(calls + answers).calls
    assert read(mixed).unread == ()


MCP_KEYS = st.sampled_from(
    ["jsonrpc", "id", "method", "params", "name", "arguments", "result", "error", "content",
     "type", "text", "isError", "structuredContent", "resultType", "requestId", "message"]
)  # fmt: skip
MCP_WORDS = st.sampled_from(
    ["tools/call", "2.0", "text", "image", "complete", "a", "", "notifications/cancelled"]
)


def _nested(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Arrays and objects (of MCP's keys) of `inner` values."""
    return st.lists(inner, max_size=3) | st.dictionaries(MCP_KEYS, inner, max_size=5)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats() | MCP_WORDS,
    _nested,
    max_leaves=20,
)
"""JSON values made of MCP's own keys and words, so that most reach deep into the reader."""


@FUZZ
@given(messages=st.lists(JSON, max_size=8))
def test_any_messages_read_without_raising(messages: list[Any]) -> None:
    """Whatever the list holds, the reader gives a trajectory: what it cannot understand is
    unread, never an exception; and every call it reads has a name and an object."""
    trajectory = read(messages)
    for call in trajectory.calls:
        assert isinstance(call.name, str)
        assert call.name
        assert isinstance(call.args, dict)


@FUZZ
@given(data=st.data())
def test_a_changed_value_in_the_fixture_reads_without_raising(data: st.DataObject) -> None:
    """One value of the real log replaced by any JSON: read, with what breaks unread."""
    messages = json.loads(json.dumps(MESSAGES))
    i = data.draw(st.integers(0, len(messages) - 1))
    node = messages[i]
    path: list[Any] = []
    while isinstance(node, dict) and node and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(sorted(node)))
        path.append(key)
        node = node[key]
    value = data.draw(JSON)
    if path:
        parent = messages[i]
        for key in path[:-1]:
            parent = parent[key]
        parent[path[-1]] = value
    else:
        messages[i] = value
    trajectory = read(messages)
    assert len(trajectory.calls) <= json.dumps(messages).count('"tools/call"')
    for call in trajectory.calls:
        assert isinstance(call.args, dict)


# The log converter.


def converted(path: Path, group_by: str | None = None) -> list[dict[str, Any]]:
    out = io.BytesIO()
    convert(str(path), Conversion("outputs", group_by), out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def score(cases: Path, outputs: Path, *extra: str) -> Result:
    return CliRunner().invoke(
        cli, ["score", "--specs", str(HERE / "tools.yaml"), "--cases", str(cases),
              "--outputs", str(outputs), *extra],
    )  # fmt: skip


@pytest.mark.parametrize("name", ["wrapped.jsonl", "flat.jsonl"])
def test_a_log_is_recognised_and_grouped_by_session_in_order(name: str) -> None:
    path = HERE / name
    assert layout_of(str(path)) is not None
    assert layout_of(str(path)).name == "mcp-log"  # type: ignore[union-attr]
    lines = converted(path)
    assert [(line["id"], line["format"]) for line in lines] == [("s1", "mcp"), ("s2", "mcp")]
    first = read_transcript(lines[0])
    assert first.calls == read(MESSAGES).calls
    assert first.unread == ()
    assert len(read_transcript(lines[1]).calls) == 1


def test_the_wrapped_and_the_flat_log_give_the_same_lines() -> None:
    assert converted(HERE / "wrapped.jsonl") == converted(HERE / "flat.jsonl")


def test_only_what_the_reader_reads_is_kept() -> None:
    (s1, _) = converted(HERE / "wrapped.jsonl")
    methods = [m.get("method") for m in s1["mcp"]]
    assert "notifications/progress" not in methods
    assert "notifications/initialized" not in methods
    initialize = s1["mcp"][0]
    assert initialize == {"jsonrpc": "2.0", "id": 0, "method": "initialize"}
    assert s1["mcp"][1] == {"jsonrpc": "2.0", "id": 0, "result": {}}  # its response, a stub
    assert all("session_id" not in m and "time" not in m for m in s1["mcp"])


def test_messages_lacking_the_key_are_counted_and_warned_of(
    caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    path = tmp_path / "log.jsonl"
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "a"}}
    lines = [{"session": "s1", **call}, {**call, "id": 2}, {"session": None, **call, "id": 3}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with caplog.at_level(logging.WARNING, logger="toolscore"):
        (only,) = converted(path, "session")
    assert only["id"] == "s1"
    assert caplog.messages == [
        f"{path}: 2 messages (2 tools/call requests) lack session: skipped (try --group-by KEY)"
    ]


def test_a_key_of_another_name_and_integer_sessions_group_too(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    lines = [{"conv": n % 2, **message} for n, message in enumerate(MESSAGES)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert [line["id"] for line in converted(path, "conv")] == ["0", "1"]


def test_a_message_given_as_json_text_is_read(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    lines = [{"session_id": "s1", "message": json.dumps(m)} for m in MESSAGES]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    (line,) = converted(path)
    assert read_transcript(line).calls == read(MESSAGES).calls


PING = '{"session_id": "s", "jsonrpc": "2.0", "id": 1, "method": "ping"}\n'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (PING + "not json\n", ":2: not valid JSON"),
        (PING + "[1]\n", ":2: every line of an MCP log is an object, got array"),
        (PING + '{"session_id": "s", "note": 1}\n', ":2: neither a JSON-RPC message"),
        (PING + '{"session_id": "s", "message": "{not"}\n',
         ":2: message: its JSON text is not valid JSON"),
        (PING + '{"session_id": "s", "message": 3}\n', ":2: message: neither a JSON-RPC message"),
        (PING + '{"session_id": {"a": 1}, "jsonrpc": "2.0"}\n',
         ":2: session_id: a session key is a string or an integer, got object"),
        (PING + '{"session_id": true, "jsonrpc": "2.0"}\n',
         ":2: session_id: a session key is a string or an integer, got boolean"),
    ],
)  # fmt: skip
def test_a_malformed_log_is_one_error_naming_file_line_and_field(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "log.jsonl"
    path.write_text(text)
    with pytest.raises(InputError) as failure:
        converted(path)
    assert str(failure.value).startswith(f"{path}{message}"), str(failure.value)
    done = score(HERE / "cases.jsonl", path)
    assert done.exit_code == 2
    (line,) = done.stderr.strip().splitlines()
    assert line == f"toolscore: error: {failure.value}", line


def test_a_session_past_the_bound_is_an_input_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLSCORE_MAX_SESSION_MESSAGES", "3")
    with pytest.raises(InputError, match="session 's1' holds more than 3 messages"):
        converted(HERE / "wrapped.jsonl")


def test_a_log_is_no_cases_file() -> None:
    with pytest.raises(InputError, match="holds outputs, not cases"):
        convert(str(HERE / "flat.jsonl"), Conversion("cases"), io.BytesIO())


@pytest.mark.parametrize(
    ("head", "claimed"),
    [
        (b'{"session_id": "s", "jsonrpc": "2.0", "method": "ping"}\n', True),
        (b'  \n{"session_id": "s", "message": {"jsonrpc": "2.0"}}\n', True),
        (b'{"jsonrpc": "2.0", "params": {"x": "' + b"y" * HEAD_BYTES, True),
        (b'{"id": "c1", "mcp": [{"jsonrpc": "2.0"}]}\n', False),
        (b'{"id": "c1", "message": "hello"}\n', False),
        (b'{"id": "c1", "calls": []}\n', False),
        (b"[1, 2]\n", False),
    ],
)
def test_the_sniffer_claims_logs_and_leaves_outputs_lines_alone(head: bytes, claimed: bool) -> None:
    assert sniff("x", head[:HEAD_BYTES]) is claimed


def test_score_groups_a_log_by_session_through_the_cli(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    report = tmp_path / "r.json"
    with caplog.at_level(logging.WARNING, logger="toolscore"):
        done = score(HERE / "cases.jsonl", HERE / "wrapped.jsonl", "--json", str(report))
    assert done.exit_code == 0, done.output
    assert "1 messages (0 tools/call requests) lack session_id" in caplog.text
    cases = {c["id"]: c for c in json.loads(report.read_text())["cases"]}
    assert cases["s1"]["passed"] is True
    assert cases["s1"]["format"] == "mcp"
    assert [e["result"] for e in cases["s1"]["tool_errors"]] == ["amount exceeds the order total"]
    assert cases["s2"]["passed"] is False
    assert [m["code"] for m in cases["s2"]["mismatches"]] == ["value_mismatch"]


def test_group_by_names_the_sessions_key(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "log.jsonl"
    text = (HERE / "flat.jsonl").read_text().replace('"session_id"', '"conversation"')
    path.write_text(text)
    report = tmp_path / "r.json"
    done = score(HERE / "cases.jsonl", path, "--group-by", "conversation", "--json", str(report))
    assert done.exit_code == 0, done.output
    assert [c["passed"] for c in json.loads(report.read_text())["cases"]] == [True, False]
    with caplog.at_level(logging.WARNING, logger="toolscore"):
        missing = score(HERE / "cases.jsonl", path, "--json", str(report))
    assert missing.exit_code == 1  # every message lacks session_id: no output, said so
    assert "lack session_id: skipped (try --group-by KEY)" in caplog.text
    assert "2 of 2 cases have no output line" in missing.stderr


def test_group_by_with_a_plain_outputs_file_is_refused() -> None:
    done = score(HERE / "cases.jsonl", HERE / "cases.jsonl", "--group-by", "session_id")
    assert done.exit_code == 2
    assert "or the messages of an MCP session log" in done.stderr


def test_a_ref_reads_structured_content_and_json_text_alike(tmp_path: Path) -> None:
    """`$ref` into a result: structuredContent (an object) and a text block of JSON."""
    cases = tmp_path / "cases.jsonl"
    plan = [
        {"id": "look", "name": "get_order", "args": {"order_id": "order-12"}},
        {"id": "r1", "name": "refund", "args": {"order_id": "order-77", "amount": 12.5}},
        {"name": "refund", "args": {"order_id": "order-31", "amount": 5}},
    ]
    required = [{"$ref": "look#/status"}, {"$ref": "r1#/refund_id"}]
    case = {"id": "s1", "plans": [plan], "required_outputs": required}
    cases.write_text(json.dumps(case) + "\n")
    outputs = tmp_path / "o.jsonl"
    outputs.write_text(json.dumps({**FIXTURE["line"], "id": "s1", "response": "done"}) + "\n")
    report = tmp_path / "r.json"
    done = score(cases, outputs, "--json", str(report))
    assert done.exit_code == 0, done.output
    (entry,) = json.loads(report.read_text())["cases"]
    assert entry["state"]["missing_outputs"] == [  # the response names neither value
        '{"$ref": "look#/status"} (held \'shipped\')',
        '{"$ref": "r1#/refund_id"} (held \'r-1\')',
    ]
    outputs.write_text(json.dumps({**FIXTURE["line"], "id": "s1", "response": "shipped, r-1"}))
    done = score(cases, outputs, "--json", str(report))
    assert done.exit_code == 0, done.output
    (entry,) = json.loads(report.read_text())["cases"]
    assert entry["state"]["outputs_passed"] is True, entry


def test_the_sdk_sessions_log_scores_through_the_cli(tmp_path: Path) -> None:
    """The log the `mcp` package's own client and server made (make_mcp_fixtures.py)."""
    plan = [
        {"name": "get_order", "args": {"order_id": "order-12"}},
        {"name": "refund", "args": {"order_id": "order-77", "amount": 12.5}},
        {"name": "refund", "args": {"order_id": "order-31", "amount": 5}},
    ]
    cases = tmp_path / "cases.jsonl"
    sessions = ("sdk-2025-11-25", "sdk-2026-07-28")
    cases.write_text("".join(json.dumps({"id": s, "plans": [plan]}) + "\n" for s in sessions))
    report = tmp_path / "r.json"
    log = HERE / "sdk_sessions.jsonl"
    done = score(cases, log, "--group-by", "session_id", "--json", str(report))
    assert done.exit_code == 0, done.output
    entries = json.loads(report.read_text())["cases"]
    assert [(e["id"], e["passed"], e.get("unread")) for e in entries] == [
        (session, True, None) for session in sessions
    ]
    for entry in entries:
        assert [e["result"] for e in entry["tool_errors"]] == [
            "Error executing tool refund: amount exceeds the order total"
        ]


def _as_mcp(line: dict[str, Any]) -> dict[str, Any]:
    """An outputs line's calls as the MCP session that made them (each answered in turn)."""
    messages: list[Any] = [{"jsonrpc": "2.0", "method": "notifications/initialized"}]
    for n, call in enumerate(line["calls"], 1):
        params = {"name": call["name"], "arguments": call["args"]}
        messages.append({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params})
        text = json.dumps(call.get("result", "done"))
        result = {"content": [{"type": "text", "text": text}], "isError": False}
        messages.append({"jsonrpc": "2.0", "id": n, "result": result})
    return {"id": line["id"], "mcp": messages, "response": line.get("response")}


def test_under_env_an_mcp_log_replays_and_scores_as_its_calls(tmp_path: Path) -> None:
    """The packaged support example with a store: its outputs as MCP sessions give the same
    verdicts, state verdicts included, as its `calls` lines."""
    example = Path(__file__).parents[2] / "examples" / "support" / "env"
    lines = [json.loads(t) for t in (example / "outputs.jsonl").read_text().splitlines() if t]
    outputs = tmp_path / "mcp.jsonl"
    outputs.write_text("".join(json.dumps(_as_mcp(line)) + "\n" for line in lines))
    verdicts = []
    for source in (example / "outputs.jsonl", outputs):
        report = tmp_path / "r.json"
        done = CliRunner().invoke(
            cli, ["score", "--specs", str(example / "tools.yaml"), "--cases",
                  str(example / "cases.jsonl"), "--outputs", str(source), "--env",
                  "--json", str(report)],
        )  # fmt: skip
        assert done.exit_code == 0, done.output
        cases = json.loads(report.read_text())["cases"]
        verdicts.append(
            [(c["id"], c["passed"], c["state_passed"], c["mismatches"], c["state"]) for c in cases]
        )
    assert verdicts[0] == verdicts[1]
    assert {verdict[2] for verdict in verdicts[0]} == {True, False}  # the store decides


def test_check_takes_a_bare_list_of_json_rpc_messages() -> None:
    """`toolscore.check` reads a bare list of MCP messages as the session, as a line with it."""
    specs = str(HERE / "tools.yaml")
    plan = [{"name": name, "args": args} for name, args in (
        ("get_order", {"order_id": "order-12"}),
        ("refund", {"order_id": "order-77", "amount": 12.5}),
        ("refund", {"order_id": "order-31", "amount": 5}),
    )]  # fmt: skip
    bare = check(specs, [plan], MESSAGES)
    assert bare.passed
    assert bare == check(specs, [plan], {"mcp": MESSAGES})
    assert not check(specs, [plan[:2]], MESSAGES).passed


def _reasons(trajectory: Any) -> list[str]:
    """The unread parts without where they were (a converted log drops and moves messages)."""
    return [entry.split(": ", 1)[1] for entry in trajectory.unread]


MESSAGE = st.dictionaries(
    st.sampled_from(["jsonrpc", "id", "method", "params", "result", "error"]), JSON, max_size=5
) | st.builds(
    lambda i, name, args: {"jsonrpc": "2.0", "id": i, "method": "tools/call",
                           "params": {"name": name, "arguments": args}},
    st.integers(0, 1), st.sampled_from(["a", "b"]), st.dictionaries(st.just("x"), JSON),
) | st.builds(
    lambda i, method: {"jsonrpc": "2.0", "id": i, "method": method},
    st.integers(0, 1), st.sampled_from(["ping", "tools/list", "sampling/createMessage"]),
) | st.builds(
    lambda i, text, error: {"jsonrpc": "2.0", "id": i, "result": {
        "content": [{"type": "text", "text": text}], "isError": error}},
    st.integers(0, 1), st.sampled_from(["A", "{}"]), st.booleans(),
) | st.builds(lambda i: {"jsonrpc": "2.0", "id": i, "result": {}}, st.integers(0, 1))  # fmt: skip
"""JSON-RPC messages: requests, calls and responses whose ids collide, and junk."""


@FUZZ
@given(
    records=st.lists(
        st.tuples(st.sampled_from(["s1", "s2", None]), st.sampled_from(["flat", "wrapped",
                  "text"]), MESSAGE), max_size=12,
    )
)  # fmt: skip
def test_converting_a_log_keeps_what_the_reader_reads(
    records: list[tuple[str | None, str, dict[str, Any]]],
) -> None:
    """Whatever the log holds, each session's converted line reads as its messages read
    unconverted: the same calls and the same unread parts (the dropped notifications and the
    shortened requests and responses that answer no call change nothing)."""
    lines: list[str] = []
    sessions: dict[str, list[Any]] = {}
    for session, form, message in records:
        if form == "flat" and any(
            key in message for key in ("jsonrpc", "method", "result", "error")
        ):
            line = {"session_id": session, **message, "direction": "in"}
        elif form == "text":
            line = {"session_id": session, "message": json.dumps(message)}
        else:
            line = {"session_id": session, "message": message, "direction": "in"}
        flat = {key: line[key] for key in ("jsonrpc", "id", "method", "params", "result", "error")
                if key in line}  # fmt: skip
        lines.append(json.dumps(line))
        if session is not None:
            sessions.setdefault(session, []).append(flat or message)
    path = Path(tempfile.mkdtemp()) / "log.jsonl"
    path.write_text("".join(text + "\n" for text in lines), encoding="utf-8")
    try:
        if any(word in text for text in lines for word in ("NaN", "Infinity")):
            with pytest.raises(InputError, match=r"log\.jsonl:\d+: .*not valid JSON"):
                converted(path)  # NaN is no JSON: one error naming the line
            return
        converted_lines = {line["id"]: line for line in converted(path)}
    finally:
        shutil.rmtree(path.parent)
    assert list(converted_lines) == list(sessions)
    for session, messages in sessions.items():
        direct, via_log = read(messages), read_transcript(converted_lines[session])
        assert via_log.calls == direct.calls
        assert _reasons(via_log) == _reasons(direct)
        assert via_log.notes[1:] == direct.notes  # after "format detected: mcp"


def test_a_response_whose_id_a_call_and_a_request_share_is_kept_whole(tmp_path: Path) -> None:
    """Only a response that can answer no call is shortened: here the reader must see the
    content list to give the response to the call, not to the ping sharing its id."""
    messages = [
        {"jsonrpc": "2.0", "id": 0, "method": "tools/call", "params": {"name": "a"}},
        {"jsonrpc": "2.0", "id": 0, "method": "ping"},
        {"jsonrpc": "2.0", "id": 0, "result": {"content": [{"type": "text", "text": "A"}]}},
        {"jsonrpc": "2.0", "id": 0, "result": {}},
    ]
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps({"session_id": "s", "message": m}) + "\n" for m in messages))
    (line,) = converted(path)
    assert line["mcp"] == [
        *messages[:1],
        {"jsonrpc": "2.0", "id": 0, "method": "ping"},
        *messages[2:],
    ]
    assert as_plain(read_transcript(line)) == [{"name": "a", "args": {}, "id": "0", "result": "A"}]


def test_a_json_rpc_message_where_a_line_or_a_call_stands_is_refused_with_a_hint() -> None:
    """A log whose first line is an outputs line is read as outputs: its messages say how."""
    message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "a"}}
    with pytest.raises(OutputError, match="it looks like an MCP JSON-RPC message: put the"):
        parse_output({**message, "id": "s1"})
    with pytest.raises(OutputError, match="not a call but an MCP JSON-RPC message") as failure:
        parse_output({"id": "s1", "calls": [message]})
    assert failure.value.field == "calls[0]"
