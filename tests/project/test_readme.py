"""The README works as written: every block of commands runs where it says, its files load
with toolscore's own loaders, and the verdicts it describes are the ones the commands give."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shlex
import shutil
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from readme_blocks import HEREDOC, README, ROOT, blocks, heredocs
from toolscore import load_specs, read_cases, read_outputs
from toolscore.cli.app import cli
from toolscore.inputs.cases import parse_case
from toolscore.inputs.converted import converted_inputs
from toolscore.schemas import shipped
from toolscore.specs.loading import parse_specs

HEREDOC_START = re.compile(r"cat > \S+ <<'EOF'")
PLACE = re.compile(r"# run in: (.+)")

NOT_RUN = {
    "make demo": "builds .venv and installs toolscore; test_cli runs the demo itself, "
    "test_build what make does",
    "make test": "runs this very suite",
    "python -m pip install pytest": "installs pytest, which runs this suite",
    "toolscore label 1 --labeller ann": "serves the page until stopped; test_label_web drives it",
    "python -m pytest test_agent.py": "tests/scoring/test_check_readme.py runs it with pytester",
    "python -m pytest --toolscore-cases cases.jsonl --toolscore-outputs outputs.jsonl "
    "--junitxml=cases.xml": "tests/scoring/test_check_readme.py runs it with pytester",
    "inspect score logs/*.eval --scorer toolscore/tool_calls -S specs=examples/support/tools.yaml "
    "--action overwrite --output-file rescored.eval": "tests/integrations/test_inspect_scorer.py "
    "runs it in a shell, after the Inspect example that writes the log",
}
"""README commands the test does not run, each with the reason (and each must be in it)."""

EXIT_STATUS = {
    "toolscore score --specs bfcl/parallel/tools.yaml --cases bfcl/parallel/cases.jsonl "
    "--outputs bfcl/parallel/outputs.jsonl": (
        1,
        "the stand-in result file has no answer for parallel_multiple_0: a missing output",
    ),
}
"""README commands that end with another exit status than 0 here, each with the reason."""


def commands(block: str) -> Iterator[str]:
    """The block's commands: continued lines joined, heredocs kept whole, `&&` split."""
    lines = iter(block.replace("\\\n", " ").splitlines())
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if HEREDOC_START.fullmatch(line):
            body = [line]
            for following in lines:
                body.append(following)
                if following == "EOF":
                    break
            yield "\n".join(body) + "\n"
            continue
        yield from (part.strip() for part in line.split("&&"))


ACTIVATE = ". .venv/bin/activate"
"""The README's command that puts `make demo`'s toolscore on PATH, run in the repository root."""


class Shell:
    """Runs README commands in-process, in the places the README names, as one shell session
    of a reader who follows the README from its start: `toolscore` is found only once the
    README has made .venv (`make demo`) and activated it. Every file it writes is inside
    `home`, a temporary folder, never the repository."""

    def __init__(self, places: dict[str, Path], runner: CliRunner, home: Path) -> None:
        self.places = places
        self.runner = runner
        self.home = home.resolve()
        self.outputs: dict[str, str] = {}
        self.made = False
        """Whether `make demo` ran (the README's first command)."""
        self.activated = False
        """Whether .venv is activated: `toolscore` and `python` on PATH."""

    def enter(self, block: str) -> None:
        """Go where the block's first line says it runs."""
        first = block.splitlines()[0]
        found = PLACE.fullmatch(first)
        assert found, f"the README block does not say where it runs: {first!r}"
        assert found.group(1) in self.places, f"unknown place {found.group(1)!r}"
        os.chdir(self.places[found.group(1)])

    def run_block(self, block: str) -> None:
        self.enter(block)
        for command in commands(block):
            self.run(command)

    def run(self, command: str) -> None:
        here = Path.cwd().resolve()
        assert here.is_relative_to(self.home), f"{command!r} would run in {here}, not in a test"
        heredoc = HEREDOC.fullmatch(command)
        if heredoc:
            Path(heredoc.group(1)).write_text(heredoc.group(2) + "\n")
            return
        words = shlex.split(command, comments=True)
        plain = " ".join(words)
        self.made = self.made or plain == "make demo"
        if plain in NOT_RUN:
            return
        if plain in (ACTIVATE, ACTIVATE.replace(".", "source", 1)):
            assert here == self.places["the repository root"].resolve(), (
                f"{plain!r} runs in {here}, where .venv is not"
            )
            assert self.made, f"{plain!r} before `make demo` made .venv"
            self.activated = True
        elif words[0] == "mkdir":
            Path(words[1]).mkdir()
        elif words[0] == "cd":
            os.chdir(words[1])
        elif words[0] == "toolscore":
            assert self.activated, f"{plain!r}: toolscore is not on PATH (.venv not activated)"
            target = words[-1] if len(words) > 2 and words[-2] == ">" else None
            result = self.runner.invoke(cli, words[1:-2] if target else words[1:])
            status = EXIT_STATUS.get(plain, (0, ""))[0]
            assert result.exit_code == status, f"{plain}\n{result.output}"
            self.outputs[plain] = result.output
            if target is not None:  # `toolscore ... > FILE`: its standard output, written
                Path(target).write_text(result.stdout)
        else:
            raise AssertionError(f"the README runs {plain!r}, which this test does not know")


