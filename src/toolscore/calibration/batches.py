"""Labelling batches in the results store: the sampled cases, and the labels people give them.

A batch is a fixed list of cases of one stored run, each with what the labelling page shows
(`view`) and the three scorers' verdicts (`verdicts`, shown only once the person labelled).
Labels are kept per labeller and saved one at a time, so a closed tab loses nothing.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import orjson

from toolscore.errors import InputError
from toolscore.stats.records import fields_json
from toolscore.store.codec import pack_json, unpack_json

if TYPE_CHECKING:
    from toolscore.store.database import Store

LABELS = ("correct", "incorrect", "unsure")
"""What a person can say of a case: the agent's calls were correct, incorrect, or unsure."""
SCORERS = ("rules", "exact", "lowercase")
"""The scorers whose verdicts a batch keeps, the rule scorer first."""
DISAGREEMENT = "disagreement"
"""A case sampled from the run's cases where the rule scorer and the baseline disagree."""
AGREEMENT = "agreement"
"""A case sampled from the run's other cases, where the rule scorer and the baseline agree."""
POPULATIONS = (DISAGREEMENT, AGREEMENT)
MAX_NOTE = 4000
"""Characters of a note kept (a note is for a sentence or two, not a document)."""


@dataclass(frozen=True)
class BatchCase:
    """One case of a batch: where it stands, why it was sampled, and what the page shows.

    `verdicts` maps each scorer of SCORERS to whether it passed the case. `view` is plain
    JSON (see `calibration.view`): prompt, plans, produced calls, pairing and differences.
    `population` says which of the run's cases it was sampled from (one of POPULATIONS).
    """

    position: int
    case_id: str
    stratum: str
    verdicts: dict[str, bool]
    view: dict[str, Any] = field(repr=False)
    population: str = DISAGREEMENT
    entry: dict[str, Any] | None = None
    """In a rubric batch: the stored rubric entry (case, plan_call, call, tool, argument,
    score, passed, reason), shown only once labelled; None in a batch of calls."""


@dataclass(frozen=True)
class BatchInfo:
    """A batch: the run it samples, the baseline it was sampled against, and how."""

    id: int
    run_id: int
    created: str
    baseline: str
    seed: int
    requested: int
    disagreements: int
    """How many cases of the run disagreed with the baseline (the population sampled)."""
    strata: dict[str, int]
    """Disagreements per stratum in the whole run, for weighting what the sample shows."""
    size: int
    agreements_requested: int = 0
    agreement_strata: dict[str, int] | None = None
    """The run's other cases (the scorers agree) per stratum; None for a batch made before
    agreements were sampled."""
    agreements_sampled: int = 0
    """How many of the batch's cases come from the agreement population."""
    rubric: dict[str, Any] | None = None
    """In a rubric batch: the rubric (name, kind, definition), how its scores were
    stratified and the run's unscored entries; None in a batch of calls. Then `strata` and
    `disagreements` count the run's scored entries of the rubric."""

    def in_run(self, population: str) -> dict[str, int]:
        """The run's cases per stratum in one population (empty when not recorded)."""
        found = self.strata if population == DISAGREEMENT else self.agreement_strata
        return found or {}

    def to_json(self) -> dict[str, Any]:
        """The batch as `--json` prints it (a rubric batch with `kind` and `rubric` too)."""
        if self.rubric is not None:
            return {
                "id": self.id,
                "kind": "rubric",
                **fields_json(self, "run_id", "created", "seed", "requested", "size", "rubric"),
                "scored": self.disagreements,
                "strata": self.strata,
            }
        return {
            **fields_json(
                self,
                "id",
                "run_id",
                "created",
                "baseline",
                "seed",
                "requested",
                "size",
                "disagreements",
                "strata",
                "agreements_requested",
                "agreements_sampled",
            ),
            "agreements": (
                None if self.agreement_strata is None else sum(self.agreement_strata.values())
            ),
            "agreement_strata": self.agreement_strata,
        }


@dataclass(frozen=True)
class Label:
    """What one labeller said of one case, with an optional note."""

    case_id: str
    labeller: str
    label: str
    note: str = ""
    updated: str = ""

    def to_json(self) -> dict[str, Any]:
        """The label as `labels export` writes it."""
        return fields_json(self, "case_id", "labeller", "label", "note", "updated")


