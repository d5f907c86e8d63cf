"""State-based scoring: replay the agent's calls against a real store (a SQLite database, or
JSON-like documents) and compare the final state with a goal state (outcomes decide, calls
diagnose).

- `environment`: load the `environment` block of a spec (database, tools module, ignore).
- `documents`, `documents_verdict`: the `kind: documents` store, its replay and its verdict.
- `pointer_diff`, `document_hash`: two documents compared path by path, or by hash.
- `errors_policy`: what a tool's error is, what it leaves, which tools end replay.
- `replay`: replay calls on a private in-memory copy of the database, one per replay.
- `guard`, `limits`: what replayed SQL may do (reach no file), and how long a call may run.
- `snapshot`, `diff`: read a state, compare two states table by table, hash a state.
- `goal`: read a case's annotated `goal_state`.
- `checks`: a case's `state_checks`, parsed and judged on a state of either kind.
- `outputs`: the `required_outputs` check on what the agent said (strings, and the values
  its calls returned: `core.answers`).
- `verdict`: `check_state`, the outcome verdict on one case.
"""

from typing import TypeAlias

from toolscore.state.diff import RowChange, StateDiff, TableDiff, diff_states
from toolscore.state.documents import DocumentEnvironment
from toolscore.state.environment import (
    COMPARE_MODES,
    Environment,
    Tool,
    ToolContext,
    load_environment,
)
from toolscore.state.errors_policy import ErrorPolicy
from toolscore.state.outputs import missing_outputs, normalise_text
from toolscore.state.pointer_diff import Change, DocumentDiff, diff_documents
from toolscore.state.replay import CallOutcome, replay_case
from toolscore.state.snapshot import Snapshot, TableState, state_hash
from toolscore.state.verdict import StateVerdict, check_state, validate_case

AnyEnvironment: TypeAlias = Environment | DocumentEnvironment
"""An environment of either kind."""

__all__ = [
    "COMPARE_MODES",
    "AnyEnvironment",
    "CallOutcome",
    "Change",
    "DocumentDiff",
    "DocumentEnvironment",
    "Environment",
    "ErrorPolicy",
    "RowChange",
    "Snapshot",
    "StateDiff",
    "StateVerdict",
    "TableDiff",
    "TableState",
    "Tool",
    "ToolContext",
    "check_state",
    "diff_documents",
    "diff_states",
    "load_environment",
    "missing_outputs",
    "normalise_text",
    "replay_case",
    "state_hash",
    "validate_case",
]
