"""A run scored to an HTML page and the page read back: inputs holding hostile text, the
command, the parser."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import orjson
from click.testing import CliRunner

from toolscore.cli.app import cli

PWN = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script>'


"""Sets `window.__pwned` if a page ever runs it (the browser test looks)."""


ATTRIBUTE = '"><img src=x onerror="window.__pwned=1">'


SPEC = """
version: "t-1"
tools:
  refund:
    version: 2
    args:
      order_id: exact
      amount: {kind: number, tol: 0.01, reason: "cents"}
"""


def refund(order_id: str, amount: float = 5) -> dict[str, Any]:
    return {"name": "refund", "args": {"order_id": order_id, "amount": amount}}


def write_inputs(folder: Path, passing: int = 3) -> dict[str, Path]:
    """A spec, cases and outputs holding hostile text: a prompt, an argument value, a tool
    name and a case id that are HTML payloads; one failing case with a tag; `passing` more."""
    cases: list[dict[str, Any]] = [
        {"id": "evil-prompt", "prompt": PWN, "tags": ["hostile", "alpha"],
         "plans": [[refund("o-1")]]},
        {"id": "evil-tool", "prompt": "refund o-2", "plans": [[refund("o-2")]]},
        {"id": PWN, "prompt": "an id that is a payload", "plans": [[refund("o-3")]]},
        {"id": "abstain", "prompt": "thanks", "plans": []},
    ]  # fmt: skip
    outputs: list[dict[str, Any]] = [
        {"id": "evil-prompt", "calls": [refund(ATTRIBUTE)]},
        {"id": "evil-tool", "calls": [{"name": PWN, "args": {"x": ATTRIBUTE}}]},
        {"id": PWN, "calls": [refund("O-3")]},
        {"id": "abstain", "calls": []},
    ]
    for i in range(passing):
        cases.append({"id": f"ok-{i}", "tags": ["beta"], "plans": [[refund(f"p-{i}", 7)]]})
        outputs.append({"id": f"ok-{i}", "calls": [refund(f"p-{i}", 7.001)]})
    paths = {
        "specs": folder / "tools.yaml",
        "cases": folder / "cases.jsonl",
        "outputs": folder / "outputs.jsonl",
    }
    paths["specs"].write_text(SPEC)
    paths["cases"].write_bytes(b"\n".join(map(orjson.dumps, cases)) + b"\n")
    paths["outputs"].write_bytes(b"\n".join(map(orjson.dumps, outputs)) + b"\n")
    return paths


def score_args(paths: dict[str, Path]) -> list[str]:
    return [
        "score", "--specs", str(paths["specs"]), "--cases", str(paths["cases"]),
        "--outputs", str(paths["outputs"]),
    ]  # fmt: skip


def run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


class Page(HTMLParser):
    """What a test reads of a page: each element with its attributes, the text of each
    script and style element (by id for JSON data), and the CSP."""

    def __init__(self, html: str) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self.styles: list[str] = []
        self._open: tuple[str, dict[str, str | None]] | None = None
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))
        if tag in ("script", "style"):
            self._open = (tag, dict(attrs))

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            tag, attrs = self._open
            if tag == "script":
                self.scripts.append((attrs, data))
            else:
                self.styles.append(data)
            self._open = None

    def with_attr(self, name: str) -> list[dict[str, str | None]]:
        return [attrs for _, attrs in self.elements if name in attrs]

    def data(self, element_id: str) -> Any:
        for attrs, text in self.scripts:
            if attrs.get("id") == element_id:
                assert attrs.get("type") == "application/json"
                return orjson.loads(text)
        raise AssertionError(f"no script {element_id}")

    @property
    def policy(self) -> str:
        for tag, attrs in self.elements:
            if tag == "meta" and attrs.get("http-equiv") == "Content-Security-Policy":
                return str(attrs["content"])
        raise AssertionError("no CSP")


def number(text: str | None) -> Any:
    return orjson.loads(text or "")


RUBRIC_SPEC = f"""\
version: "x"
rubrics:
  names_order: {{kind: mentions, argument: order_id}}
  short: {{kind: length, max: 12}}
