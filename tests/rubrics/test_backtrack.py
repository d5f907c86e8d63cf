"""`rubrics.backtrack`: the regex shapes `lint` warns on (issue 25), and the common safe
patterns it must leave alone."""

from __future__ import annotations

import re
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolscore.rubrics.backtrack import backtracking

FLAGGED = {
    "^(a+)+$": "nested quantifiers",  # the reproducer
    "(a*)*b": "nested quantifiers",
    "(x+x+)+y": "nested quantifiers",
    "(\\w+\\s?)*$": "nested quantifiers",
    "(.*,){12}": "nested quantifiers",
    "(a|aa)+$": "nested quantifiers",
    "^([a-z0-9]+[._-]?)+@": "nested quantifiers",
    "(?:(?:a+))+$": "nested quantifiers",
    "(.|\\s)*x": "alternatives that can begin with the same character",
}

SAFE = [
    "order o-[0-9]+\\.$",
    "^Dear ",
    "^[a-z]+(-[a-z]+)*$",
    "^(\\d+\\.)+\\d+$",
    "(\\d|\\w)+",
    "(ab)+",
    "(a{2})+",
    "(a++)+",
    "(?>a+)+",
    "(a|b)+c",
    "\\d+\\d+x",  # quadratic, not exponential: the run-time limit covers it
]


@pytest.mark.parametrize(("pattern", "shape"), FLAGGED.items())
def test_patterns_known_to_backtrack_are_flagged(pattern: str, shape: str) -> None:
    why = backtracking(pattern)
    assert why is not None
    assert shape in why


@pytest.mark.parametrize("pattern", SAFE)
def test_common_safe_patterns_are_not_flagged(pattern: str) -> None:
    assert backtracking(pattern) is None


def test_the_repeat_is_named() -> None:
    assert "'+'" in (backtracking("^(a+)+$") or "")
    assert "'{12,12}'" in (backtracking("(.*,){12}") or "")


def test_a_pattern_that_does_not_compile_is_not_flagged() -> None:
    with pytest.raises(re.error):
        re.compile("(")
    assert backtracking("(") is None


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab.|()*+?{}[]^$\\dws,-1", max_size=24))
def test_any_pattern_text_gives_a_reason_or_none_and_never_raises(pattern: str) -> None:
    why = backtracking(pattern)
    assert why is None or why.startswith("a repeat ")
    if why is not None:
        with warnings.catch_warnings():  # a nested set `[[` warns, and still compiles
            warnings.simplefilter("ignore")
            re.compile(pattern)  # only a pattern that parses is ever flagged
