"""The documentation is complete and its links hold: docs/formats.md names every mismatch code,
kind, option and report field the code has, and no link or file name points nowhere."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolscore.cli.app import cli
from toolscore.core.model import MISMATCH_CODES
from toolscore.core.rules import KINDS
from toolscore.core.rules.compile import KIND_OPTIONS  # the option table is the spec's vocabulary
from toolscore.inputs.formats import FORMATS
from toolscore.specs.loading import RELAXATIONS
from toolscore.state.environment import SQLITE_KEYS as ENVIRONMENT_KEYS

ROOT = Path(__file__).parents[2]
FORMATS_MD = (ROOT / "docs" / "formats.md").read_text()
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def table_row(first_cell: str) -> str:
    """The docs/formats.md table row whose first cell is `first_cell` in backticks."""
    match = re.search(rf"^\| `{re.escape(first_cell)}` \|.*$", FORMATS_MD, re.M)
    assert match, f"docs/formats.md has no table row for `{first_cell}`"
    return match.group(0)


@pytest.mark.parametrize("code", MISMATCH_CODES)
def test_every_mismatch_code_has_its_row(code: str) -> None:
    assert "| call |" in table_row(code) or "| argument |" in table_row(code)


@pytest.mark.parametrize("kind", KINDS)
def test_every_kind_has_its_row_with_every_option(kind: str) -> None:
    row = table_row(kind)
    for option in KIND_OPTIONS[kind]:
        assert f"`{option}`" in row, f"the row of `{kind}` does not name `{option}`"
    assert f"**{kind}" in FORMATS_MD, f"docs/formats.md does not explain `{kind}`"


@pytest.mark.parametrize("name", [*RELAXATIONS, *ENVIRONMENT_KEYS, *FORMATS])
def test_every_relaxation_environment_key_and_transcript_format_has_its_row(name: str) -> None:
    table_row(name)


def keys_of(node: Any, *paths: str) -> Iterator[str]:
    """The keys of the objects at the given dotted paths (`*` stands for every member)."""
    for path in paths:
        nodes = [node]
        for part in path.split(".") if path else []:
            found = []
            for item in nodes:
                if part == "*":
                    found += list(item.values()) if isinstance(item, dict) else list(item)
                elif isinstance(item, dict) and part in item:
                    found.append(item[part])
            nodes = found
        assert nodes, f"the report has nothing at {path!r}"
        for item in nodes:
            assert isinstance(item, dict), path
            yield from item


def test_every_field_of_a_report_is_documented(tmp_path: Path) -> None:
    support = ROOT / "examples" / "support" / "env"
    report = tmp_path / "report.json"
    result = CliRunner().invoke(cli, [
        "score", "--specs", str(support / "tools.yaml"), "--cases", str(support / "cases.jsonl"),
        "--outputs", str(support / "outputs.jsonl"), "--env", "--json", str(report),
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    data = json.loads(report.read_text())
    fields = set(
        keys_of(
            data,
            "",
            "specs",
            "relaxations.*",
            "lenient_rules.*",
            "environment",
            "summary",
            "summary.name_accuracy",
            "summary.baselines.*",
            "summary.per_tool.*",
            "summary.per_argument.*",
            "summary.state",
            "cases.*",
            "cases.*.mismatches.*",
            "cases.*.state",
            "cases.*.state.diff",
            "cases.*.state.diff.tables.*",
            "cases.*.state.calls.*",
        )
    )
    documented = set(re.findall(r"`(\w+)`", FORMATS_MD)) | set(re.findall(r'"(\w+)"', FORMATS_MD))
    missing = sorted(fields - documented)
    assert not missing, f"docs/formats.md does not name these report fields: {missing}"


def links(text: str) -> Iterator[str]:
    yield from re.findall(r"\]\(([^)\s]+)\)", text)


def anchors(text: str) -> set[str]:
    """The anchors GitHub makes of a document's headings."""
    found = set()
    for heading in re.findall(r"^#+ (.+)$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        found.add(slug)
    return found


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_every_relative_link_resolves(document: Path) -> None:
    text = document.read_text()
    for target in links(text):
        if re.match(r"[a-z]+:", target):
            continue  # a web address
        path, _, anchor = target.partition("#")
        linked = (document.parent / path).resolve() if path else document
        assert linked.exists(), f"{document.name} links to {target}, which does not exist"
        if anchor:
            assert anchor in anchors(linked.read_text()), f"{document.name}: no anchor {target}"


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: path.name)
def test_every_document_named_is_in_the_repository(document: Path) -> None:
    for name in re.findall(r"`([\w./-]+\.md)`", document.read_text()):
        assert (ROOT / name).exists(), f"{document.name} names {name}, which is not here"