tools:
  refund:
    args:
      order_id: exact
      '{PWN}': {{kind: text, rubric: names_order}}
      memo: {{kind: text, rubric: short}}
"""


"""An argument whose name is a payload; `names_order` quotes the produced order id (agent
text) in its reason when the note does not mention it."""


RUBRIC_CASES = [
    {"id": case_id, "prompt": "p", "plans": [[{"name": "refund", "args": {"order_id": "o-1"}}]]}
    for case_id in ("ok", "bad", "unscored", "absent", "no-rubric")
]


RUBRIC_OUTPUTS = [
    {"id": "ok", "calls": [{"name": "refund", "args": {"order_id": "o-1", PWN: "for o-1",
                                                      "memo": "fine"}}]},
    {"id": "bad", "calls": [{"name": "refund", "args": {"order_id": PWN, PWN: "refund"}}]},
    {"id": "unscored", "calls": [{"name": "refund", "args": {"order_id": "o-1", PWN: 5}}]},
    {"id": "absent", "calls": [{"name": "refund", "args": {"order_id": "o-1", "memo": "a" * 20}}]},
    {"id": "no-rubric", "calls": []},
]  # fmt: skip


def write_rubric_inputs(folder: Path) -> dict[str, Path]:
    """The spec, cases and outputs above, in `folder`."""
    paths = {name: folder / f"{name}.jsonl" for name in ("cases", "outputs")}
    paths["specs"] = folder / "tools.yaml"
    paths["specs"].write_text(RUBRIC_SPEC)
    for name, rows in (("cases", RUBRIC_CASES), ("outputs", RUBRIC_OUTPUTS)):
        paths[name].write_bytes(b"".join(orjson.dumps(row) + b"\n" for row in rows))
    return paths


def scored_page(folder: Path, *extra: str) -> tuple[Page, str, dict[str, Any]]:
    """The page, its HTML and the report JSON of the inputs above."""
    paths = write_rubric_inputs(folder)
    page_path, report_path = folder / "report.html", folder / "report.json"
    result = run(
        "score", "--specs", str(paths["specs"]), "--cases", str(paths["cases"]),
        "--outputs", str(paths["outputs"]), "--json", str(report_path), "--html", str(page_path),
        *extra,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    html = page_path.read_text()
    return Page(html), html, orjson.loads(report_path.read_bytes())


CONVERSATION_CASES: list[dict[str, Any]] = [
    {"id": "talk", "turns": [{"plans": [[refund("o-1")]]}, {"plans": [[refund("o-2")]]},
                             {"plans": [[]]}]},
    {"id": "silent", "turns": [{"plans": [[refund("o-4")]]}, {"plans": [[refund("o-5")]]}]},
    {"id": "beyond", "turns": [{"plans": [[refund("o-6")]]}]},
    {"id": "plain", "plans": [[refund("o-3")]]},
]  # fmt: skip
CONVERSATION_OUTPUTS: list[dict[str, Any]] = [
    {"id": "talk", "turns": [{"calls": [refund("o-1")]}, {"calls": [refund(PWN)]},
                             {"calls": []}]},
    {"id": "silent", "turns": [{"calls": []}, {"calls": [refund("o-5")]}]},
    {"id": "beyond", "turns": [{"calls": [refund("o-6")]}, {"calls": [refund("o-7")]}]},
    {"id": "plain", "calls": [refund("o-3")]},
]  # fmt: skip
"""Conversations: one failing at a later turn with a hostile value, one missing a call in
its first turn, one with calls in a turn beyond its last; and one plain case."""


def write_conversations(folder: Path) -> dict[str, Path]:
    """The spec, the conversation cases and their outputs above, in `folder`."""
    paths = {name: folder / f"{name}.jsonl" for name in ("cases", "outputs")}
    paths["specs"] = folder / "tools.yaml"
    paths["specs"].write_text(SPEC)
    for name, rows in (("cases", CONVERSATION_CASES), ("outputs", CONVERSATION_OUTPUTS)):
        paths[name].write_bytes(b"".join(orjson.dumps(row) + b"\n" for row in rows))
    return paths
