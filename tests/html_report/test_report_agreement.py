"""The HTML pages say what the terminal says: a count is a count and a rate a rate on both
sides of `compare`, and calls, plan calls, plans and mismatches are numbered from 0 on the
HTML report and the labelling page as in the report JSON and the terminal."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path
from typing import Any

import orjson
from click.testing import CliRunner

from html_pages import run, score_args, write_inputs
from label_pages import MISMATCH_NOTE, client_for, make_batch, post_label
from toolscore.cli.app import cli
from toolscore.core.diagnosis import mismatch_line
from toolscore.core.model import Mismatch

ROW = re.compile(r'<tr data-metric="([^"]+)"[^>]*>(.*?)</tr>', re.S)


def cells(row_html: str) -> list[str]:
    """The texts of a table row's cells, tags left out."""
    found = re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row_html, re.S)
    return [unescape(re.sub(r"<[^>]+>", "", cell)).strip() for cell in found]


def terminal_table(output: str, title: str) -> dict[str, list[str]]:
    """The rows of the terminal table whose title starts with `title`, by first cell."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    rows: dict[str, list[str]] = {}
    for line in lines[start + 1 :]:
        if line.startswith("└"):
            break
        if line.startswith("│"):
            row = [cell.strip() for cell in line.strip("│").split("│")]
            rows.setdefault(row[0], row)  # the header's row comes first: the table's own
    return rows


def compare(db: str, *more: str) -> Any:
    """`toolscore compare 1 2` on a terminal wide enough that no table folds."""
    return CliRunner().invoke(
        cli, ["compare", "1", "2", "--db", db, *more], env={"COLUMNS": "240"},
        catch_exceptions=False,
    )  # fmt: skip


def two_runs(tmp_path: Path, silent: int) -> str:
    """Two stored runs of the same cases: in the second the agent makes no call on `silent`
    tool cases (missed calls). The store's path."""
    paths = write_inputs(tmp_path, passing=silent)
    db = str(tmp_path / "results.db")
    assert run(*score_args(paths), "--db", db).exit_code in (0, 1)
    lines = [orjson.loads(line) for line in paths["outputs"].read_text().splitlines()]
    for line in lines:
        if line["id"].startswith("ok-"):
            line["calls"] = []
    paths["outputs"].write_bytes(b"\n".join(map(orjson.dumps, lines)) + b"\n")
    assert run(*score_args(paths), "--db", db).exit_code in (0, 1)
    return db


def test_compare_shows_a_count_as_a_count_on_the_page_as_in_the_terminal(
    tmp_path: Path,
) -> None:
    # The reproducer: 15 missed calls read "0.0% -> 1500.0%, +1500.0 pts" on the page.
    db = two_runs(tmp_path, silent=15)
    page_path = tmp_path / "compare.html"
    shown = compare(db, "--html", str(page_path))
    assert shown.exit_code == 0, shown.output
    comparison = orjson.loads(compare(db, "--json").stdout_bytes)
    units = {m["metric"]: m["unit"] for m in comparison["metrics"]}
    counts = {"missed calls", "missing outputs"}
    assert {name for name, unit in units.items() if unit == "count"} == counts
    assert {unit for name, unit in units.items() if name not in counts} == {"rate"}
    rows = {name: cells(html) for name, html in ROW.findall(page_path.read_text())}
    terminal = terminal_table(shown.output, "Metrics")
    assert rows["missed calls"] == ["missed calls", "0", "\u2013", "15", "\u2013", "+15"]
    assert terminal["missed calls"] == ["missed calls", "0", "15", "+15"]
    assert rows["missing outputs"][-1] == terminal["missing outputs"][-1] == "+0"
    for metric in comparison["metrics"]:
        row, line = rows[metric["metric"]], terminal[metric["metric"]]
        if metric["unit"] == "count":
            assert not any("%" in cell or "pts" in cell for cell in row + line)
            continue
        # A rate: the same percentages and difference, in the same words, on both sides.
        assert line[1:] == [f"{row[1]} of {row[2]}", f"{row[3]} of {row[4]}", row[5]]
        assert row[5].endswith(" pts")


def test_compare_s_paired_rows_and_tool_moves_read_as_in_the_terminal(tmp_path: Path) -> None:
    db = two_runs(tmp_path, silent=3)
    page_path = tmp_path / "compare.html"
    shown = compare(db, "--html", str(page_path))
    html = page_path.read_text()
    paired = terminal_table(shown.output, "Paired on the")
    found = re.findall(r'<tr data-paired="([^"]+)"[^>]*>(.*?)</tr>', html, re.S)
    assert len(found) == 4
    for name, body in found:
        row = cells(body)
        line = paired[name]
        assert line[1:5] == row[1:5], name  # n, A, B and B - A
        bounds = row[5].split(" (")[0].removesuffix(" pts").split(" to ")
        assert line[5] == ("-" if bounds == ["\u2013"] else f"[{bounds[0]} pts, {bounds[1]} pts]")
    (tool,) = re.findall(r'<tr data-tool="refund"[^>]*>(.*?)</tr>', html, re.S)
    row = cells(tool)
    moved = terminal_table(shown.output, "Tools whose pass rate moved most")
    assert moved["refund"][1:] == [
        f"{row[2]} of {sum(map(int, row[1].split(' / ')))}",
        f"{row[4]} of {sum(map(int, row[3].split(' / ')))}",
        row[5],
    ]


def mismatch_items(page: str) -> list[str]:
    """Each mismatch line of a labelling page, as text, its values left out."""
    (found,) = re.findall(r'<ul class="mismatches">(.*?)</ul>', page, re.S)
    items = re.findall(r'<li>(.*?)(?:<div class="pair">.*?)?</li>', found, re.S)
    return [" ".join(unescape(re.sub(r"<[^>]+>", "", item)).split()) for item in items]


def test_the_labelling_page_numbers_calls_plans_and_mismatches_from_0(tmp_path: Path) -> None:
    # The reproducer: the page numbered calls "#1" and plans "Plan 1" where the report JSON,
    # the terminal and the exact-JSON reason ("call 0") count from 0.
    db = tmp_path / "results.db"
    make_batch(db)
    with client_for(db) as client:
        refund = client.get("/case/2").text
        assert "Plan 0 <span" in refund  # the compared plan, one of 2
        assert '<span class="index">plan call 0</span>' in refund
        assert '<span class="index">call 0</span>' in refund
        assert "<h3>Plan 1</h3>" in refund  # the other plan
        assert '<ol start="0">' in refund  # its calls, from 0
        assert "#1" not in refund
        for position in (2, 3):
            assert post_label(client, position=position, label="incorrect").status_code == 200
        by_terminal = {
            2: mismatch_line(Mismatch("value_mismatch", ("order_id",), "exact",
                                      message=MISMATCH_NOTE, call=0, plan_call=0)),
            3: mismatch_line(Mismatch("missing_call", message="lookup not made", plan_call=0)),
        }  # fmt: skip
        for position, line in by_terminal.items():
            assert mismatch_items(client.get(f"/case/{position}").text) == [line]