@pytest.fixture
def shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Shell:
    """A stand-in repository root (with the real examples), and BFCL's files laid out as the
    README says."""
    monkeypatch.delenv("TOOLSCORE_DB", raising=False)
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "repo"
    root.mkdir()
    (root / "examples").symlink_to(ROOT / "examples")
    bfcl = tmp_path / "bfcl-files"
    fixtures = ROOT / "tests" / "bfcl"
    for source, target in (
        ("data.json", "BFCL_v4_parallel.json"),
        ("possible_answer.json", "possible_answer/BFCL_v4_parallel.json"),
        ("results_fc.json", "result/MODEL/BFCL_v4_parallel_result.json"),
    ):
        (bfcl / target).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(fixtures / source, bfcl / target)
    places = {
        "the repository root": root,
        "tour/": root / "tour",
        "the folder with BFCL's files": bfcl,
    }
    return Shell(places, CliRunner(), tmp_path)


def test_every_command_runs_where_the_readme_says(shell: Shell) -> None:
    for block in blocks("sh"):
        shell.run_block(block)
    tour = shell.places["tour/"]
    # the library's example; tests/scoring/test_check_readme.py runs the other Python blocks
    (python,) = [block for block in blocks("python") if "import load_specs, read_cases" in block]
    shell.enter(python)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(python, "README.md", "exec"), {})  # our own README's example
    assert printed.getvalue().startswith("week [\"expected an integer, got string '7'\"]")

    report = json.loads((tour / "report.json").read_text())
    for page in ("report.html", "run2.html", "from-json.html", "compare.html"):
        html = (tour / page).read_text()
        assert html.lower().startswith("<!doctype html>"), page
        assert "</html>" in html, page
    for name in ("spec", "cases"):  # the editor section's schemas, by `>` and by --out
        assert (tour / f"{name}.schema.json").read_text() == shipped(name)
    desk = json.loads((tour / "desk.json").read_text())  # the rubric section's run
    assert desk["summary"]["accuracy"] == 1.0
    assert desk["summary"]["rubrics"]["per_rubric"]["names_order"]["pass_rate"]["passed"] == 1
    assert [c["rubrics"][0]["passed"] for c in desk["cases"]] == [True, False]  # r2 names no order
    cases = {c["id"]: c for c in report["cases"]}
    assert {i for i, c in cases.items() if c["passed"]} == {"paris", "two-cities", "hello"}
    assert {i for i, c in cases.items() if c["baselines"]["exact"]} == {"hello"}
    assert {i for i, c in cases.items() if c["baselines"]["lowercase"]} == {
        "paris", "two-cities", "hello",
    }  # fmt: skip
    (mismatch,) = cases["week"]["mismatches"]
    line = (
        f"{mismatch['code']} call 0 {mismatch['path']} [{mismatch['rule']}]: {mismatch['message']}"
    )
    assert f"`{line}`" in README
    lenient = {(r["argument"], r["kind"]) for r in report["lenient_rules"]}
    assert lenient == {("city", "casefold"), ("unit", "enum")}  # as the tour says

    (excerpt,) = [json.loads(b) for b in blocks("json") if '"mismatches"' in b]
    week = dict(cases["week"], mismatches=[dict(mismatch, message="...")])
    assert excerpt == week

    assert "week (plan 0): passed" in shell.outputs["toolscore show 2 --case week"]
    assert "label 'v1 (rescore of run 1)'" in shell.outputs["toolscore show 2 --case week"]
    assert "1 fail -> pass" in shell.outputs["toolscore compare 1 2"]
    assert "days" in shell.outputs["toolscore spec-diff tools.yaml tools-new.yaml"]
    _check_first_spec(shell, tour)
    assert shell.outputs["toolscore lint --specs tools.yaml --cases cases.jsonl"].endswith(
        "0 errors, 0 warnings\n"
    )
    replayed = shell.outputs[
        "toolscore lint --specs examples/support/env/tools.yaml --cases "
        "examples/support/env/cases.jsonl --env"
    ]  # as the tour says: no error, one warning, about status-misread's goal
    assert replayed.endswith("0 errors, 1 warnings\n")
    assert "case 'status-misread': the goal state is the initial state" in replayed
    traced = (
        "toolscore score --specs tools.yaml --cases trace-cases.jsonl --outputs traces.jsonl "
        "--group-by gen_ai.conversation.id --emit-otel verdicts.jsonl"
    )
    assert re.search(r"\naccuracy +100\.0% +1/1 ", shell.outputs[traced])  # piped: plain
    (verdicts,) = (tour / "verdicts.jsonl").read_text().splitlines()
    assert '"traceId":"5b8efff798038103d269b633813fc60c"' in verdicts.replace(" ", "")

    audited = shell.outputs[
        "toolscore audit --specs examples/support/tools.yaml --cases examples/support/cases.jsonl "
        "--seed 1"
    ]  # as "Can the spec be trusted?" says
    assert "bad answers: 46 planted, 46 caught, 0 forgiven" in audited
    assert "harmless variants: 18 planted, 18 passed, 0 failed" in audited
    suggested = shell.outputs["toolscore suggest 1 --batch 1"]
    assert suggested.startswith("suggestions for run 1 and batch 1: "), suggested

    assert (shell.places["the folder with BFCL's files"] / "bfcl/parallel/tools.yaml").is_file()


