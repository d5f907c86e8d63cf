"""`toolscore lint`: find problems in a spec and its cases before they distort a score.

Errors are things that make scoring wrong or impossible (a broken spec, an expected value its
own rule rejects, a call to a tool the spec lacks, a plan that does not pass its own case);
warnings are things that make a score say less than it seems to (a lenient rule with no
reason, a case that doing nothing passes, a goal state that is the initial state). The gold
checks, which score each plan as an agent's output, are `lint_gold`'s.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolscore.core.arguments import value_problem
from toolscore.core.model import OMITTED, AnyOf, Ref
from toolscore.core.rules import ListRule, NormalizedRule, ObjectRule, PatternRule, Rule
from toolscore.core.rules.strings import REGEX_SECONDS as PATTERN_SECONDS
from toolscore.errors import CaseError, InputError
from toolscore.inputs.cases import parse_case
from toolscore.inputs.converted import Conversion, as_json_lines, layout_of, named_record
from toolscore.inputs.jsonl import read_jsonl
from toolscore.lint.gold import Severity, gold_problems
from toolscore.rubrics.backtrack import backtracking
from toolscore.rubrics.checks import REGEX_SECONDS, LocalRubric, RegexCheck
from toolscore.specs.fields import RulePath
from toolscore.specs.loading import SpecSet, check_specs
from toolscore.specs.problems import DRAFT_PREFIX

if TYPE_CHECKING:
    from toolscore.state import AnyEnvironment as Environment


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem `lint` found, located like an input error."""

    severity: Severity
    problem: InputError

    def __str__(self) -> str:
        return f"{self.severity}: {self.problem}"


def lint_files(
    specs_path: str | Path,
    cases_path: str | Path | None = None,
    environment: Callable[[SpecSet], Environment] | None = None,
) -> list[Finding]:
    """Every problem of a spec file and, when given, of a cases file checked against it.
    `environment` makes the store to replay on from the spec set (an input error when it
    cannot be loaded); the cases' plans are then replayed on it."""
    specs, errors = check_specs(specs_path)
    findings = [Finding("error", error) for error in errors]
    if specs is None:
        return findings
    findings += lenient_without_reason(specs)
    findings += backtracking_regexes(specs)
    findings += string_rule_findings(specs)
    findings += draft_guesses(specs)
    env = None if environment is None else environment(specs)
    if cases_path is not None:
        findings += lint_cases(specs, cases_path, env)
    return findings


def lenient_without_reason(specs: SpecSet) -> list[Finding]:
    """Warn where a lenient rule (casefold, coerce) does not say why it is harmless."""
    found: list[Finding] = []
    for tool, rule, path in spec_rules(specs):
        if rule.is_lenient() and not rule.reason:
            message = (
                f"{rule.describe()} forgives differences: add a reason saying why that is safe"
            )
            where = specs.rule_field(tool, path)
            source = specs.rule_source(tool, path)
            found.append(Finding("warning", InputError(source, message, field=where)))
    return found


def draft_guesses(specs: SpecSet) -> list[Finding]:
    """Warn on each rule `spec init` guessed (its reason starts with `draft:`), so that a
    drafted spec is reviewed before its scores are trusted."""
    found: list[Finding] = []
    for tool, rule, path in spec_rules(specs):
        if rule.reason is not None and rule.reason.startswith(DRAFT_PREFIX):
            guess = rule.reason.removeprefix(DRAFT_PREFIX).strip()
            message = (
                f"a drafted guess to review ({rule.describe()}): {guess}; check it against the "
                f"tool, then reword the reason (without {DRAFT_PREFIX!r})"
            )
            where = specs.rule_field(tool, path)
            source = specs.rule_source(tool, path)
            found.append(Finding("warning", InputError(source, message, field=where)))
    return found


