"""Write the Parquet fixtures (with pyarrow itself) and their JSON Lines twins.

The same cases and outputs are written three ways: as JSON Lines (`cases.jsonl`,
`outputs.jsonl`), as Parquet with nested columns (structs and lists: `*_nested.parquet`; a
plan call's `args` there is JSON text), and as Parquet whose structured columns hold JSON text
(`*_text.parquet`). Scoring any of them
must give the same report (tests/inputs/test_parquet.py). The malformed files: one without an `id`
column, one whose JSON text does not parse on row 2, one cut short. It also writes the README's
example, examples/parquet/, from examples/transcripts/ (cases with nested plans, outputs with
their OpenAI Chat messages as JSON text). Run from the repository root:
`python tests/parquet/make_parquet_fixtures.py`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa  # type: ignore[import-untyped]
import pyarrow.parquet as pq  # type: ignore[import-untyped]

HERE = Path(__file__).parent
EXAMPLES = HERE.parent.parent / "examples"

CASES: list[dict[str, Any]] = [
    {
        "id": "refund-1",
        "prompt": "Refund 12.50 EUR on order-77",
        "tags": ["refunds"],
        "plans": [
            [{"name": "refund", "args": {"order_id": "order-77", "amount": 12.5}}],
            [
                {"id": "look", "name": "get_order", "args": {"order_id": "order-77"}},
                {
                    "name": "refund",
                    "args": {"order_id": {"$ref": "look#/order_id"}, "amount": 12.5},
                },
            ],
        ],
    },
    {
        "id": "lookup-2",
        "prompt": "Where is order-9?",
        "tags": ["lookups", "orders"],
        "plans": [[{"name": "get_order", "args": {"order_id": "order-9"}}]],
    },
    {"id": "thanks", "prompt": "thanks, that is all", "plans": []},
    {
        "id": "chat-4",
        "prompt": "Refund order-5 in full",
        "plans": [[{"name": "refund", "args": {"order_id": "order-5", "amount": 30}}]],
    },
]
"""Cases as JSON Lines writes them; `thanks` has no tags (a null in Parquet)."""

REFUND_5 = json.dumps({"order_id": "order-5", "amount": 30})

OUTPUTS: list[dict[str, Any]] = [
    {
        "id": "refund-1",
        "calls": [
            {"name": "get_order", "args": {"order_id": "order-77"}, "id": "c1",
             "result": {"order_id": "order-77"}},
            {"name": "refund", "args": {"order_id": "order-77", "amount": 12.5}, "id": "c2"},
        ],
        "response": "Done, 12.50 EUR refunded.",
    },
    {
        "id": "lookup-2",
        "calls": [{"name": "get_order", "args": {"order_id": "ORDER-9"}, "id": "c3"}],
        "response": "It is on its way.",
    },
    {"id": "thanks", "calls": [], "response": "You are welcome."},
    {
        "id": "chat-4",
        "messages": [
            {"role": "user", "content": "Refund order-5 in full"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "t1", "type": "function",
                 "function": {"name": "refund", "arguments": REFUND_5}},
            ]},
            {"role": "tool", "tool_call_id": "t1", "content": "refunded"},
            {"role": "assistant", "content": "Refunded 30."},
        ],
    },
]  # fmt: skip
"""Outputs: plain `calls` lines and an OpenAI Chat transcript (lines of one or the other)."""

CASES_COLUMNS = ("id", "prompt", "tags", "plans")
OUTPUTS_COLUMNS = ("id", "calls", "messages", "response")


def _column(rows: list[dict[str, Any]], name: str) -> list[Any]:
    return [row.get(name) for row in rows]


def nested(rows: list[dict[str, Any]], columns: tuple[str, ...]) -> pa.Table:
    """The rows as a table of nested columns, as pyarrow infers them (a struct's fields are
    the union of the keys seen; a key a row lacks is a null)."""
    return pa.table({name: pa.array(_column(rows, name)) for name in columns})


def args_as_text(cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Cases whose plan calls hold their `args` as JSON text: a `$ref` marker and a plain
    value cannot share a struct field, so nested plans keep each call's arguments as text."""
    return [
        {**case, "plans": [
            [{**call, "args": json.dumps(call["args"])} for call in plan] for plan in case["plans"]
        ]}
        for case in cases
    ]  # fmt: skip


def as_text(rows: list[dict[str, Any]], columns: tuple[str, ...], text: set[str]) -> pa.Table:
    """The rows as a table whose `text` columns hold JSON text (strings)."""
    table = {}
    for name in columns:
        values = _column(rows, name)
        if name in text:
            values = [None if v is None else json.dumps(v) for v in values]
        table[name] = pa.array(values)
    return pa.table(table)


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))


def build(out: Path) -> None:
    """Write every fixture into `out`."""
    write_jsonl(out / "cases.jsonl", CASES)
    write_jsonl(out / "outputs.jsonl", OUTPUTS)
    pq.write_table(nested(args_as_text(CASES), CASES_COLUMNS), out / "cases_nested.parquet")
    pq.write_table(nested(OUTPUTS, OUTPUTS_COLUMNS), out / "outputs_nested.parquet")
    pq.write_table(as_text(CASES, CASES_COLUMNS, {"tags", "plans"}), out / "cases_text.parquet")
    pq.write_table(
        as_text(OUTPUTS, OUTPUTS_COLUMNS, {"calls", "messages"}), out / "outputs_text.parquet"
    )
    # malformed variants
    pq.write_table(pa.table({"case": ["refund-1"], "plans": ["[]"]}), out / "cases_no_id.parquet")
    bad = as_text(CASES, CASES_COLUMNS, {"tags", "plans"}).to_pylist()
    bad[1]["plans"] = '[[{"name": "get_order", "args": {"order_id": }}]]'
    pq.write_table(pa.Table.from_pylist(bad), out / "cases_bad_json.parquet")
    whole = (out / "outputs_nested.parquet").read_bytes()
    (out / "outputs_cut.parquet").write_bytes(whole[: len(whole) // 2])


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def build_example(out: Path) -> None:
    """The README's example: examples/transcripts/ as Parquet (the cases without their
    prompts, which are text in one case and messages in another)."""
    cases = read_jsonl(EXAMPLES / "transcripts" / "cases.jsonl")
    outputs = read_jsonl(EXAMPLES / "transcripts" / "outputs-openai.jsonl")
    pq.write_table(nested(cases, ("id", "plans")), out / "cases.parquet")
    pq.write_table(as_text(outputs, ("id", "messages"), {"messages"}), out / "outputs.parquet")


if __name__ == "__main__":
    build(HERE)
    (EXAMPLES / "parquet").mkdir(exist_ok=True)
    build_example(EXAMPLES / "parquet")
