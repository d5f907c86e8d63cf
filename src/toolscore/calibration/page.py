"""What the labelling page shows of one case, as plain values for its template.

The compared plan and the produced calls are laid out side by side, one row per paired call,
then the missing and the extra calls, argument by argument with the differing ones marked.
Everything that tells how the scorers judged the case (their verdicts, whether the rule
scorer accepted a difference, its mismatches, the stratum) is left out until the person has
labelled the case, so that it cannot anchor their judgement: the page is built without it,
not merely styled to hide it.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from toolscore.calibration.batches import SCORERS, BatchCase, Label
from toolscore.calibration.spec_notes import names_in, rules_view

if TYPE_CHECKING:
    from toolscore.specs.loading import SpecSet

_INVISIBLE = frozenset({"Cc", "Cf", "Zl", "Zp", "Co", "Cs"})
"""Unicode categories shown as their code point: control, format (bidirectional overrides,
zero-width characters), line and paragraph separators, private use and surrogates. Model
output can use them to make two different values look the same."""
MAX_DEFAULT = 200
"""Characters of a default value shown beside its argument at most."""


@dataclass(frozen=True)
class Value:
    """A value as the page prints it: `kind` says how, `texts` holds what.

    Kinds: `json` (one pretty-printed JSON text), `any` (the JSON text of each acceptable
    alternative), `ref` (the `label#/pointer` of an earlier call's result), `omitted` (leaving
    the argument out is expected), `unwritable` (a value too deep to write, in words) and
    `absent` (the call has no such argument).
    """

    kind: str
    texts: tuple[str, ...] = ()


ABSENT = Value("absent")


@dataclass(frozen=True)
class Note:
    """How the rule scorer saw one difference (shown only once the case is labelled)."""

    path: str
    accepted: bool
    rule: str | None
    message: str


@dataclass(frozen=True)
class ArgRow:
    """One argument of a row: the plan's value beside the produced one.

    `state` is `same`, `differs` (before labelling), or `accepted` / `rejected` (after).
    """

    key: str
    expected: Value
    produced: Value
    state: str
    paths: tuple[str, ...]
    notes: tuple[Note, ...]
    spec: tuple[str, ...] = ()
    """What the spec says of the argument, a line per rule (its own, then nested ones'), or
    that the tool's spec does not list it (`spec_lines`); empty when the view has no rules."""


@dataclass(frozen=True)
class CallRow:
    """One plan call beside the produced call paired with it, or a missing or extra call.

    `kind` is `pair`, `missing` (a plan call nothing was paired with) or `extra` (a produced
    call not paired with any plan call); `state` marks a difference of the whole call.
    """

    kind: str
    plan_call: int | None
    call: int | None
    expected_name: str | None
    produced_name: str | None
    state: str
    args: tuple[ArgRow, ...]
    unparsed: bool
    raw_args: str | None
    error: str | None
    notes: tuple[Note, ...]
    spec: tuple[str, ...] = ()
    """That the spec has no such tool, when it has not (and the view has rules)."""


@dataclass(frozen=True)
class PlanCall:
    """One call of a plan that is not the compared one, shown for reference."""

    name: str
    args: tuple[tuple[str, Value], ...]


@dataclass(frozen=True)
class OtherPlan:
    """An acceptable plan other than the one the scorer compared against; `number` is its
    index in the case's `plans`, counted from 0 as the report JSON's `plan` is."""

    number: int
    calls: tuple[PlanCall, ...]


@dataclass(frozen=True)
class Verdict:
    """One scorer's verdict and whether it agrees with the label (None when unsure)."""

    scorer: str
    passed: bool
    agrees: bool | None


@dataclass(frozen=True)
class Mismatch:
    """One of the rule scorer's reasons for failing the case."""

    code: str
    path: str
    rule: str | None
    message: str
    call: int | None
    plan_call: int | None
    expected: Value | None
    produced: Value | None


@dataclass(frozen=True)
class CasePage:
    """Everything the case template shows of the case itself.

    `revealed` is whether the labeller has labelled the case; when False, `verdicts`,
    `mismatches`, `exact_reason` and `stratum` are empty and no row carries a note or an
    accepted/rejected state.
    """

    prompt: str | None
    plan: int | None
    plan_count: int
    no_call_expected: bool
    reordered: bool
    """Whether the paired calls were made in another order than the plan's."""
    rows: tuple[CallRow, ...]
    other_plans: tuple[OtherPlan, ...]
    revealed: bool
    verdicts: tuple[Verdict, ...] = ()
    mismatches: tuple[Mismatch, ...] = ()
    exact_reason: str | None = None
    stratum: str | None = None
    loose_notes: tuple[Note, ...] = ()
    """Differences that name no row of the layout (shown with the verdicts)."""
    tools: tuple[str, ...] = ()
    """Each spec tool of the case with the relaxations in force for it, a line each."""
    rules_known: bool = False
    """Whether the view holds the spec's rules (batches made before it did, do not)."""


def case_page(case: BatchCase, label: Label | None, specs: SpecSet | None = None) -> CasePage:
    """The page of one batch case for a labeller whose label of it is `label` (None: not yet
    labelled, and then nothing of the scorers' judgement is included). `specs`, the run's,
    gives the rules of a view made before views kept them."""
    view = case.view
    if "rules" not in view and specs is not None:
        view = {**view, "rules": rules_view(specs, names_in(view))}
    page = case_layout(view, revealed=label is not None)
    if label is None:
        return page
    return replace(
        page,
        verdicts=tuple(
            Verdict(scorer, bool(case.verdicts[scorer]), _agrees(label.label, scorer, case))
            for scorer in SCORERS
            if scorer in case.verdicts
        ),
        stratum=visible(case.stratum),
    )


def case_layout(view: Mapping[str, Any], revealed: bool) -> CasePage:
    """The plan beside the produced calls of a case view (`calibration.view.case_view`);
    with `revealed`, the rule scorer's judgement too: each difference accepted or rejected,
    the mismatches and the exact-JSON reason (the HTML report shows them at once)."""
    plans = [_calls(plan) for plan in _list(view.get("plans"))]
    plan = view.get("plan")
    if not (isinstance(plan, int) and 0 <= plan < len(plans)):
        plan = None
    compared = [] if plan is None else plans[plan]
    produced = [call for call in _list(view.get("produced")) if isinstance(call, Mapping)]
    differences = [d for d in _list(view.get("differences")) if isinstance(d, Mapping)]
    pairs = _pairs(view, compared, produced)
    rules = view.get("rules")
    rules = rules if isinstance(rules, Mapping) else None
    rows, used = _rows(compared, produced, pairs, differences, revealed, rules)
    page = CasePage(
        prompt=None if view.get("prompt") is None else visible(str(view["prompt"])),
        plan=plan,
        plan_count=len(plans),
        no_call_expected=not compared,
        reordered=[j for _, j in pairs] != sorted(j for _, j in pairs),
        rows=tuple(rows),
        other_plans=tuple(
            OtherPlan(number, tuple(_plan_call(call) for call in calls))
            for number, calls in enumerate(plans)
            if number != plan
        ),
        revealed=revealed,
        tools=tool_lines(rules, [*compared, *produced]),
        rules_known=rules is not None,
    )
    if not revealed:
        return page
    loose = [_note(d) for index, d in enumerate(differences) if index not in used]
    reason = view.get("exact_reason")
    return replace(
        page,
        mismatches=tuple(
            _mismatch(m) for m in _list(view.get("mismatches")) if isinstance(m, Mapping)
        ),
        exact_reason=None if reason is None else visible(str(reason)),
        loose_notes=tuple(loose),
    )


def visible(text: str) -> str:
    """`text` with invisible and direction-changing characters written as `<U+202E>`, so that
    values that only look alike do not look alike on the page (newlines and tabs are kept)."""
    if text.isascii() and text.isprintable():
        return text
    return "".join(
        f"\u27e8U+{ord(char):04X}\u27e9"
        if char not in "\n\t" and unicodedata.category(char) in _INVISIBLE
        else char
        for char in text
    )


def json_text(value: Any) -> str:
    """`value` as pretty-printed JSON, non-ASCII letters kept, invisible characters escaped."""
    text = json.dumps(value, indent=2, ensure_ascii=False)
    if text.isascii():
        return text
    return "".join(
        f"\\u{ord(char):04x}"
        if ord(char) <= 0xFFFF and unicodedata.category(char) in _INVISIBLE
        else char
        for char in text
    )


def describe(value: Any, expected: bool = True) -> Value:
    """How the page prints one argument value of a plan or (`expected=False`) a produced call:
    only a plan's values are read for markers (`$any`, `$ref`, `$omitted`), so that an agent
    cannot make its own value look like one."""
    if isinstance(value, Mapping) and len(value) == 1 and (expected or "$unwritable" in value):
        ((key, inner),) = value.items()
        if key == "$any" and isinstance(inner, list):
            return Value("any", tuple(_alternative(item) for item in inner))
        if key == "$ref" and isinstance(inner, str):
            return Value("ref", (visible(inner),))
        if key == "$omitted" and inner is True:
            return Value("omitted")
        if key == "$unwritable" and isinstance(inner, str):
            return Value("unwritable", (visible(inner),))
    return Value("json", (json_text(value),))


def top_key(pointer: str) -> str | None:
    """The top-level argument a JSON pointer names (`/a~1b/0` -> `a/b`); None for ``."""
    if not pointer.startswith("/"):
        return None
    first = pointer[1:].split("/", 1)[0]
    return first.replace("~1", "/").replace("~0", "~")


def _alternative(item: Any) -> str:
    if isinstance(item, Mapping) and item == {"$omitted": True}:
        return "(left out)"
    return json_text(item)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _calls(plan: Any) -> list[Mapping[str, Any]]:
    return [call for call in _list(plan) if isinstance(call, Mapping)]


def _args(call: Mapping[str, Any]) -> Mapping[str, Any]:
    args = call.get("args")
    return args if isinstance(args, Mapping) else {}


def _pairs(
    view: Mapping[str, Any],
    compared: Sequence[Mapping[str, Any]],
    produced: Sequence[Mapping[str, Any]],
) -> list[tuple[int, int]]:
    """The view's pairs that name a plan call and a produced call, in plan order."""
    pairs = []
    for pair in _list(view.get("pairs")):
        if (
            isinstance(pair, list)
            and len(pair) == 2
            and all(isinstance(index, int) for index in pair)
            and 0 <= pair[0] < len(compared)
            and 0 <= pair[1] < len(produced)
        ):
            pairs.append((pair[0], pair[1]))
    return sorted(pairs)


def _rows(
    compared: Sequence[Mapping[str, Any]],
    produced: Sequence[Mapping[str, Any]],
    pairs: Sequence[tuple[int, int]],
    differences: Sequence[Mapping[str, Any]],
    revealed: bool,
    rules: Mapping[str, Any] | None,
) -> tuple[list[CallRow], set[int]]:
    """The rows of the side-by-side layout, and which differences they show."""
    paired_plan = {i for i, _ in pairs}
    paired_calls = {j for _, j in pairs}
    slots: list[tuple[str, int | None, int | None]] = [("pair", i, j) for i, j in pairs]
    slots += [("missing", i, None) for i in range(len(compared)) if i not in paired_plan]
    slots += [("extra", None, j) for j in range(len(produced)) if j not in paired_calls]
    used: set[int] = set()
    rows = []
    for kind, i, j in slots:
        mine = [
            (index, d)
            for index, d in enumerate(differences)
            if d.get("plan_call") == i and d.get("call") == j
        ]
        used.update(index for index, _ in mine)
        rows.append(
            _row(
                kind,
                i,
                j,
                None if i is None else compared[i],
                None if j is None else produced[j],
                [d for _, d in mine],
                revealed,
                rules,
            )
        )
    return rows, used


def _row(
    kind: str,
    i: int | None,
    j: int | None,
    expected: Mapping[str, Any] | None,
    produced: Mapping[str, Any] | None,
    differences: Sequence[Mapping[str, Any]],
    revealed: bool,
    rules: Mapping[str, Any] | None,
) -> CallRow:
    whole = [d for d in differences if top_key(str(d.get("path", ""))) is None]
    by_key: dict[str, list[Mapping[str, Any]]] = {}
    for d in differences:
        key = top_key(str(d.get("path", "")))
        if key is not None:
            by_key.setdefault(key, []).append(d)
    unparsed = produced is not None and not isinstance(produced.get("args"), Mapping)
    want = _args(expected) if expected is not None else {}
    got = _args(produced) if produced is not None else {}
    keys = list(want) + [key for key in got if key not in want]
    keys += [key for key in by_key if key not in want and key not in got]
    expected_name = None if expected is None else str(expected.get("name", ""))
    produced_name = None if produced is None else str(produced.get("name", ""))
    names_differ = kind == "pair" and expected_name != produced_name
    tool = expected_name if expected_name is not None else produced_name
    tool_rules = rules.get(tool) if rules is not None and tool is not None else None
    args = tuple(
        ArgRow(
            key=visible(key),
            expected=describe(want[key]) if key in want else ABSENT,
            produced=describe(got[key], expected=False) if key in got else ABSENT,
            state=_state(by_key.get(key, []), revealed),
            paths=tuple(visible(str(d.get("path", ""))) for d in by_key.get(key, [])),
            notes=tuple(_note(d) for d in by_key.get(key, [])) if revealed else (),
            spec=spec_lines(tool_rules, key),
        )
        for key in keys
    )
    raw = None if produced is None else produced.get("raw_args")
    error = None if produced is None else produced.get("error")
    return CallRow(
        kind=kind,
        plan_call=i,
        call=j,
        expected_name=None if expected_name is None else visible(expected_name),
        produced_name=None if produced_name is None else visible(produced_name),
        state="differs" if names_differ and not whole else _state(whole, revealed),
        args=args,
        unparsed=unparsed,
        raw_args=None if raw is None else visible(str(raw)),
        error=None if error is None else visible(str(error)),
        notes=tuple(_note(d) for d in whole) if revealed else (),
        spec=("not a tool of the spec",) if rules is not None and tool_rules is None else (),
    )


def spec_lines(tool_rules: Any, key: str) -> tuple[str, ...]:
    """What the spec says of argument `key` of a tool (`rules_view`'s entry for it), a line
    per rule: `unit: enum values=celsius|fahrenheit aliases=C->celsius, default "celsius";
    accepts aliases C for celsius (why)`. Empty when the tool has no rules in the view."""
    if not isinstance(tool_rules, Mapping) or not isinstance(tool_rules.get("args"), Mapping):
        return ()
    entries = tool_rules["args"].get(key)
    if not isinstance(entries, list):
        return (f"{visible(key)}: not an argument of the tool's spec",)
    lines = []
    for entry in entries:
        if not isinstance(entry, Mapping):
            continue
        line = f"{entry.get('argument')}: {entry.get('rule')}"
        if "default" in entry:
            line += f", default {_short(entry['default'])}"
        line += "".join(f"; accepts {what}" for what in _list(entry.get("forgives")))
        if entry.get("reason"):
            line += f" ({entry['reason']})"
        lines.append(visible(line))
    return tuple(lines)


def tool_lines(
    rules: Mapping[str, Any] | None, calls: Sequence[Mapping[str, Any]]
) -> tuple[str, ...]:
    """A line for each tool of the spec that `calls` name, with the relaxations in force for
    it (every report lists them; a labeller should know them too)."""
    if rules is None:
        return ()
    lines = []
    for name in dict.fromkeys(str(call.get("name", "")) for call in calls):
        found = rules.get(name)
        if not isinstance(found, Mapping):
            continue
        relaxations = [r for r in _list(found.get("relaxations")) if isinstance(r, Mapping)]
        if relaxations:
            allowed = "; ".join(f"allow {r.get('allow')} ({r.get('reason')})" for r in relaxations)
            lines.append(visible(f"{name}: relaxations in force: {allowed}"))
        else:
            lines.append(
                visible(
                    f"{name}: no relaxation in force (extra calls and arguments its spec does "
                    "not list fail)"
                )
            )
    return tuple(lines)


def _short(value: Any) -> str:
    """A default as compact JSON, cut to `MAX_DEFAULT` characters."""
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return text if len(text) <= MAX_DEFAULT else text[: MAX_DEFAULT - 3] + "..."


def _state(differences: Sequence[Mapping[str, Any]], revealed: bool) -> str:
    if not differences:
        return "same"
    if not revealed:
        return "differs"
    return "accepted" if all(d.get("accepted") is True for d in differences) else "rejected"


def _note(difference: Mapping[str, Any]) -> Note:
    rule = difference.get("rule")
    return Note(
        path=visible(str(difference.get("path", ""))),
        accepted=difference.get("accepted") is True,
        rule=None if rule is None else visible(str(rule)),
        message=visible(str(difference.get("message", ""))),
    )


def _plan_call(call: Mapping[str, Any]) -> PlanCall:
    return PlanCall(
        visible(str(call.get("name", ""))),
        tuple((visible(key), describe(value)) for key, value in _args(call).items()),
    )


def _mismatch(found: Mapping[str, Any]) -> Mismatch:
    rule = found.get("rule")
    call, plan_call = found.get("call"), found.get("plan_call")
    return Mismatch(
        code=visible(str(found.get("code", ""))),
        path=visible(str(found.get("path", ""))),
        rule=None if rule is None else visible(str(rule)),
        message=visible(str(found.get("message", ""))),
        call=call if isinstance(call, int) else None,
        plan_call=plan_call if isinstance(plan_call, int) else None,
        expected=describe(found["expected"]) if "expected" in found else None,
        produced=describe(found["produced"], expected=False) if "produced" in found else None,
    )


def _agrees(label: str, scorer: str, case: BatchCase) -> bool | None:
    if label not in ("correct", "incorrect"):
        return None
    return bool(case.verdicts[scorer]) == (label == "correct")
