"""The summary printed plainly (issue 30): when it does not go to a terminal, `score` prints
aligned text without rich, box characters or colour, and never folds a long value; the
tables' view and the plain one show the same cells, built once (`report.terminal`).

Golden runs live in `plain_summaries/NAME.json` (description, spec, cases, outputs, extra
arguments, exit status) beside the text `score` must print for them, `NAME.txt`. To rewrite
a golden text after a deliberate change, run with TOOLSCORE_WRITE_GOLDEN=1 (the test then
fails, naming the file it wrote) and read the diff.
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner, Result
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from toolscore.cli.app import cli
from toolscore.cli.summary import chosen_view
from toolscore.escape import printable
from toolscore.report.layout import Block, Line, Table
from toolscore.report.plain_view import cell_width, plain_lines, table_lines
from toolscore.report.rich_view import print_blocks
from toolscore.report.terminal import summary_blocks
from toolscore.run import RunOptions, score_files

GOLDEN = Path(__file__).parent / "plain_summaries"
NAMES = sorted(path.stem for path in GOLDEN.glob("*.json"))
BOX = re.compile("[\u2500-\u257f]")
"""Box-drawing characters: the rich tables' borders."""
VERSION = re.compile(r"toolscore \S+ \([a-z-]+\) · ")


def golden(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = orjson.loads((GOLDEN / f"{name}.json").read_bytes())
    return loaded


def write_inputs(tmp_path: Path, run: dict[str, Any]) -> list[str]:
    """The golden run's files in `tmp_path`, as `score`'s arguments."""
    (tmp_path / "tools.json").write_bytes(orjson.dumps(run["spec"]))
    for key in ("cases", "outputs"):
        lines = b"".join(orjson.dumps(line) + b"\n" for line in run[key])
        (tmp_path / f"{key}.jsonl").write_bytes(lines)
    return [
        "score", "--specs", str(tmp_path / "tools.json"), "--cases", str(tmp_path / "cases.jsonl"),
        "--outputs", str(tmp_path / "outputs.jsonl"), *run["args"],
    ]  # fmt: skip


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def normalised(text: str, tmp_path: Path) -> str:
    """`text` with the run's folder and the scorer's version and build written as
    placeholders, so that a golden text holds on any machine."""
    return VERSION.sub("toolscore VERSION · ", text.replace(str(tmp_path), "DIR"))


@pytest.mark.parametrize("name", NAMES)
def test_a_run_prints_its_golden_plain_summary(name: str, tmp_path: Path) -> None:
    run = golden(name)
    args = write_inputs(tmp_path, run)
    result = invoke(*args, "--summary", "plain")
    assert result.exit_code == run["exit_code"], result.output
    shown = normalised(result.stdout, tmp_path)
    expected = GOLDEN / f"{name}.txt"
    if os.environ.get("TOOLSCORE_WRITE_GOLDEN"):
        expected.write_text(shown, encoding="utf-8")
        pytest.fail(f"wrote {expected}: read the diff, then run without TOOLSCORE_WRITE_GOLDEN")
    assert shown == expected.read_text(encoding="utf-8"), run["description"]
    assert BOX.search(shown) is None
    assert "\x1b" not in shown  # no colour
    # Click's runner is no terminal: the default is the plain view, word for word.
    assert invoke(*args).stdout == result.stdout


def test_the_golden_runs_cover_what_they_say() -> None:
    """The control: each golden text holds the part of the summary it is there for."""
    texts = {name: (GOLDEN / f"{name}.txt").read_text(encoding="utf-8") for name in NAMES}
    assert set(texts) == {"failures", "rubrics_variants", "turns"}
    assert "\nFailing cases (first 3 of 3):\n" in texts["failures"]
    assert "\n  clustered by tag (4 clusters)" in texts["failures"]
    assert "\n  of which excused by a relaxation                1\n" in texts["failures"]
    assert "accuracy 0.5000 is below --fail-under 0.9" in texts["failures"]
    assert "\nTurns (2 conversations)\n" in texts["turns"]
    assert "\n  late: calls failed (first at turn 1)" in texts["turns"]
    assert "\n    turn 1: value_mismatch call 1 /amount" in texts["turns"]
    assert "\nRubrics (apart from the call score)\n" in texts["rubrics_variants"]
    assert "\nVariants (1 groups)\n" in texts["rubrics_variants"]
    assert "\nGroups whose variants disagree: 1\n  g: failed r2\n" in texts["rubrics_variants"]


def test_tables_draw_boxes_and_none_prints_only_the_lines_that_decide(tmp_path: Path) -> None:
    """`--summary tables` draws rich's tables even off a terminal; `none` prints no
    summary, but still why the run fails, with the same exit status and report JSON."""
    args = write_inputs(tmp_path, golden("failures"))
    reports = {}
    outputs = {}
    for mode in ("tables", "plain", "none"):
        report = tmp_path / f"{mode}.json"
        result = invoke(*args, "--summary", mode, "--json", str(report))
        assert result.exit_code == 1, result.output
        outputs[mode] = result.stdout
        reports[mode] = report.read_bytes()
    assert reports["tables"] == reports["plain"] == reports["none"]
    assert "┃ metric" in outputs["tables"]
    assert BOX.search(outputs["plain"]) is None
    assert outputs["none"] == (
        "accuracy 0.5000 is below --fail-under 0.9\n"
        "1 case without an output line (no-line), counted as failures: exit status 1 "
        "(`--missing exclude` leaves them out of every rate, for a partial run)\n"
    )
    assert outputs["plain"].endswith(outputs["none"])


def test_with_the_report_on_stdout_the_summary_goes_to_stderr_plainly(tmp_path: Path) -> None:
    args = write_inputs(tmp_path, golden("turns"))
    result = invoke(*args, "--json", "-")
    assert result.exit_code == 0
    assert orjson.loads(result.stdout)["summary"]["cases"] == 2
    assert "\nTurns (2 conversations)\n" in result.stderr
    assert BOX.search(result.stderr) is None


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(
    ("mode", "stream", "view"),
    [
        ("auto", _Stream(tty=True), "tables"),
        ("auto", _Stream(tty=False), "plain"),
        ("auto", object(), "plain"),  # a stream that cannot tell is no terminal
        ("tables", _Stream(tty=False), "tables"),
        ("plain", _Stream(tty=True), "plain"),
        ("none", _Stream(tty=True), "none"),
    ],
)
def test_auto_draws_tables_only_on_a_terminal(mode: str, stream: Any, view: str) -> None:
    assert chosen_view(mode, stream) == view


def test_a_plain_table_aligns_its_columns_and_keeps_long_values_whole() -> None:
    table = Table("Weakest tools")
    table.add_column("name")
    table.add_column("failed", justify="right")
    table.add_column("codes")
    long = "v" * 500
    table.add_row("refund", "12", long)
    table.add_row("東京", "3")  # wide characters take two columns each; a short row is padded
    table.caption = "tokens spent: 1,200"
    assert table_lines(table) == [
        "Weakest tools",
        "name    failed  codes",
        "refund      12  " + long,
        "東京         3",
        "tokens spent: 1,200",
    ]
    assert cell_width("東京") == 4
    assert cell_width("e\u0301") == 1  # a combining accent takes no column


def test_a_row_longer_than_its_columns_is_refused() -> None:
    table = Table("t")
    table.add_column("a")
    with pytest.raises(ValueError, match="a row of 2 cells in a table of 1"):
        table.add_row("x", "y")


def test_plain_lines_set_each_table_apart_and_split_multiline_blocks() -> None:
    table = Table("T")
    table.add_column("a")
    table.add_row("1")
    blocks: list[Block] = [Line("head\nsecond"), table, Line("after", style="red")]
    assert list(plain_lines(blocks)) == ["head", "second", "", "T", "a", "1", "", "after"]


def rich_rows(blocks: list[Block]) -> list[list[str]]:
    """The rows of the tables' view of `blocks` (drawn wide enough that nothing folds),
    headers included, each as its stripped cells."""
    console = Console(record=True, width=2000, color_system=None, markup=False, emoji=False)
    print_blocks(console, blocks)
    rows = []
    for line in console.export_text().splitlines():
        if line.startswith(("│", "┃")):
            rows.append([cell.strip() for cell in re.split("[│┃]", line.rstrip()[1:-1])])
    return rows


def plain_rows_match(blocks: list[Block]) -> None:
    """Each table row of `blocks` is one line of the plain view: its cells in order, each
    whole, only spaces between them; the tables' view has the same cells."""
    lines = list(plain_lines(blocks))
    expected: list[list[str]] = []
    at = 0
    for table in (block for block in blocks if isinstance(block, Table)):
        at = lines.index(table.title, at)
        grid = [tuple(column.header for column in table.columns), *table.rows]
        for offset, row in enumerate(grid, start=1):
            cells = [re.escape(cell.strip()) for cell in row if cell.strip()]
            assert re.fullmatch(" *" + "  +".join(cells), lines[at + offset]), row
            expected.append([cell.strip() for cell in row])
        at += len(grid)
    assert rich_rows(blocks) == expected


def golden_blocks(name: str, tmp_path: Path) -> list[Block]:
    """A golden run's summary blocks, scored in process."""
    run = golden(name)
    args = write_inputs(tmp_path, run)
    value = dict(zip(args[1::2], args[2::2], strict=False))
    options = RunOptions(
        specs_path=value["--specs"],
        cases_path=value["--cases"],
        outputs_path=value["--outputs"],
        cluster_by=value.get("--cluster-by"),
        workers=1,
    )
    result = score_files(options)
    return summary_blocks(result.specs, "0", result.summary, result.failures)


@pytest.mark.parametrize("name", NAMES)
def test_both_views_carry_the_same_cells_of_a_golden_summary(name: str, tmp_path: Path) -> None:
    blocks = golden_blocks(name, tmp_path)
    assert sum(isinstance(block, Table) for block in blocks) >= 5
    plain_rows_match(blocks)


_CELL = st.text(
    st.characters(codec="utf-8", exclude_characters="".join(map(chr, range(0x2500, 0x2580)))),
    max_size=12,
).map(lambda text: printable(text).strip())
"""A cell as a summary holds it: printable, no edge spaces (rich trims them when drawing),
no box-drawing character (they would read as borders here)."""


@st.composite
def tables(draw: st.DrawFn) -> Table:
    columns = draw(st.integers(1, 4))
    table = Table(draw(st.from_regex(r"[A-Z][a-z]{0,10}", fullmatch=True)))
    for index in range(columns):
        table.add_column(f"c{index}", justify=draw(st.sampled_from(["left", "right"])))
    for _ in range(draw(st.integers(0, 4))):
        table.add_row(*draw(st.lists(_CELL, min_size=columns, max_size=columns)))
    return table


@settings(max_examples=60)
@given(st.lists(tables(), min_size=1, max_size=3, unique_by=lambda table: table.title))
def test_both_views_carry_the_same_cells_of_any_table(drawn: list[Table]) -> None:
    plain_rows_match(list(drawn))
