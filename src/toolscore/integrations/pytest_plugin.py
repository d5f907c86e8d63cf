"""The pytest plugin (entry point `pytest11`): `assert_tool_calls` for any test, a
`toolscore_specs` fixture, and cases files collected as tests.

`pytest --toolscore-cases cases.jsonl --toolscore-outputs outputs.jsonl` scores the two
files once, at collection, and makes each case (each trial of a case) a test named by its
id, failing with its mismatches, so that a CI lists failing cases by name (`--junitxml`
too). The metrics and their intervals follow in the terminal summary.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from toolscore.core.model import CaseResult
from toolscore.errors import InputError
from toolscore.escape import printable
from toolscore.inputs.cases import read_cases
from toolscore.inputs.converted import converted_inputs
from toolscore.inputs.outputs import read_outputs
from toolscore.scoring.check import assert_tool_calls, failure_message
from toolscore.scoring.stream import score
from toolscore.scoring.summary import Summary
from toolscore.specs.loading import SpecSet, load_specs

__all__ = ["assert_tool_calls"]

INI_SPECS = "toolscore_specs"
"""The ini option naming the spec file, relative to the rootdir."""


@dataclass(frozen=True)
class ScoredFiles:
    """The one scoring pass of the cases and outputs files the command line named."""

    cases: str
    outputs: str
    specs: str
    results: list[CaseResult]
    summary: Summary


_SCORED = pytest.StashKey[ScoredFiles]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("toolscore", "score an agent's tool calls (toolscore)")
    group.addoption(
        "--toolscore-cases",
        metavar="PATH",
        help="cases file: each case becomes a test, scored against --toolscore-outputs",
    )
    group.addoption("--toolscore-outputs", metavar="PATH", help="outputs file to score")
    group.addoption(
        "--toolscore-choice",
        type=int,
        metavar="N",
        help="the choice to score of response objects with several (as score --choice)",
    )
    group.addoption(
        "--toolscore-specs",
        metavar="PATH",
        help=f"spec file for the cases and the toolscore_specs fixture (default: the "
        f"{INI_SPECS} ini option)",
    )
    parser.addini(INI_SPECS, "spec file for toolscore, relative to the rootdir", default="")


def ini_specs_path(config: pytest.Config) -> Path | None:
    """The spec file named by the ini option, resolved against the rootdir; None if unset."""
    value = str(config.getini(INI_SPECS)).strip()
    return config.rootpath / value if value else None


def specs_path(config: pytest.Config) -> Path | None:
    """The spec file: `--toolscore-specs` (as given, from where pytest runs) wins over the ini
    option; None when neither names one."""
    option = config.getoption("toolscore_specs")
    return Path(option) if option else ini_specs_path(config)


@pytest.fixture(scope="session")
def toolscore_specs(pytestconfig: pytest.Config) -> SpecSet:
    """The spec set of the file named by `--toolscore-specs`, else by the `toolscore_specs`
    ini option."""
    path = specs_path(pytestconfig)
    if path is None:
        pytest.fail(
            f"the toolscore_specs fixture needs a spec file: --toolscore-specs or the ini "
            f"option {INI_SPECS} (in pytest.ini or [tool.pytest.ini_options])",
            pytrace=False,
        )
    try:
        return load_specs(path)
    except InputError as error:
        pytest.fail(str(error), pytrace=False)


class CaseFailedError(Exception):
    """A case whose produced calls do not pass; the message lists its mismatches."""


class CasesFile(pytest.File):
    """The cases file given on the command line; its items come from `ScoredFiles`."""

    def collect(self) -> list[pytest.Item]:
        scored = self.config.stash[_SCORED]
        return [
            ToolscoreCase.from_parent(self, name=item_name(result), result=result)
            for result in scored.results
        ]


class ToolscoreCase(pytest.Item):
    """One case (or one trial of it), already scored: running it only reports the verdict."""

    def __init__(self, *, result: CaseResult, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.result = result

    def runtest(self) -> None:
        if not self.result.passed:
            raise CaseFailedError(failure_message(self.result))

    def repr_failure(
        self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None
    ) -> str | Any:
        if isinstance(excinfo.value, CaseFailedError):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"toolscore case {self.name}"


def item_name(result: CaseResult) -> str:
    """A test's name: the case id, with its trial in brackets when it has one."""
    return result.id if result.trial is None else f"{result.id}[{result.trial}]"


