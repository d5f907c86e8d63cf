"""The cache of parsed specs (`toolscore.specs.cache`): a spec read again is not parsed again,
loads exactly as it does uncached, and a cache entry that is not toolscore's own is never
believed: corrupt, foreign or too deep, it is ignored and rewritten."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from toolscore.cli import cli
from toolscore.errors import SpecError
from toolscore.specs import cache, parsing
from toolscore.specs.loading import load_specs

ROOT = Path(__file__).resolve().parents[2]
SPEC = """\
version: 2
tools:
  refund:
    version: 1
    args:
      order_id: exact
      amount: {kind: number, tol: 0.01}
"""


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(cache.CACHE_DIR_VARIABLE, str(folder))
    return folder


def _spec(tmp_path: Path, text: str = SPEC, name: str = "tools.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _entries(folder: Path) -> list[Path]:
    return sorted((folder / "specs").glob("*.json"))


def _no_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(content: bytes, source: str) -> None:
        raise AssertionError(f"{source} was parsed although it is cached")

    monkeypatch.setattr(parsing, "parse_document", refuse)


def test_a_spec_read_again_comes_from_the_cache(
    cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _spec(tmp_path)
    first = load_specs(path)
    assert len(_entries(cache_dir)) == 1
    _no_parsing(monkeypatch)
    again = load_specs(path)
    assert again.rules == first.rules
    assert (again.version, again.sha256, again.source) == (
        first.version,
        first.sha256,
        first.source,
    )


def test_the_cached_load_equals_the_uncached_one_on_every_bundled_spec(cache_dir: Path) -> None:
    paths = [
        *sorted((ROOT / "src/toolscore/examples").rglob("tools.yaml")),
        *sorted((ROOT / "tests").rglob("tools.yaml")),
    ]
    assert len(paths) >= 5
    for path in paths:
        fresh = load_specs(path, cache=False)
        load_specs(path)  # writes the entry
        cached = load_specs(path)
        assert cached.rules == fresh.rules, path
        assert cached.relaxations == fresh.relaxations, path
        assert dict(cached.rubrics) == dict(fresh.rubrics), path


def test_cache_false_neither_reads_nor_writes(cache_dir: Path, tmp_path: Path) -> None:
    load_specs(_spec(tmp_path), cache=False)
    assert not (cache_dir / "specs").exists()


@pytest.mark.parametrize(
    "entry",
    [
        b"not json at all",
        b'{"header": {"format": 1, "toolscore": "0.0.0-other", "key": "K"}, "data": {}}',
        b'{"data": {"tools": {}}}',
        b"[1, 2, 3]",
    ],
    ids=["corrupt", "another version", "no header", "not an entry"],
)
def test_an_entry_that_is_not_ours_is_ignored_and_rewritten(
    cache_dir: Path, tmp_path: Path, entry: bytes
) -> None:
    path = _spec(tmp_path)
    load_specs(path)
    [written] = _entries(cache_dir)
    good = written.read_bytes()
    written.write_bytes(entry.replace(b'"K"', json.dumps(written.stem).encode()))
    assert load_specs(path).rules == load_specs(path, cache=False).rules
    assert written.read_bytes() == good


def test_an_entry_deeper_than_a_spec_may_be_is_parsed_again(
    cache_dir: Path, tmp_path: Path
) -> None:
    path = _spec(tmp_path)
    load_specs(path)
    [written] = _entries(cache_dir)
    entry = json.loads(written.read_bytes())
    deep: object = {}
    for _ in range(parsing.MAX_DEPTH + 5):
        deep = {"x": deep}
    entry["data"] = {"version": 2, "tools": deep}
    written.write_text(json.dumps(entry))
    assert load_specs(path).rules == load_specs(path, cache=False).rules


@pytest.mark.parametrize(
    ("value", "why", "kept"),
    [
        ("2024-05-01", "a YAML date", 0),
        (".inf", "an infinity", 0),
        ("!!set {a, b}", "a set", 0),
        ("{1: one}", "an integer key", 0),
        ("plain text", "a string: JSON holds it", 1),
    ],
)
def test_data_json_cannot_hold_exactly_is_not_cached(
    cache_dir: Path, tmp_path: Path, value: str, why: str, kept: int
) -> None:
    text = SPEC + f"    description: ok\nnote: {value}\n"
    path = _spec(tmp_path, text)
    with pytest.raises(SpecError):  # `note` is no spec key: the parse is what matters here
        load_specs(path)
    assert len(_entries(cache_dir)) == kept, why


def test_json_and_yaml_reads_of_one_content_are_kept_apart(cache_dir: Path, tmp_path: Path) -> None:
    text = json.dumps({"version": "1", "tools": {"t": {"args": {"a": "exact"}}}})
    load_specs(_spec(tmp_path, text, "tools.json"))
    load_specs(_spec(tmp_path, text, "tools.yaml"))
    assert len(_entries(cache_dir)) == 2


def test_an_unwritable_cache_is_no_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv(cache.CACHE_DIR_VARIABLE, str(blocker / "cache"))
    path = _spec(tmp_path)
    assert load_specs(path).rules == load_specs(path, cache=False).rules


def test_the_cache_keeps_at_most_max_entries(
    cache_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache, "MAX_ENTRIES", 2)
    for version in range(4):
        load_specs(_spec(tmp_path, SPEC.replace("version: 2", f"version: {version}")))
    assert len(_entries(cache_dir)) == 2


def test_the_cache_folder_follows_xdg_when_not_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(cache.CACHE_DIR_VARIABLE)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir() == tmp_path / "xdg" / "toolscore"


def test_score_no_cache_leaves_the_cache_alone(cache_dir: Path, tmp_path: Path) -> None:
    path = _spec(tmp_path)
    cases = tmp_path / "cases.jsonl"
    cases.write_text('{"id": "a", "plans": [[{"name": "refund", "args": {"order_id": "X"}}]]}\n')
    outputs = tmp_path / "outputs.jsonl"
    outputs.write_text('{"id": "a", "calls": [{"name": "refund", "args": {"order_id": "X"}}]}\n')
    command = ["score", "--specs", str(path), "--cases", str(cases), "--outputs", str(outputs)]
    assert CliRunner().invoke(cli, [*command, "--no-cache"]).exit_code == 0
    assert not (cache_dir / "specs").exists()
    assert CliRunner().invoke(cli, command).exit_code == 0
    assert len(_entries(cache_dir)) == 1
