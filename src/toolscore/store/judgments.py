"""Remote rubrics' judgments kept in the results store, so that re-running costs nothing.

`StoredJudgments` is the results store's `JudgmentCache` (rubrics/cache.py): one row per
scored judgment in the `judgments` table, under the key that hashes everything that decided
it. Each judgment is written (and committed) as it arrives rather than staged with a run: a
judgment belongs to no run, and one that was paid for is kept even when the run that asked
for it is cut short. The endpoint's key is not part of a judgment and is never written here.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

from toolscore.errors import InputError
from toolscore.rubrics.base import RubricVerdict


class StoredJudgments:
    """The `judgments` table of a store's connection (autocommit mode, as `open_store`
    gives it), used from one thread."""

    def __init__(self, db: sqlite3.Connection, source: str = "results store") -> None:
        self.db = db
        self.source = source

    def get(self, key: str) -> RubricVerdict | None:
        """The judgment stored under `key`, as a cached verdict (no tokens spent), or None."""
        row = self.db.execute(
            "SELECT rubric, score, passed, reason FROM judgments WHERE key = ?", (key,)
        ).fetchone()
        if row is None:
            return None
        rubric, score, passed, reason = row
        return RubricVerdict(rubric, float(score), bool(passed), reason, cached=True, tokens=0)

    def put(self, key: str, verdict: RubricVerdict) -> None:
        """Keep a scored verdict under `key` (replacing an older one: `--refresh-rubrics`);
        an unscored one is not kept, so that a later run asks again."""
        if verdict.score is None or verdict.passed is None:
            return
        row = (
            key,
            verdict.rubric,
            verdict.score,
            int(verdict.passed),
            verdict.reason,
            verdict.tokens,
            datetime.now(UTC).isoformat(timespec="seconds"),
        )
        try:
            self.db.execute("INSERT OR REPLACE INTO judgments VALUES (?, ?, ?, ?, ?, ?, ?)", row)
        except sqlite3.OperationalError as error:  # a read-only or full disk, say
            raise InputError(self.source, f"cannot keep a rubric's judgment: {error}") from None

    def __len__(self) -> int:
        """How many judgments are stored."""
        return int(self.db.execute("SELECT count(*) FROM judgments").fetchone()[0])
