"""What every transcript reader shares: the calls found so far, turns, and result linking.

A reader walks its provider's shape and reports what it sees (a genuine user message, an
assistant message, a call, a tool result); `Transcript` numbers the turns, links each result to
its call by id (or, without ids, by position within the latest assistant message that made
calls) and records in notes what it had to assume.

Two kinds of trouble are kept apart. A line whose transcript is not one at all (`messages` not a
list, a format that contradicts its shapes) is an input error naming the field. A part inside a
transcript that the reader cannot understand (a message without a role, a block whose type is a
list, a block type the provider does not write) is *unread*: the reader skips it, says where
and why, and the case it belongs to cannot pass.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from toolscore.core.model import MISSING, Call, Trajectory
from toolscore.core.values import json_type, show, suggest
from toolscore.errors import OutputError
from toolscore.inputs.calls import produced_call

TEXT_BLOCKS = frozenset({"text", "input_text", "output_text"})
"""Content block types that carry plain text (Anthropic, OpenAI Chat and Responses)."""


def _text_block(block: Any) -> bool:
    if not isinstance(block, Mapping):
        return False
    kind = block.get("type")
    return isinstance(kind, str) and kind in TEXT_BLOCKS and isinstance(block.get("text"), str)


def text_of(content: Any) -> str | None:
    """The text of a message: a string as is, a list by its text blocks joined (others skipped)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [block["text"] for block in content if _text_block(block)]
        return "\n".join(texts) if texts else None
    return None


def result_value(content: Any) -> Any:
    """A tool result as recorded; a list made only of text blocks becomes its joined text.

    A JSON string stays a string: the data-flow code decides whether to parse it.
    """
    if isinstance(content, list) and all(map(_text_block, content)):
        return "\n".join(block["text"] for block in content)
    return content


def ident(value: Any) -> str | None:
    """A provider call id, or None when it is missing, empty or not a string."""
    return value if isinstance(value, str) and value else None


def field_of(node: Mapping[str, Any], *names: str) -> Any:
    """The first of `names` that `node` holds with a value other than null: the same field
    in the spellings a provider's API and SDK write (`functionCall`, `function_call`)."""
    for name in names:
        value = node.get(name)
        if value is not None:
            return value
    return None


def _count(n: int, one: str, many: str) -> str:
    return f"1 {one}" if n == 1 else f"{n} {many}"