def _check_first_spec(shell: Shell, tour: Path) -> None:
    """As "Your first spec" says: the draft's one guess, and the side file's run passing the
    tour's three cases."""
    drafted = yaml.safe_load((tour / "drafted.yaml").read_text())["tools"]["get_weather"]["args"]
    assert drafted["city"]["reason"].startswith("draft: review: exact unless")
    assert shell.outputs["toolscore lint --specs drafted.yaml --cases cases.jsonl"].endswith(
        "0 errors, 1 warnings\n"
    )
    side = json.loads((tour / "side.json").read_text())
    assert {c["id"] for c in side["cases"] if c["passed"]} == {"paris", "two-cities", "hello"}


def test_the_shell_finds_toolscore_only_after_the_readme_activates_it(shell: Shell) -> None:
    """The reproducer: after `make demo`, a new shell has no `toolscore` on PATH."""
    shell.enter("# run in: the repository root")
    shell.run("make demo")
    with pytest.raises(AssertionError, match="toolscore is not on PATH"):
        shell.run("toolscore --version")
    shell.run("mkdir elsewhere")
    os.chdir("elsewhere")
    with pytest.raises(AssertionError, match=r"where \.venv is not"):
        shell.run(ACTIVATE)
    shell.enter("# run in: the repository root")
    shell.run(ACTIVATE)
    shell.run("toolscore --version")


def test_the_readme_activates_the_venv_before_its_first_toolscore_command() -> None:
    first_block = next(block for block in blocks("sh") if "toolscore " in block)
    assert ACTIVATE in first_block.split("toolscore ")[0]


