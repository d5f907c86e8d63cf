"""`score --engine ray` in Ray's local mode (two CPUs, started once for the module) gives the
local run's report, summary and saved run, with `--env`, after an actor dies, and fails a
bad input line as the local run does."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from toolscore.cli.app import cli
from toolscore.engines.ray import EXIT_ONCE, LOCAL_HOST, LOCAL_ONLY

ROOT = Path(__file__).parents[2]
EXAMPLE = ROOT / "examples" / "support"
SPEC = str(EXAMPLE / "tools.yaml")
ENV = str(EXAMPLE / "env" / "tools.yaml")


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    """A local Ray cluster listening on this machine's loopback address only, for every
    test of the module (the switch is read when Ray is imported)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(LOCAL_ONLY, "0")
        ray = pytest.importorskip("ray")
        ray.init(
            num_cpus=2, include_dashboard=False, _node_ip_address=LOCAL_HOST, log_to_driver=False
        )
        try:
            assert ray.util.get_node_ip_address() == LOCAL_HOST
            yield
        finally:
            ray.shutdown()
    assert _ray_processes_gone(), "Ray left processes behind"


def _ray_processes() -> list[Any]:
    """The processes this test process started (Ray's: its servers, workers and agents)."""
    psutil = pytest.importorskip("psutil")
    return list(psutil.Process().children(recursive=True))


def _ray_processes_gone(seconds: float = 15) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not [p for p in _ray_processes() if p.is_running() and p.status() != "zombie"]:
            return True
        time.sleep(0.2)
    return False


def test_the_local_cluster_listens_on_the_loopback_address_only() -> None:
    psutil = pytest.importorskip("psutil")
    addresses = set()
    for process in _ray_processes():
        with contextlib.suppress(psutil.Error):
            for connection in process.net_connections("inet"):
                if connection.status == psutil.CONN_LISTEN:
                    addresses.add(connection.laddr.ip)
    assert addresses  # Ray's servers were found
    assert addresses <= {"127.0.0.1", "::ffff:127.0.0.1", "::1"}


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    """The support example, its cases repeated under new ids (so that there are several
    parts and batches), some outputs missing and one for no case."""
    cases = [json.loads(line) for line in (EXAMPLE / "cases.jsonl").read_text().splitlines()]
    outputs = {
        json.loads(line)["id"]: json.loads(line)
        for line in (EXAMPLE / "outputs.jsonl").read_text().splitlines()
    }
    case_lines, output_lines = [], []
    for copy in range(40):
        for case in cases:
            new_id = f"{case['id']}-{copy}"
            case_lines.append(json.dumps({**case, "id": new_id}))
            if case["id"] in outputs and (copy + len(case_lines)) % 17:
                output_lines.append(json.dumps({**outputs[case["id"]], "id": new_id}))
    output_lines.append(json.dumps({"id": "stray", "calls": []}))
    (tmp_path / "cases.jsonl").write_text("\n".join(case_lines) + "\n")
    (tmp_path / "outputs.jsonl").write_text("\n".join(output_lines) + "\n")
    return tmp_path / "cases.jsonl", tmp_path / "outputs.jsonl"


def _run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def _score(cases: Path, outputs: Path, report: Path, *more: str) -> Result:
    """A run of the files, which lack some outputs: exit status 1 (0 with --missing exclude)."""
    result = _run(
        "score", "--specs", SPEC, "--cases", str(cases), "--outputs", str(outputs),
        "--json", str(report), *more,
    )  # fmt: skip
    assert result.exit_code == (0 if "exclude" in more else 1), result.output
    return result


def _join(cases: Path, outputs: Path, out: Path, *more: str) -> Path:
    result = _run("join", "--cases", str(cases), "--outputs", str(outputs), "--out", str(out),
                  "--rows-per-part", "50", *more)  # fmt: skip
    assert result.exit_code == 0, result.output
    return out


def _same_but_engine(local: Path, remote: Path) -> None:
    """The two reports are the same bytes but for `"engine":"ray"` in the header."""
    ours = remote.read_bytes()
    head = ours[: ours.index(b',"summary":')]
    assert head.endswith(b',"engine":"ray"')
    assert ours.replace(b',"engine":"ray"', b"", 1) == local.read_bytes()