def now() -> str:
    """The current time as stored (UTC, ISO 8601, seconds)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


class Batches:
    """The labelling batches of one results store (on its connection, autocommit mode)."""

    def __init__(self, db: sqlite3.Connection, source: str) -> None:
        self.db = db
        self.source = source
        """The store's path, for error messages."""

    @classmethod
    def of(cls, store: Store) -> Batches:
        """The batches kept in `store`, on its connection (the store does not know them:
        calibration sits above it)."""
        return cls(store.db, str(store.path))

    def create(
        self,
        run_id: int,
        baseline: str,
        seed: int,
        requested: int,
        disagreements: int,
        strata: dict[str, int],
        cases: Sequence[BatchCase],
        agreements_requested: int = 0,
        agreement_strata: dict[str, int] | None = None,
        rubric: dict[str, Any] | None = None,
    ) -> int:
        """Store a new batch with its cases in one transaction; return its id.

        `agreement_strata` (the run's cases per stratum where the scorers agree) is kept
        when given, so that labels of agreement cases can be weighted to the run.
        """
        self.db.execute("BEGIN IMMEDIATE")
        try:
            cursor = self.db.execute(
                "INSERT INTO batches (run_id, created, baseline, seed, requested, "
                "disagreements, strata, agreements_requested, agreement_strata, rubric) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    run_id,
                    now(),
                    baseline,
                    seed,
                    requested,
                    disagreements,
                    orjson.dumps(strata).decode(),
                    agreements_requested,
                    None if agreement_strata is None else orjson.dumps(agreement_strata).decode(),
                    None if rubric is None else orjson.dumps(rubric).decode(),
                ),
            )
            batch_id = cursor.lastrowid
            assert batch_id is not None
            self.db.executemany(
                "INSERT INTO batch_cases (batch_id, position, case_id, stratum, verdicts, view, "
                "population, entry) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    (
                        batch_id,
                        case.position,
                        case.case_id,
                        case.stratum,
                        orjson.dumps(case.verdicts).decode(),
                        pack_json(case.view),
                        case.population,
                        None if case.entry is None else orjson.dumps(case.entry).decode(),
                    )
                    for case in cases
                ),
            )
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return int(batch_id)

    def resolve(self, ref: int | str) -> int:
        """The id of a batch given as an id or `latest`; InputError naming the store if none."""
        text = str(ref).strip()
        if text == "latest":
            row = self.db.execute("SELECT max(id) FROM batches").fetchone()
            if row[0] is None:
                raise InputError(
                    self.source, "no labelling batches yet (`toolscore disagreements`)"
                )
            return int(row[0])
        try:
            number = int(text)
        except ValueError:
            raise InputError(
                self.source, f"{ref!r} is not a batch id (a number or 'latest')"
            ) from None
        if self.db.execute("SELECT 1 FROM batches WHERE id = ?", (number,)).fetchone() is None:
            raise InputError(self.source, f"no batch {ref} in this store")
        return number

    def info(self, ref: int | str) -> BatchInfo:
        """The batch with this id (or `latest`)."""
        batch_id = self.resolve(ref)
        row = self.db.execute(
            "SELECT id, run_id, created, baseline, seed, requested, disagreements, strata, "
            "(SELECT count(*) FROM batch_cases WHERE batch_id = batches.id), "
            "agreements_requested, agreement_strata, "
            "(SELECT count(*) FROM batch_cases WHERE batch_id = batches.id "
            "AND population = 'agreement'), rubric FROM batches WHERE id = ?",
            (batch_id,),
        ).fetchone()
        batch, run, created, baseline, seed, requested, disagreements, strata, size = row[:9]
        agreements_requested, agreement_strata, agreements_sampled, rubric = row[9:]
        return BatchInfo(
            batch,
            run,
            created,
            baseline,
            seed,
            requested,
            disagreements,
            orjson.loads(strata),
            size,
            agreements_requested,
            None if agreement_strata is None else orjson.loads(agreement_strata),
            agreements_sampled,
            None if rubric is None else orjson.loads(rubric),
        )

    def all_batches(self) -> list[BatchInfo]:
        """Every batch, oldest first."""
        ids = [row[0] for row in self.db.execute("SELECT id FROM batches ORDER BY id")]
        return [self.info(batch_id) for batch_id in ids]

    def cases(self, batch_id: int) -> list[BatchCase]:
        """The batch's cases in labelling order."""
        rows = self.db.execute(
            "SELECT position, case_id, stratum, verdicts, view, population, entry FROM batch_cases "
            "WHERE batch_id = ? ORDER BY position",
            (batch_id,),
        )
        return [_batch_case(row) for row in rows]

    def case(self, batch_id: int, position: int) -> BatchCase | None:
        """The case at this position (1 is the first), or None past the end."""
        row = self.db.execute(
            "SELECT position, case_id, stratum, verdicts, view, population, entry FROM batch_cases "
            "WHERE batch_id = ? AND position = ?",
            (batch_id, position),
        ).fetchone()
        return None if row is None else _batch_case(row)

    def case_ids(self, batch_id: int) -> list[str]:
        """The ids of the batch's cases in labelling order."""
        rows = self.db.execute(
            "SELECT case_id FROM batch_cases WHERE batch_id = ? ORDER BY position", (batch_id,)
        )
        return [row[0] for row in rows]

    def position(self, batch_id: int, case_id: str) -> int | None:
        """Where the case with this id stands in the batch (None when it is not in it)."""
        row = self.db.execute(
            "SELECT position FROM batch_cases WHERE batch_id = ? AND case_id = ?",
            (batch_id, case_id),
        ).fetchone()
        return None if row is None else int(row[0])

    def labels(self, batch_id: int, labeller: str | None = None) -> list[Label]:
        """The labels given in this batch (by one labeller when named), in batch order."""
        query = (
            "SELECT l.case_id, l.labeller, l.label, l.note, l.updated FROM labels AS l "
            "JOIN batch_cases AS c ON c.batch_id = l.batch_id AND c.case_id = l.case_id "
            "WHERE l.batch_id = ?"
        )
        parameters: tuple[Any, ...] = (batch_id,)
        if labeller is not None:
            query += " AND l.labeller = ?"
            parameters += (labeller,)
        rows = self.db.execute(query + " ORDER BY c.position, l.labeller", parameters)
        return [Label(*row) for row in rows]

    def labellers(self, batch_id: int) -> list[str]:
        """Who labelled cases of this batch, by name."""
        rows = self.db.execute(
            "SELECT DISTINCT labeller FROM labels WHERE batch_id = ? ORDER BY labeller",
            (batch_id,),
        )
        return [row[0] for row in rows]

    def set_label(
        self, batch_id: int, case_id: str, labeller: str, label: str, note: str = ""
    ) -> Label:
        """Save (or replace) one labeller's label of one case, committed at once.

        InputError when the case is not in the batch, the label is not one of LABELS, or
        the labeller's name is empty.
        """
        self.set_labels(batch_id, [Label(case_id, labeller, label, note)])
        return self.labels_of(batch_id, case_id, labeller)

    def labels_of(self, batch_id: int, case_id: str, labeller: str) -> Label:
        """The stored label of one case by one labeller (InputError when there is none)."""
        row = self.db.execute(
            "SELECT case_id, labeller, label, note, updated FROM labels "
            "WHERE batch_id = ? AND case_id = ? AND labeller = ?",
            (batch_id, case_id, labeller),
        ).fetchone()
        if row is None:
            raise InputError(
                self.source, f"batch {batch_id}: {labeller} has not labelled {case_id!r}"
            )
        return Label(*row)

    def set_labels(
        self,
        batch_id: int,
        labels: Iterable[Label],
        source: str | None = None,
        lines: Sequence[int] | None = None,
    ) -> int:
        """Save many labels in one transaction (all or none); return how many.

        A label whose case is not in the batch, whose value is not one of LABELS, or that
        names no labeller is an InputError naming `source` (default: the store) and the
        label's line in it (`lines`, one per label, when the labels come from a file).
        """
        known = set(self.case_ids(batch_id))
        rows = []
        stamp = now()
        for index, item in enumerate(labels):
            line = lines[index] if lines is not None else None
            check_label(item, known, batch_id, source or self.source, line)
            rows.append(
                (
                    batch_id,
                    item.case_id,
                    item.labeller.strip(),
                    item.label,
                    item.note[:MAX_NOTE],
                    item.updated or stamp,
                )
            )
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.db.executemany(
                "INSERT INTO labels (batch_id, case_id, labeller, label, note, updated) "
                "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (batch_id, case_id, labeller) DO UPDATE "
                "SET label = excluded.label, note = excluded.note, updated = excluded.updated",
                rows,
            )
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return len(rows)

    def next_unlabelled(self, batch_id: int, labeller: str) -> int | None:
        """The position of the first case this labeller has not labelled (None when done)."""
        row = self.db.execute(
            "SELECT min(position) FROM batch_cases AS c WHERE batch_id = ? AND NOT EXISTS "
            "(SELECT 1 FROM labels AS l WHERE l.batch_id = c.batch_id "
            "AND l.case_id = c.case_id AND l.labeller = ?)",
            (batch_id, labeller),
        ).fetchone()
        return None if row[0] is None else int(row[0])


def check_label(
    item: Label, known: set[str], batch_id: int, source: str, line: int | None = None
) -> None:
    """InputError (naming `source`, the line and the field) unless `item` fits the batch."""
    if item.case_id not in known:
        raise InputError(
            source, f"{item.case_id!r} is not in batch {batch_id}", line=line, field="case_id"
        )
    if item.label not in LABELS:
        raise InputError(
            source, f"{item.label!r} is not one of {', '.join(LABELS)}", line=line, field="label"
        )
    if not item.labeller.strip():
        raise InputError(source, "must be a non-empty name", line=line, field="labeller")


def _batch_case(row: tuple[Any, ...]) -> BatchCase:
    position, case_id, stratum, verdicts, view, population, entry = row
    return BatchCase(
        position, case_id, stratum, orjson.loads(verdicts), unpack_json(view), population,
        None if entry is None else orjson.loads(entry),
    )  # fmt: skip