def test_the_shell_writes_nothing_outside_its_temporary_folder(
    shell: Shell, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A README heredoc (`cat > trace-cases.jsonl <<'EOF'`) run from the repository itself
    would leave its file there."""
    monkeypatch.chdir(ROOT)
    with pytest.raises(AssertionError, match="not in a test"):
        shell.run("cat > trace-cases.jsonl <<'EOF'\n{}\nEOF\n")
    assert not (ROOT / "trace-cases.jsonl").exists()


def test_every_command_left_out_is_in_the_readme() -> None:
    written = {
        " ".join(shlex.split(command, comments=True))
        for block in blocks("sh")
        for command in commands(block)
        if not HEREDOC.fullmatch(command)
    }
    assert set(NOT_RUN) <= written
    assert set(EXIT_STATUS) <= written


def test_every_file_the_readme_writes_loads(tmp_path: Path) -> None:
    files = heredocs()
    assert set(files) == {
        "tools.yaml", "cases.jsonl", "outputs.jsonl", "tools-new.yaml",
        "desk.yaml", "desk-cases.jsonl", "desk-outputs.jsonl", "pytest.ini", "test_agent.py",
        "traces.jsonl", "trace-cases.jsonl", "weather-tools.json", "weather-rules.yaml",
    }  # fmt: skip
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    specs = load_specs(tmp_path / "tools.yaml")
    load_specs(tmp_path / "tools-new.yaml")
    assert len(list(read_cases(tmp_path / "cases.jsonl", specs))) == 4
    assert len(list(read_outputs(tmp_path / "outputs.jsonl"))) == 4
    desk = load_specs(tmp_path / "desk.yaml")
    assert len(list(read_cases(tmp_path / "desk-cases.jsonl", desk))) == 2
    assert len(list(read_outputs(tmp_path / "desk-outputs.jsonl"))) == 2
    assert len(list(read_cases(tmp_path / "trace-cases.jsonl", specs))) == 1
    export = converted_inputs(
        str(tmp_path / "trace-cases.jsonl"),
        str(tmp_path / "traces.jsonl"),
        "gen_ai.conversation.id",
    )
    with export as (_, outputs):
        (trace,) = read_outputs(outputs)  # the collector export: one trace, one output
    assert trace.case_id == "paris"
    assert [call.name for call in trace.calls] == ["get_weather"]


def test_the_readmes_judge_rubric_loads(tmp_path: Path) -> None:
    (snippet,) = [b for b in blocks("yaml") if "kind: judge" in b]
    spec = yaml.safe_load(snippet)
    spec["tools"] = {"refund": {"args": {"note": {"kind": "text", "rubric": "courteous"}}}}
    (tmp_path / "tools.yaml").write_text(yaml.safe_dump(spec))
    loaded = load_specs(tmp_path / "tools.yaml")
    assert loaded.rubric_uses


def test_the_readmes_editor_snippets_name_the_schema_it_writes() -> None:
    (snippet,) = [b for b in blocks("yaml") if "yaml-language-server" in b]
    assert snippet.splitlines()[0] == "# yaml-language-server: $schema=./spec.schema.json"
    assert "toolscore schema spec > spec.schema.json" in README
    spec = yaml.safe_load(snippet)
    assert parse_specs(spec, "README.md")[1] == []
    assert jsonschema.Draft202012Validator(json.loads(shipped("spec"))).is_valid(spec)
    (settings,) = blocks("jsonc")
    lines = [line for line in settings.splitlines() if not line.lstrip().startswith("//")]
    (mapping,) = json.loads("\n".join(lines))["json.schemas"]
    assert mapping["url"] == "./spec.schema.json"


def test_every_json_snippet_loads() -> None:
    support = load_specs(ROOT / "examples" / "support" / "tools.yaml")
    snippets = blocks("json")
    assert len(snippets) == 3
    for text in snippets:
        data = json.loads(text)
        if "plans" in data:
            case = parse_case(data, support, "README.md")
            assert case.linked
        elif "turns" in data:  # a conversation: the second turn's $ref names the first's call
            case = parse_case(data, support, "README.md")
            assert case.turns[1].earlier_refs
        else:
            assert {"id", "passed", "kind", "plan", "baselines", "mismatches"} <= data.keys()


def test_every_inline_rule_loads_and_the_coerce_one_keeps_its_default() -> None:
    inline = re.findall(r"`(\w+: \{kind: [^`]*\})`", README)
    assert inline, "README has no inline rule"
    tour_args = yaml.safe_load(heredocs()["tools.yaml"])["tools"]["get_weather"]["args"]
    new_args = yaml.safe_load(heredocs()["tools-new.yaml"])["tools"]["get_weather"]["args"]
    for snippet in inline:
        ((name, node),) = yaml.safe_load(snippet).items()
        specs, problems = parse_specs({"tools": {"t": {"args": {name: node}}}}, "README.md")
        assert specs is not None, problems
        if node.get("coerce"):
            # the snippet changes only `coerce` (and gives a reason): the default stays
            assert {k: v for k, v in node.items() if k not in ("coerce", "reason")} == tour_args[
                name
            ]
            assert {k: v for k, v in new_args[name].items() if k != "reason"} == {
                k: v for k, v in node.items() if k != "reason"
            }
