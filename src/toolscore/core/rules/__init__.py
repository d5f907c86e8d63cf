"""One small, frozen rule object per argument kind, and the factory that builds them from a spec.

A scalar rule only *judges* two present, non-null values and returns a code and a message; it
never builds paths or walks containers (that is `arguments.iter_mismatches`).
Container rules (`list`, `object`) only carry what the walker needs.

- `base`: `Rule`, `RuleError`, a scalar rule's `Verdict` and the helpers that word one.
- `text`: `exact`, its `lowercase` baseline, `casefold`; `text` (never compared).
- `strings`: `normalized`, `pattern` (under a time limit), `one_of`.
- `numbers`: `number`, `integer`, `boolean`, and the coercion of strings to them.
- `enums`: `enum` with its aliases.
- `times`: `date`, `datetime`, and the time-zone names a spec may give.
- `structures`: `ignored`, `list`, `object`.
- `compile`: the kinds and their options, and the factory from spec nodes to rules.

The JSON value helpers the rules use (`json_equal`, `show`, ...) are `toolscore.core.values`.
"""

from toolscore.core.rules.base import Rule, RuleError, Verdict
from toolscore.core.rules.compile import KINDS, compile_args, compile_rule
from toolscore.core.rules.enums import EnumRule
from toolscore.core.rules.numbers import BooleanRule, IntegerRule, NumberRule
from toolscore.core.rules.strings import NormalizedRule, OneOfRule, PatternRule
from toolscore.core.rules.structures import IgnoredRule, ListRule, ObjectRule
from toolscore.core.rules.text import CasefoldRule, ExactRule, LowercaseRule, TextRule
from toolscore.core.rules.times import DateRule, DatetimeRule, parse_timezone

__all__ = [
    "KINDS",
    "BooleanRule",
    "CasefoldRule",
    "DateRule",
    "DatetimeRule",
    "EnumRule",
    "ExactRule",
    "IgnoredRule",
    "IntegerRule",
    "ListRule",
    "LowercaseRule",
    "NormalizedRule",
    "NumberRule",
    "ObjectRule",
    "OneOfRule",
    "PatternRule",
    "Rule",
    "RuleError",
    "TextRule",
    "Verdict",
    "compile_args",
    "compile_rule",
    "parse_timezone",
]