def spec_rules(specs: SpecSet) -> Iterator[tuple[str, Rule, RulePath]]:
    """Every rule of the spec with its tool and path, each before the rules inside it
    (an object's arguments, a list's `items`), tools in spec order."""

    def walk(tool: str, rule: Rule, path: RulePath) -> Iterator[tuple[str, Rule, RulePath]]:
        yield tool, rule, path
        if isinstance(rule, ObjectRule):
            for name, sub in rule.args.items():
                yield from walk(tool, sub, (*path, name))
        elif isinstance(rule, ListRule):
            yield from walk(tool, rule.items, (*path, "items"))

    for name, tool in specs.tools.items():
        yield from walk(name, tool.args, ())


def backtracking_regexes(specs: SpecSet) -> list[Finding]:
    """Warn on each regex check of a rubric in use whose pattern has a shape known to
    backtrack catastrophically (`rubrics.backtrack`): it would cost its time limit on many
    texts before the run stops it."""
    found: list[Finding] = []
    seen: set[str] = set()
    for uses in specs.rubric_uses.values():
        for use in uses:
            rubric = specs.rubrics[use.rubric]
            if use.rubric in seen or not isinstance(rubric, LocalRubric):
                continue
            seen.add(use.rubric)
            inline = use.rubric == f"{use.tool}.{'.'.join(use.path)}"
            where = (
                specs.rule_field(use.tool, use.path) + ".rubric"
                if inline
                else f"rubrics.{use.rubric}"
            )
            source = specs.rule_source(use.tool, use.path) if inline else specs.source
            for check in rubric.checks:
                if not isinstance(check, RegexCheck):
                    continue
                why = backtracking(check.pattern.pattern)
                if why is not None:
                    message = (
                        f"regex {check.pattern.pattern!r} may backtrack catastrophically: {why}; "
                        f"each such text costs the {REGEX_SECONDS:g} s limit, and the run stops "
                        f"the rubric after {check.max_timeouts}"
                    )
                    found.append(Finding("warning", InputError(source, message, field=where)))
    return found


_IDENTIFIER_WORDS = frozenset({"id", "ids", "uuid", "guid", "code", "codes", "email", "url"})
"""Last words of an argument name that mark an identifier (`order_id`, `userId`, `uuid`,
`country_code`, `email`, `url`): values a tool looks up as written."""


def identifier_like(name: str) -> bool:
    """Whether an argument's name reads as an identifier's: its last word (split at `_`,
    `-`, and lower-to-upper case changes, `orderId`) is one of `_IDENTIFIER_WORDS`."""
    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+", name)
    return bool(words) and words[-1].lower() in _IDENTIFIER_WORDS


def string_rule_findings(specs: SpecSet) -> list[Finding]:
    """Warn on a `normalized` rule of an identifier-like argument (identifiers are exact:
    `ORDER-77` may be another order than `order77`), and on a `pattern` whose regex has a
    shape known to backtrack catastrophically (`rubrics.backtrack`)."""
    found: list[Finding] = []

    def warn(tool: str, path: RulePath, message: str) -> None:
        where = specs.rule_field(tool, path)
        source = specs.rule_source(tool, path)
        found.append(Finding("warning", InputError(source, message, field=where)))

    for tool, rule, path in spec_rules(specs):
        names = [part for part in path if isinstance(part, str) and part != "items"]
        if isinstance(rule, NormalizedRule) and names and identifier_like(names[-1]):
            warn(
                tool,
                path,
                f"{rule.describe()} on {names[-1]!r}, which reads as an identifier: "
                "identifiers should stay exact (a tool may tell apart values this rule "
                "makes equal)",
            )
        elif isinstance(rule, PatternRule) and (why := backtracking(rule.source)):
            warn(
                tool,
                path,
                f"pattern {rule.source!r} may backtrack catastrophically: {why}; each such "
                f"value costs the {PATTERN_SECONDS:g} s limit and then counts as not matching",
            )
    return found


