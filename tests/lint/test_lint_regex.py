"""`toolscore lint` warns on a regex rubric whose pattern may backtrack catastrophically
(issue 25: `^(a+)+$` cost its full time limit on every case and lint said nothing)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from toolscore.cli.app import cli
from toolscore.lint.checks import lint_files

SPEC = """\
rubrics:
  only_a: {kind: regex, pattern: "^(a+)+$"}
  safe: {checks: [{kind: regex, pattern: "^[a-z]+(-[a-z]+)*$"}, {kind: not_empty}]}
  unused: {kind: regex, pattern: "(a*)*b"}
tools:
  refund:
    args:
      note: {kind: text, rubric: only_a}
      memo: {kind: text, rubric: safe}
      tag: {kind: text, rubric: {checks: [{kind: not_empty},
                                          {kind: regex, pattern: "(x+x+)+y", max_timeouts: 5}]}}
"""


def test_lint_warns_on_each_backtracking_regex_in_use(tmp_path: Path) -> None:
    (tmp_path / "tools.yaml").write_text(SPEC)
    findings = [str(f) for f in lint_files(tmp_path / "tools.yaml")]
    assert len(findings) == 2, findings
    note, tag = findings
    assert note.startswith("warning: ")
    assert "rubrics.only_a: regex '^(a+)+$' may backtrack catastrophically: a repeat '+'" in note
    assert "nested quantifiers" in note
    assert "costs the 1 s limit, and the run stops the rubric after 3" in note
    assert "tools.refund.args.tag.rubric: regex '(x+x+)+y'" in tag
    assert "after 5" in tag


def test_the_warning_fails_lint_only_under_strict(tmp_path: Path) -> None:
    (tmp_path / "tools.yaml").write_text(SPEC)
    plain = CliRunner().invoke(cli, ["lint", "--specs", str(tmp_path / "tools.yaml")])
    assert plain.exit_code == 0, plain.output
    assert "0 errors, 2 warnings" in plain.output
    strict = CliRunner().invoke(cli, ["lint", "--specs", str(tmp_path / "tools.yaml"), "--strict"])
    assert strict.exit_code == 1
