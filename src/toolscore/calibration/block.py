"""The calibration numbers of a stored run in one small, plain block, for the HTML report.

The report shows how far a person trusts the rule scorer on this run: the newest labelled
batch of the run is calibrated (majority labels) and five numbers are kept, each with its
cases and 95% interval or a note saying why it has none.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolscore.calibration.batches import Batches
from toolscore.calibration.calibrate import Calibration, calibrate
from toolscore.stats.intervals import wilson

if TYPE_CHECKING:
    from toolscore.store.database import Store


def report_block(store_or_db: Store | str | Path, run_id: int | str) -> dict[str, Any] | None:
    """`{"labellers": [...], "metrics": [{"name", "unit", "value", "n", "ci95", "note"}]}`
    for the run's newest batch with labels, or None when no batch of the run has any. `unit`
    is `share` (a proportion), `kappa` or `count` (cases in the run).

    `store_or_db` is an open results store, or the path of one (opened read-only, as
    `calibrate` opens it, and closed again); `run_id` is anything `Store.run` accepts.
    """
    from toolscore.store import Store, open_store  # noqa: PLC0415 - the store imports calibration

    if isinstance(store_or_db, Store):
        return _block(store_or_db, run_id)
    with open_store(store_or_db, read_only=True) as store:
        return _block(store, run_id)


def _block(store: Store, run_ref: int | str) -> dict[str, Any] | None:
    run = store.run(run_ref)
    row = store.db.execute(
        "SELECT max(b.id) FROM batches AS b WHERE b.run_id = ? "
        "AND EXISTS (SELECT 1 FROM labels AS l WHERE l.batch_id = b.id)",
        (run.id,),
    ).fetchone()
    if row[0] is None:
        return None
    found = calibrate(Batches.of(store), int(row[0]))
    return {"labellers": found.labellers, "metrics": metrics(found)}


def metrics(found: Calibration) -> list[dict[str, Any]]:
    """The five numbers of the block, in the order the report shows them."""
    batch = found.batch
    rules = found.scorers["rules"]
    bugs = found.bug_rate
    accuracy = found.accuracy
    agreed = wilson(rules.agreed, rules.n)
    return [
        _metric(
            "agreement with the rule scorer", "share", rules.rate, rules.n, agreed,
            f"batch {batch.id}: labelled cases where the person's label (majority) is the rule "
            "verdict, as a share of the sample (not weighted to the run); Wilson interval",
        ),
        _metric(
            "Cohen's kappa, person and rule scorer", "kappa", rules.kappa, rules.n, None,
            rules.kappa_undefined or "",
        ),
        _metric(
            "scorer-bug rate", "share", bugs.rate, bugs.labelled, bugs.interval,
            f"labelled disagreements with {batch.baseline} where the person contradicts the "
            "rule verdict; Wilson interval",
        ),
        _metric(
            "estimated scorer bugs in the run", "count", bugs.estimate, bugs.labelled,
            bugs.estimate_interval,
            bugs.method or "not available: no disagreement of the batch is labelled yet",
        ),
        _metric(
            "estimated rule-scorer accuracy on the run", "share", accuracy.value,
            accuracy.labelled,
            accuracy.interval,
            "; ".join(part for part in (accuracy.method, accuracy.note) if part),
        ),
    ]  # fmt: skip


def _metric(
    name: str,
    unit: str,
    value: float | None,
    n: int,
    ci95: tuple[float, float] | None,
    note: str,
) -> dict[str, Any]:
    return {
        "name": name,
        "unit": unit,
        "value": None if value is None else float(value),
        "n": n,
        "ci95": None if ci95 is None else [float(ci95[0]), float(ci95[1])],
        "note": note,
    }