def lint_cases(
    specs: SpecSet, cases_path: str | Path, env: Environment | None = None
) -> list[Finding]:
    """Errors for every case line that is invalid or expects a value its own rule rejects,
    then the gold checks of each case (`lint_gold`), replayed on `env` when given. A cases
    file in another layout (Parquet, an Inspect log) is read as `score` reads it, and its
    findings name its records (`cases.parquet: row 3: plans[0]: ...`)."""
    path = str(cases_path)
    converter = layout_of(path)
    with as_json_lines(path, Conversion("cases")) as lines:
        found = _lint_lines(specs, lines, env)
    if converter is None:
        return found
    return [
        Finding(f.severity, named_record(f.problem, path, converter.unit))
        if f.problem.source == lines
        else f
        for f in found
    ]


def _lint_lines(specs: SpecSet, cases_path: str, env: Environment | None) -> list[Finding]:
    """`lint_cases` on a JSON Lines file."""
    source = cases_path
    found: list[Finding] = []
    seen: set[str] = set()
    exercised: set[str] = set()
    for number, _raw, data in read_jsonl(cases_path, CaseError):
        try:
            case = parse_case(data, specs, source, number)
        except CaseError as error:
            found.append(Finding("error", error))
            continue
        if case.id in seen:
            found.append(
                Finding(
                    "error",
                    CaseError(source, f"duplicate case id {case.id!r}", line=number, field="id"),
                )
            )
        seen.add(case.id)
        lists = [("plans", case.plans)]
        if case.turns:  # a conversation: each turn's plans
            lists = [(f"turns[{k}].plans", turn.plans) for k, turn in enumerate(case.turns)]
        exercised.update(call.name for _, plans in lists for plan in plans for call in plan)
        exercised.update(entry.tool for entry in case.forbid)
        rejected: set[int] = set()
        for name, plans in lists:
            for p, plan in enumerate(plans):
                for c, call in enumerate(plan):
                    rule = specs.rules[call.name]
                    at = f"{name}[{p}][{c}].args"
                    for where, message in _rejected(rule, call.args or {}, at):
                        rejected.add(p)
                        found.append(
                            Finding(
                                "error",
                                CaseError(
                                    source,
                                    f"expected value rejected by its own rule: {message}",
                                    line=number,
                                    field=where,
                                ),
                            )
                        )
        problems = gold_problems(specs, case, source, env, skip=rejected)
        found += [Finding(severity, problem) for severity, problem in problems]
    return found + unexercised_forbid(specs, exercised)


def unexercised_forbid(specs: SpecSet, exercised: set[str]) -> list[Finding]:
    """Warn on each spec `forbid` entry whose tool no case exercises: no plan calls it and
    no case forbids it, so no case tempts the agent to make the call it must refrain from
    (the entry can still fail a case, but the cases do not test it)."""
    return [
        Finding(
            "warning",
            InputError(
                specs.source,
                f"no case exercises forbidden tool {entry.tool!r}: no plan calls it and no "
                "case's forbid names it, so the cases never test that the agent refrains",
                field=f"forbid[{index}].tool",
            ),
        )
        for index, entry in enumerate(specs.forbid)
        if entry.tool not in exercised
    ]


def _rejected(rule: Rule, value: Any, where: str) -> list[tuple[str, str]]:
    """(field, why) for each part of an expected value that `rule` would never accept."""
    if type(value) is AnyOf:
        return [found for option in value for found in _rejected(rule, option, where)]
    if type(value) is Ref or value is None or value is OMITTED:
        return []
    if isinstance(rule, ObjectRule) and isinstance(value, dict):
        problems: list[tuple[str, str]] = []
        for name, sub in value.items():
            if name in rule.args:
                problems += _rejected(rule.args[name], sub, f"{where}.{name}")
            else:
                problems.append((f"{where}.{name}", "not an argument in the spec"))
        return problems
    if isinstance(rule, ListRule) and isinstance(value, list):
        return [
            found
            for i, item in enumerate(value)
            for found in _rejected(rule.items, item, f"{where}[{i}]")
        ]
    problem = value_problem(rule, value)
    return [] if problem is None else [(where, problem)]