def score_files(config: pytest.Config) -> ScoredFiles | None:
    """Score the files named by the options, once; None when no cases file is named."""
    cases = config.getoption("toolscore_cases")
    outputs = config.getoption("toolscore_outputs")
    if cases is None and outputs is None:
        return None
    if cases is None or outputs is None:
        given, lacking = ("--toolscore-cases", "--toolscore-outputs")[:: 1 if cases else -1]
        raise pytest.UsageError(f"{given} needs {lacking} too")
    specs_file = specs_path(config)
    if specs_file is None:
        raise pytest.UsageError(
            f"--toolscore-cases needs a spec file: --toolscore-specs or the {INI_SPECS} ini option"
        )
    try:
        specs = load_specs(specs_file)
        with converted_inputs(cases, outputs) as (cases_lines, outputs_lines):
            run = score(
                specs,
                read_cases(cases_lines, specs),
                read_outputs(outputs_lines, config.getoption("toolscore_choice")),
                sources=(cases_lines, outputs_lines),
            )
            results = list(run)
            summary = run.summary()
    except InputError as error:
        raise pytest.UsageError(str(error)) from None
    return ScoredFiles(cases, outputs, str(specs_file), results, summary)


@pytest.hookimpl(tryfirst=True)  # before -k and -m deselect: they apply to the cases too
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    scored = score_files(config)
    if scored is None:
        return
    config.stash[_SCORED] = scored
    cases_file = CasesFile.from_parent(session, path=Path(scored.cases).resolve())
    found = cases_file.collect()
    # Reported as collected, so that "collected N items" (and -k's deselection) count them.
    collected: list[pytest.Item | pytest.Collector] = [*found]
    report = pytest.CollectReport(cases_file.nodeid, "passed", None, collected)
    config.hook.pytest_collectreport(report=report)
    items.extend(found)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    scored = config.stash.get(_SCORED, None)
    if scored is None:
        return
    for line in summary_lines(scored):
        terminalreporter.write_line(line)


def summary_lines(scored: ScoredFiles) -> list[str]:
    """The metrics of every case in the files (whatever -k selected), as `score` words them."""
    from toolscore.report.layout import Table  # noqa: PLC0415 - only with a run
    from toolscore.report.plain_view import table_lines  # noqa: PLC0415
    from toolscore.report.terminal import ignored_keys_line, metric_rows  # noqa: PLC0415

    summary = scored.summary
    title = f" toolscore: {scored.cases} against {scored.outputs} (specs {scored.specs}) "
    table = Table(title.center(max(len(title) + 6, 78), "="))
    table.add_column("metric")
    for header in ("value", "passed/n", "95% interval"):
        table.add_column(header, justify="right")
    for row in metric_rows(summary):
        table.add_row(*row)
    lines = table_lines(table)  # as the plain summary of `score` aligns it
    lines.append(f"missed calls (tool cases, no call): {summary.missed_calls}")
    missing = summary.join.missing
    named = f" ({printable(missing.shown())})" if missing.ids else ""
    lines.append(f"missing outputs: {summary.missing_outputs}{named}")
    if summary.unmatched_outputs:
        unmatched = summary.join.unmatched
        named = f" ({printable(unmatched.shown())})" if unmatched.ids else ""
        lines.append(f"outputs with no case (ignored): {summary.unmatched_outputs}{named}")
    ignored = ignored_keys_line(summary)
    if ignored is not None:
        lines.append(ignored.text)
    return lines