class UnreadableError(Exception):
    """A part of a transcript its reader cannot understand; `Transcript.part` catches it and
    counts the part as unread on the case, instead of failing the whole file."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"{where}: {reason}")
        self.where = where
        self.reason = reason


@dataclass
class Transcript:
    """The trajectory being read from one outputs line, in the order the transcript tells it."""

    source: str
    line: int | None
    format: str
    notes: list[str] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    turn: int = 0
    """Genuine user messages seen so far: the `turn` of the next call."""
    response: str | None = None
    """The text of the latest assistant message since the last user message."""
    said: list[str] = field(default_factory=list)
    """The text of every assistant message, in order (`required_outputs_in: any`); the
    strings are the line's own, so keeping them copies nothing."""
    trace: tuple[str, str | None] | None = None
    """The trace and span ids (hex) a trace reader found the calls in, if any."""
    _scope: list[int] = field(default_factory=list)
    _new_message: bool = True
    _waiting: dict[str, list[int]] = field(default_factory=dict)
    _linked: set[int] = field(default_factory=set)
    _by_position: int = 0
    _unmatched: int = 0
    _skipped: Counter[str] = field(default_factory=Counter)
    _unread: list[str] = field(default_factory=list)
    _unread_turns: list[int] = field(default_factory=list)
    _turn_responses: list[str | None] = field(default_factory=list)
    _said_turns: list[int] = field(default_factory=list)

    def error(self, where: str, message: str) -> OutputError:
        """An input error: the line's transcript is not one at all (`where` names the field)."""
        return OutputError(self.source, message, line=self.line, field=where.lstrip("."))

    def items(self, node: Any, where: str) -> list[Any]:
        """The transcript's own list (`messages`, `items`, ...): an input error if it is not."""
        if not isinstance(node, list):
            raise self.error(where, f"must be a list, got {json_type(node)}")
        return node

    def messages(
        self,
        node: Any,
        key: str,
        roles: tuple[str, ...],
        read: Callable[[Mapping[str, Any], str, str], None],
    ) -> None:
        """Read the transcript's list `node` (at `key`) message by message, each one part
        (`part`): `read(message, where, role)` once its role is known to be one of `roles`."""
        for i, message in enumerate(self.items(node, key)):
            where = f"{key}[{i}]"
            with self.part():
                read(message, where, self.role(message, where, roles))

    @contextmanager
    def part(self) -> Iterator[None]:
        """Read one part of the transcript; if it turns out unreadable, count it and go on."""
        try:
            yield
        except UnreadableError as failure:
            self.unread(failure.where, failure.reason)

    def unread(self, where: str, reason: str) -> None:
        """A part the reader skipped without understanding it: the case cannot pass. (A
        response object saved as the line itself has its fields at the top: `.content[0]`
        is then `content[0]`.)"""
        self._unread.append(f"{where.lstrip('.')}: {reason}")
        self._unread_turns.append(self.turn)

    def list_of(self, node: Any, where: str) -> list[Any]:
        """`node`, which the format says is a list (else the part is unreadable)."""
        if not isinstance(node, list):
            raise UnreadableError(where, f"must be a list, got {json_type(node)}")
        return node

    def mapping(self, node: Any, where: str) -> Mapping[str, Any]:
        """`node`, which the format says is an object (else the part is unreadable)."""
        if not isinstance(node, Mapping):
            raise UnreadableError(where, f"must be an object, got {json_type(node)}")
        return node

    def content(self, content: Any, where: str, known: frozenset[str], noun: str) -> Any:
        """A message's content (a string, null, or a list of parts whose `type` is one of
        `known`) with its unreadable parts left out and counted; `noun` names the parts in
        the message of a content of the wrong type."""
        if not isinstance(content, list):
            if content is None or isinstance(content, str):
                return content
            message = f"must be a string or a list of {noun}, got {json_type(content)}"
            raise UnreadableError(where, message)
        readable = []
        for j, part in enumerate(content):
            at = f"{where}[{j}]"
            with self.part():
                self.kind(self.mapping(part, at), at, known)
                readable.append(part)
        return readable

    def kind(self, node: Mapping[str, Any], where: str, known: frozenset[str]) -> str:
        """The `type` of a block or item, which must be one of the `known` types."""
        kind = node.get("type")
        if not isinstance(kind, str):
            raise UnreadableError(f"{where}.type", f"must be a string, got {json_type(kind)}")
        if kind not in known:
            raise UnreadableError(f"{where}.type", f"unknown {self.format} type {show(kind)}")
        return kind

    def role(self, message: Any, where: str, roles: tuple[str, ...]) -> str:
        """The role of a message, which must be an object with one of the format's roles."""
        role = self.mapping(message, where).get("role")
        if not isinstance(role, str):
            raise UnreadableError(f"{where}.role", f"every {self.format} message needs a role")
        if role not in roles:
            known = ", ".join(roles)
            raise UnreadableError(
                f"{where}.role",
                f"unknown {self.format} role {show(role)}{suggest(role, roles)}; known: {known}",
            )
        return role

    def user_turn(self) -> None:
        """A genuine user message (not one that only carries tool results)."""
        if self.turn:
            self._turn_responses.append(self.response)
        self.turn += 1
        self.response = None

    def assistant_message(self, text: str | None) -> None:
        """An assistant message begins; its calls form the scope of positional linking."""
        self._new_message = True
        if text:
            self.response = text
            self.said.append(text)
            self._said_turns.append(self.turn)

    def call(
        self, name: Any, args: Any, call_id: Any, *, result: Any = MISSING, error: bool = False
    ) -> None:
        """A call as the agent made it; junk in `name` or `args` is scored later, never raised."""
        wanted = ident(call_id)
        made = produced_call({"name": name, "args": args, "id": wanted})
        if self._new_message:
            self._scope, self._new_message = [], False
        index = len(self.calls)
        self._scope.append(index)
        if wanted is not None:
            self._waiting.setdefault(wanted, []).append(index)
        # produced_call drops the id of a call without a name; its result still links by id.
        made = made._replace(call_id=wanted, turn=self.turn, result=result, result_error=error)
        self.calls.append(made)

    def result(self, call_id: Any, value: Any, *, name: Any = None, error: bool = False) -> None:
        """A tool result, linked by id, else to the first unlinked call of the latest
        assistant message (preferring one of the same name when the result names its tool)."""
        wanted = ident(call_id)
        index = next(
            (i for i in self._waiting.get(wanted or "", ()) if i not in self._linked), None
        )
        if index is None:
            index = self._by_place(name, any_id=wanted is None)
            if index is None:
                self._unmatched += 1
                return
            self._by_position += 1
        self._linked.add(index)
        self.calls[index] = self.calls[index]._replace(result=value, result_error=error)

    def _by_place(self, name: Any, *, any_id: bool) -> int | None:
        free = [
            i
            for i in self._scope
            if i not in self._linked and (any_id or self.calls[i].call_id is None)
        ]
        return next((i for i in free if self.calls[i].name == name), free[0] if free else None)

    def skip(self, what: str) -> None:
        """Something the reader understands but does not score (a provider's built-in tool)."""
        self._skipped[what] += 1

    def trajectory(self, case_id: str, response: str | None) -> Trajectory:
        """The finished trajectory; `final_turn` is the number of genuine user messages."""
        notes = list(self.notes)
        missing = sum(call.call_id is None for call in self.calls)
        if missing:
            notes.append(_count(missing, "call without an id", "calls without ids"))
        if self._by_position:
            notes.append(f"{self.format}: results linked by position ({self._by_position})")
        if self._unmatched:
            notes.append(f"{self.format}: results matching no call ({self._unmatched})")
        notes.extend(f"{self.format}: skipped {what} ({n})" for what, n in self._skipped.items())
        return Trajectory(
            case_id,
            tuple(self.calls),
            response,
            line=self.line,
            format=self.format,
            notes=tuple(notes),
            final_turn=self.turn,
            unread=tuple(self._unread),
            said=tuple(self.said),
            trace=self.trace,
            turn_responses=(*self._turn_responses, self.response) if self.turn else (),
            unread_turns=tuple(self._unread_turns),
            said_turns=tuple(self._said_turns),
        )