@pytest.mark.parametrize("fmt", ["jsonl", "parquet"])
def test_ray_gives_the_local_report_and_summary(
    files: tuple[Path, Path], tmp_path: Path, fmt: str
) -> None:
    local = _score(*files, tmp_path / "local.json", "--workers", "1")
    joined = _join(*files, tmp_path / "joined", "--format", fmt)
    remote = _run("score", "--specs", SPEC, "--engine", "ray", "--joined", str(joined),
                  "--json", str(tmp_path / "ray.json"))  # fmt: skip
    assert remote.exit_code == 1, remote.output  # outputs are missing
    assert remote.output == local.output  # the terminal summary
    _same_but_engine(tmp_path / "local.json", tmp_path / "ray.json")
    summary = json.loads((tmp_path / "ray.json").read_text())["summary"]
    assert summary["cases"] == 240
    assert summary["unmatched_outputs"] == 1
    assert summary["missing_outputs"] == 14  # one in 17 of the outputs left out
    assert summary["unmatched_output_ids"] == ["stray"]


def test_ray_leaves_out_missing_outputs_as_the_local_run_does(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    local = _score(*files, tmp_path / "local.json", "--missing", "exclude", "--workers", "2")
    remote = _score(*files, tmp_path / "ray.json", "--missing", "exclude", "--engine", "ray")
    assert remote.output == local.output
    _same_but_engine(tmp_path / "local.json", tmp_path / "ray.json")
    report = json.loads((tmp_path / "ray.json").read_text())
    assert report["summary"]["cases"] == len(report["cases"]) == 240 - 14
    assert report["summary"]["missing_policy"] == "exclude"
    assert len(report["summary"]["missing_output_ids"]) == 14


def test_ray_joins_the_two_files_first(files: tuple[Path, Path], tmp_path: Path) -> None:
    _score(*files, tmp_path / "local.json")
    _score(*files, tmp_path / "ray.json", "--engine", "ray")
    _same_but_engine(tmp_path / "local.json", tmp_path / "ray.json")


def test_ray_replays_against_the_environment(files: tuple[Path, Path], tmp_path: Path) -> None:
    local = _score(*files, tmp_path / "local.json", "--env", ENV)
    remote = _score(*files, tmp_path / "ray.json", "--env", ENV, "--engine", "ray")
    assert remote.output == local.output
    _same_but_engine(tmp_path / "local.json", tmp_path / "ray.json")
    assert "environment" in json.loads((tmp_path / "ray.json").read_text())


def test_ray_saves_the_run_the_local_run_saves(files: tuple[Path, Path], tmp_path: Path) -> None:
    db = str(tmp_path / "results.db")
    _score(*files, tmp_path / "local.json", "--db", db, "--label", "local")
    joined = _join(*files, tmp_path / "joined")
    remote = _run("score", "--specs", SPEC, "--engine", "ray", "--joined", str(joined),
                  "--db", db, "--label", "ray")  # fmt: skip
    assert remote.exit_code == 1, remote.output  # outputs are missing
    assert "saved as run 2" in remote.output
    shown = [json.loads(_run("show", str(run), "--json", "--db", db).output) for run in (1, 2)]
    for run in shown:
        del run["run"]
    assert shown[0] == shown[1]
    assert len(shown[1]["cases"]) == 240
    runs = json.loads(_run("runs", "--json", "--db", db).output)
    assert {run["cases_sha256"] for run in runs} == {runs[0]["cases_sha256"]}


def test_an_actor_killed_mid_run_is_restarted_and_the_report_is_complete(
    files: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _score(*files, tmp_path / "local.json")
    marker = tmp_path / "killed"
    monkeypatch.setenv(EXIT_ONCE, str(marker))
    joined = _join(*files, tmp_path / "joined")
    remote = _run("score", "--specs", SPEC, "--engine", "ray", "--joined", str(joined),
                  "--json", str(tmp_path / "ray.json"))  # fmt: skip
    assert remote.exit_code == 1, remote.output  # outputs are missing
    assert marker.exists()  # an actor did end its process
    _same_but_engine(tmp_path / "local.json", tmp_path / "ray.json")


def test_a_bad_line_fails_the_run_as_locally_and_nothing_is_saved(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    cases, outputs = files
    lines = cases.read_text().splitlines()
    lines[150] = lines[150].replace('"plans": [', '"plans": {"bad": [', 1) + "}"
    cases.write_text("\n".join(lines) + "\n")
    db = str(tmp_path / "results.db")
    local = _run("score", "--specs", SPEC, "--cases", str(cases), "--outputs", str(outputs),
                 "--workers", "1")  # fmt: skip
    remote = _run("score", "--specs", SPEC, "--cases", str(cases), "--outputs", str(outputs),
                  "--engine", "ray", "--db", db, "--json", str(tmp_path / "r.json"))  # fmt: skip
    assert local.exit_code == remote.exit_code == 2
    assert remote.output == local.output
    assert remote.output.startswith(f"toolscore: error: {cases}:151: ")
    assert remote.output.count("\n") == 1
    assert not (tmp_path / "r.json").exists()
    assert json.loads(_run("runs", "--json", "--db", db).output) == []
