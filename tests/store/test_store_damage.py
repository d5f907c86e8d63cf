"""A damaged results store (issue 25, item 6: after 4 KB in the middle of the file were
overwritten, `compare 1 2` failed with a `sqlite3.DatabaseError` traceback and `score --db`
still said "saved as run 5").

Saving runs `quick_check` first and refuses a damaged store in one line, exit status 2, with
nothing written; a read that fails on the damage is one line too, saying how to recover.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolscore.cli.app import cli, example_dir
from toolscore.errors import InputError
from toolscore.store import open_store
from toolscore.store.integrity import check_before_writing, is_damage

PAGE = 4096


def score_args(db: Path) -> list[str]:
    """`score --db` of the support example."""
    example = example_dir()
    return ["score", "--specs", str(example / "tools.yaml"), "--cases",
            str(example / "cases.jsonl"), "--outputs", str(example / "outputs.jsonl"),
            "--db", str(db)]  # fmt: skip


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A store holding the support example saved four times, its log checkpointed."""
    db = tmp_path / "results.db"
    for _ in range(4):
        assert CliRunner().invoke(cli, score_args(db)).exit_code == 0
    with sqlite3.connect(db) as raw:
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        assert raw.execute("PRAGMA page_size").fetchone()[0] == PAGE
    return db


def root_page(db: Path, name: str) -> int:
    """The first page of a table or index (numbered from 1)."""
    with sqlite3.connect(db) as raw:
        row = raw.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (name,))
        page: int = row.fetchone()[0]
    return page


def overwrite(db: Path, page: int) -> None:
    """Overwrite one 4 KB page of the file with bytes that are no b-tree page."""
    with db.open("r+b") as file:
        file.seek((page - 1) * PAGE)
        file.write(bytes(range(256)) * (PAGE // 256))


def runs_count(db: Path) -> int:
    """How many runs the `runs` table holds, read without toolscore."""
    with sqlite3.connect(db) as raw:
        count: int = raw.execute("SELECT count(*) FROM runs").fetchone()[0]
    return count


def one_line_error(args: list[str]) -> str:
    """The command's stderr, checked to be one line with exit status 2."""
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    return lines[0]


def test_saving_into_a_store_damaged_in_the_middle_is_refused(store: Path) -> None:
    # The reproducer: 4 KB overwritten in the middle of the file, on a page no read touches.
    middle = store.stat().st_size // PAGE // 2 + 1
    overwrite(store, middle)
    assert CliRunner().invoke(cli, ["compare", "1", "2", "--db", str(store)]).exit_code == 0
    line = one_line_error(score_args(store))
    assert "the results store is damaged" in line
    assert "refusing to write into it" in line
    assert "toolscore store recover" in line
    assert str(store) in line
    assert runs_count(store) == 4


def test_saving_when_the_results_table_is_damaged_is_refused(store: Path) -> None:
    overwrite(store, root_page(store, "results"))
    line = one_line_error(score_args(store))
    assert "refusing to write into it" in line
    assert runs_count(store) == 4


@pytest.mark.parametrize(
    "args",
    [
        ["compare", "1", "2"],
        ["show", "1"],
        ["show", "1", "--json"],
        ["rescore", "1", "--specs", str(example_dir() / "tools.yaml")],
    ],
)
def test_a_read_that_meets_the_damage_is_one_line(store: Path, args: list[str]) -> None:
    overwrite(store, root_page(store, "results"))
    line = one_line_error([*args, "--db", str(store)])
    assert "the results store is damaged" in line
    assert "recover what can be read" in line
    assert "Traceback" not in line
    assert runs_count(store) == 4


def test_the_library_refuses_a_damaged_store_before_writing(store: Path) -> None:
    overwrite(store, root_page(store, "results"))
    with pytest.raises(InputError, match="refusing to write into it"):
        open_store(store)
    with open_store(store, read_only=True) as opened:
        with pytest.raises(InputError, match="refusing to write into it"):
            check_before_writing(opened.db, store)
        with pytest.raises(InputError, match="damaged"), opened:
            list(opened.cases(1))


def test_an_intact_store_passes_the_check_and_other_errors_are_no_damage(store: Path) -> None:
    with open_store(store) as opened:
        check_before_writing(opened.db, store)
    assert not is_damage(sqlite3.OperationalError("database is locked"))
    assert not is_damage(ValueError("malformed"))


def damage_the_middle(db: Path) -> None:
    """The reproducer's damage: a page in the middle of the file, which no read touches."""
    overwrite(db, db.stat().st_size // PAGE // 2 + 1)


def count(db: Path, table: str) -> int:
    with sqlite3.connect(db) as raw:
        found: int = raw.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    return found


@pytest.fixture
def with_batch(store: Path, tmp_path: Path) -> tuple[Path, Path]:
    """The store with a labelling batch of run 1, then damaged; and a labels file for it."""
    assert CliRunner().invoke(cli, ["disagreements", "1", "--db", str(store)]).exit_code == 0
    with open_store(store) as opened:
        case_id = opened.db.execute("SELECT case_id FROM batch_cases LIMIT 1").fetchone()[0]
        opened.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    labels = tmp_path / "labels.jsonl"
    labels.write_text(f'{{"case_id": "{case_id}", "label": "correct"}}\n')
    damage_the_middle(store)
    return store, labels


@pytest.mark.parametrize(
    "args",
    [
        ["labels", "import", "1", "LABELS", "--labeller", "ann"],
        ["label", "1", "--port", "0"],  # the labelling page checks once, at start
        ["disagreements", "1"],
        ["rescore", "1", "--specs", str(example_dir() / "tools.yaml")],
    ],
)
def test_every_writer_refuses_a_damaged_store(
    with_batch: tuple[Path, Path], args: list[str]
) -> None:
    store, labels = with_batch
    before = {table: count(store, table) for table in ("runs", "batches", "labels")}
    line = one_line_error(
        [str(labels) if a == "LABELS" else a for a in args] + ["--db", str(store)]
    )
    assert "the results store is damaged" in line
    assert "refusing to write into it" in line
    assert "toolscore store recover" in line
    assert {table: count(store, table) for table in before} == before


def test_the_judgment_cache_and_a_migration_refuse_a_damaged_store(store: Path) -> None:
    damage_the_middle(store)
    with pytest.raises(InputError, match="refusing to write into it"):
        open_store(store)  # what `score` with remote rubrics opens for their judgments
    with sqlite3.connect(store) as raw:
        raw.execute("UPDATE schema_version SET version = version - 1")
    with pytest.raises(InputError, match="refusing to write into it"):
        open_store(store, read_only=True)  # a read that would migrate first


def test_reads_of_a_store_damaged_where_they_do_not_look_still_work(store: Path) -> None:
    damage_the_middle(store)
    for args in (["runs"], ["show", "1"], ["compare", "1", "2"]):
        assert CliRunner().invoke(cli, [*args, "--db", str(store)]).exit_code == 0
