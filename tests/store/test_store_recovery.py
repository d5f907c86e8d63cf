"""`toolscore store recover` (issue 25, item 6): what a damaged store still holds, copied
into a new store, and what could not be read listed, never a partial run."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner, Result

from toolscore.cli.app import cli, example_dir
from toolscore.store.recovery import recover

PAGE = 4096
TABLES = ("contents", "content_chunks", "runs", "results", "rubric_results", "batches",
          "batch_cases", "labels", "judgments")  # fmt: skip


def invoke(args: list[str]) -> Result:
    """The command's result, checked to have ended without a traceback."""
    result = CliRunner().invoke(cli, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def save_example(db: Path, times: int = 4) -> None:
    """The reproducer's store: the support example saved `times` times, log checkpointed."""
    example = example_dir()
    for _ in range(times):
        args = ["score", "--specs", str(example / "tools.yaml"), "--cases",
                str(example / "cases.jsonl"), "--outputs", str(example / "outputs.jsonl"),
                "--db", str(db)]  # fmt: skip
        assert invoke(args).exit_code == 0
    checkpoint(db)


def checkpoint(db: Path) -> None:
    with sqlite3.connect(db) as raw:
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        assert raw.execute("PRAGMA page_size").fetchone()[0] == PAGE


def rows(db: Path, table: str) -> list[tuple[object, ...]]:
    """Every row of a table, sorted, read without toolscore."""
    with sqlite3.connect(db) as raw:
        return sorted(raw.execute(f"SELECT * FROM {table}").fetchall(), key=repr)


def quick_check(db: Path) -> str:
    with sqlite3.connect(db) as raw:
        result: str = raw.execute("PRAGMA quick_check").fetchone()[0]
    return result


def test_an_intact_store_is_recovered_whole(tmp_path: Path) -> None:
    db, new = tmp_path / "s.db", tmp_path / "new.db"
    save_example(db)
    result = invoke(["store", "recover", str(db), "--to", str(new)])
    assert result.exit_code == 0, result.output
    assert result.output.strip().splitlines() == [
        f"recovered 4 of 4 runs, 0 of 0 batches, 0 of 0 labels, 0 judgments, 3 stored files "
        f"into {new} (quick_check: ok)"
    ]
    for table in TABLES:
        assert rows(new, table) == rows(db, table), table


def test_the_reproducer_recovers_what_it_can_into_a_store_that_works(tmp_path: Path) -> None:
    db, new = tmp_path / "s.db", tmp_path / "new.db"
    save_example(db)
    size = db.stat().st_size
    with db.open("r+b") as file:
        file.seek(size // 2)
        file.write(b"\xff" * 4096)
    result = invoke(["store", "recover", str(db), "--to", str(new), "--json"])
    assert result.exit_code in (0, 1), result.output
    report = orjson.loads(result.stdout)
    assert report["quick_check"] == "ok" == quick_check(new)
    recovered = report["runs"]["recovered"]
    assert recovered >= 2
    assert len([line for line in report["lost"] if line.startswith("run ")]) == 4 - recovered
    runs = invoke(["runs", "--db", str(new), "--json"])
    assert runs.exit_code == 0
    ids = [run["id"] for run in orjson.loads(runs.stdout)]
    assert len(ids) == recovered
    assert invoke(["compare", str(ids[0]), str(ids[1]), "--db", str(new)]).exit_code == 0


def test_refuses_an_existing_target_and_a_file_that_is_no_store(tmp_path: Path) -> None:
    db, new = tmp_path / "s.db", tmp_path / "new.db"
    save_example(db, 1)
    new.write_bytes(b"")
    result = invoke(["store", "recover", str(db), "--to", str(new)])
    assert result.exit_code == 2
    assert "already exists" in result.output
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a store" * 1000)
    result = invoke(["store", "recover", str(junk), "--to", str(tmp_path / "other.db")])
    assert result.exit_code == 2
    assert not (tmp_path / "other.db").exists()


def distinct_runs(tmp_path: Path, db: Path, runs: int = 3, cases: int = 150) -> None:
    """`runs` runs scored from cases files of their own ids (r1-..., r2-...), large enough
    that each run's results fill pages no other run's do."""
    example = example_dir()
    case_lines = (example / "cases.jsonl").read_bytes().splitlines()
    output_lines = {orjson.loads(line)["id"]: line for line in
                    (example / "outputs.jsonl").read_bytes().splitlines()}  # fmt: skip
    for run in range(1, runs + 1):
        cases_file, outputs_file = tmp_path / f"c{run}.jsonl", tmp_path / f"o{run}.jsonl"
        with cases_file.open("wb") as c, outputs_file.open("wb") as o:
            for number in range(cases):
                case = orjson.loads(case_lines[number % len(case_lines)])
                output = orjson.loads(output_lines[case["id"]])
                case["id"] = output["id"] = f"r{run}-case-{number:04d}-{case['id']}"
                c.write(orjson.dumps(case) + b"\n")
                o.write(orjson.dumps(output) + b"\n")
        args = ["score", "--specs", str(example / "tools.yaml"), "--cases", str(cases_file),
                "--outputs", str(outputs_file), "--db", str(db)]  # fmt: skip
        assert invoke(args).exit_code == 0
    checkpoint(db)


def page_of(db: Path, text: bytes, others: tuple[bytes, ...]) -> int:
    """A page (numbered from 1) holding `text` and none of `others`."""
    data = db.read_bytes()
    for index in range(len(data) // PAGE):
        page = data[index * PAGE : (index + 1) * PAGE]
        if text in page and not any(other in page for other in others):
            return index + 1
    raise AssertionError(f"no page holds {text!r} alone")


def test_damage_to_one_runs_results_loses_exactly_that_run(tmp_path: Path) -> None:
    db, new = tmp_path / "s.db", tmp_path / "new.db"
    distinct_runs(tmp_path, db)
    page = page_of(db, b"r2-case-0100", (b"r1-case-", b"r3-case-"))
    intact = tmp_path / "intact.db"
    intact.write_bytes(db.read_bytes())
    with db.open("r+b") as file:
        file.seek((page - 1) * PAGE)
        file.write(bytes(range(256)) * (PAGE // 256))
    result = invoke(["store", "recover", str(db), "--to", str(new)])
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert lines[0].startswith("run 2: lost (")
    assert "of 150 results readable" in lines[0]
    assert lines[-1].startswith("recovered 2 of 3 runs")
    assert [run[0] for run in rows(new, "runs")] == [1, 3]
    assert quick_check(new) == "ok"
    for table in ("results", "runs", "contents", "content_chunks"):
        assert rows(new, table) == [row for row in rows(intact, table) if row[0] != 2], table


def test_the_library_reports_the_same(tmp_path: Path) -> None:
    db, new = tmp_path / "s.db", tmp_path / "new.db"
    save_example(db, 2)
    recovery = recover(db, new)
    assert recovery.runs_lost == 0
    assert recovery.copied["results"] == 12
    assert recovery.to_json()["runs"] == {"seen": 2, "recovered": 2}


@pytest.mark.parametrize("seed", range(20))
def test_random_damage_never_gives_a_traceback(tmp_path: Path, seed: int) -> None:
    db, new = tmp_path / "s.db", tmp_path / "new.db"
    save_example(db)
    chance = random.Random(seed)
    pages = db.stat().st_size // PAGE
    with db.open("r+b") as file:
        file.seek(chance.randrange(pages) * PAGE + chance.randrange(PAGE // 2))
        file.write(chance.randbytes(PAGE))
    for args in (["runs"], ["show", "1"], ["show", "latest", "--json"], ["compare", "1", "2"]):
        assert invoke([*args, "--db", str(db)]).exit_code in (0, 2)
    result = invoke(["store", "recover", str(db), "--to", str(new)])
    assert result.exit_code in (0, 1, 2)
    if result.exit_code != 2:
        assert quick_check(new) == "ok"
        assert invoke(["runs", "--db", str(new)]).exit_code == 0
