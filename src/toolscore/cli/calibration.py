"""`toolscore disagreements | batches | labels | calibrate`: calibrating the scorer.

Sample the cases of a stored run where the rule scorer and a baseline disagree into a
labelling batch; list batches; move labels in and out as JSON Lines or CSV; and measure each
scorer against the people who labelled (`toolscore label` serves the labelling page).
"""

from __future__ import annotations

import sys

import click
import orjson

from toolscore import files
from toolscore.calibration.batches import Batches
from toolscore.calibration.calibrate import calibrate
from toolscore.calibration.disagreements import DEFAULT_SIZE, sample_disagreements
from toolscore.calibration.labels_io import FORMATS, export_rows, file_format, import_labels, render
from toolscore.calibration.rubric_calibrate import calibrate_rubric
from toolscore.calibration.rubric_sample import sample_rubric
from toolscore.calibration.terminal import (
    render_batch,
    render_calibration,
    render_rubric_calibration,
)
from toolscore.cli.common import console, input_errors
from toolscore.cli.options import db_option, json_option
from toolscore.cli.store import print_json
from toolscore.errors import InputError
from toolscore.report.printable import printable
from toolscore.store import open_store
from toolscore.store.codec import BASELINES


def write_atomically(path: str, data: bytes) -> None:
    """Write a file whole or not at all (a temporary file renamed over it)."""
    try:
        files.write_atomically(path, data)
    except OSError as error:
        raise InputError(path, f"cannot write: {error.strerror or error}") from None


def _write(out_path: str | None, data: bytes) -> None:
    if out_path is None or out_path == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    else:
        write_atomically(out_path, data)


def batch_jsonl(batches: Batches, batch_id: int) -> bytes:
    """A batch as JSON Lines: one case a line with its stratum, population, verdicts and
    view (an item of a rubric batch: its stratum, verdicts, view and stored entry)."""
    return b"".join(
        orjson.dumps(
            {
                "batch": batch_id,
                "position": case.position,
                "case_id": case.case_id,
                "stratum": case.stratum,
                **({"population": case.population} if case.entry is None else {}),
                "verdicts": case.verdicts,
                "view": case.view,
                **({} if case.entry is None else {"entry": case.entry}),
            }
        )
        + b"\n"
        for case in batches.cases(batch_id)
    )


@click.command("disagreements")
@click.argument("run")
@click.option(
    "--vs",
    type=click.Choice(BASELINES),
    default="exact",
    show_default=True,
    help="The baseline the rule scorer disagrees with.",
)
@click.option(
    "--n", "size", type=click.IntRange(1), default=DEFAULT_SIZE, show_default=True,
    help="How many cases to sample.",
)  # fmt: skip
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the sample.")
@click.option(
    "--agreements", "agreements", metavar="K", type=int, default=0, show_default=True,
    help="Also sample K cases where the scorers agree (stratified, in proportion), so that "
    "the labels estimate the rule scorer's accuracy on the whole run.",
)  # fmt: skip
@click.option(
    "--rubric", metavar="NAME",
    help="Sample the run's scored results of this rubric instead, stratified by score, to "
    "calibrate it (a judge, most often).",
)  # fmt: skip
@click.option("--out", "out_path", metavar="FILE", help="Also write the batch as JSON Lines.")
@db_option
@json_option
@input_errors
def disagreements_command(
    run: str, vs: str, size: int, seed: int, agreements: int, rubric: str | None,
    out_path: str | None, db_path: str | None, as_json: bool,
) -> None:  # fmt: skip
    """Sample a stored run's cases where the rule scorer and a baseline disagree, stratified
    by tool and deciding rule, into a labelling batch in the store (with --rubric: the run's
    results of one rubric, stratified by score)."""
    if agreements < 0:  # checked before the store is opened (the library checks it too)
        raise InputError("--agreements", f"must be 0 or more, not {agreements}")
    if rubric is not None and agreements:
        raise InputError("--agreements", "samples calls; a rubric batch has no agreements")
    with open_store(db_path, create=False) as store:
        if rubric is not None:
            batch_id = sample_rubric(store, run, rubric, size, seed)
        else:
            batch_id = sample_disagreements(store, run, vs, size, seed, agreements)
        info = Batches.of(store).info(batch_id)
        if out_path is not None:
            write_atomically(out_path, batch_jsonl(Batches.of(store), batch_id))
    if as_json:
        print_json(info.to_json())
        return
    out = console()
    render_batch(out, info, 0)
    out.print(
        f"label it in the browser: toolscore label {batch_id}; "
        f"then: toolscore calibrate {batch_id}",
        soft_wrap=True,
    )


@click.command("batches")
@db_option
@json_option
@input_errors
def batches_command(db_path: str | None, as_json: bool) -> None:
    """List the labelling batches with how far their labelling has gone."""
    with open_store(db_path, read_only=True) as store:
        found = Batches.of(store).all_batches()
        labelled = {
            info.id: {
                who: len(Batches.of(store).labels(info.id, who))
                for who in Batches.of(store).labellers(info.id)
            }
            for info in found
        }
    if as_json:
        print_json([{**info.to_json(), "labelled": labelled[info.id]} for info in found])
        return
    out = console()
    if not found:
        out.print("no labelling batches yet (`toolscore disagreements RUN`)")
    for info in found:
        progress = ", ".join(f"{who} {n}/{info.size}" for who, n in labelled[info.id].items())
        agreeing = f" ({info.agreements_sampled} agreements)" if info.agreements_sampled else ""
        if info.rubric is not None:
            out.print(
                printable(
                    f"batch {info.id}: run {info.run_id}, rubric {info.rubric['name']}, "
                    f"{info.size} items, seed {info.seed}, {info.created}; labelled: "
                    f"{progress or 'not yet'}"
                ),
                soft_wrap=True,
            )
            continue
        out.print(
            printable(
                f"batch {info.id}: run {info.run_id}, rules vs {info.baseline}, {info.size} "
                f"cases{agreeing}, seed {info.seed}, {info.created}; labelled: "
                f"{progress or 'not yet'}"
            ),
            soft_wrap=True,
        )


@click.group("labels")
def labels_group() -> None:
    """Labels in and out of a batch, as JSON Lines or CSV."""


@labels_group.command("export")
@click.argument("batch")
@click.option("--out", "out_path", metavar="FILE", help="Write here (default: stdout).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), help="Default: from --out's name.")
@click.option("--labeller", metavar="NAME", help="Only this labeller's labels.")
@db_option
@input_errors
def labels_export_command(
    batch: str, out_path: str | None, fmt: str | None, labeller: str | None, db_path: str | None
) -> None:
    """Write a batch's labels (batch, position, case_id, labeller, label, note, updated)."""
    with open_store(db_path, read_only=True) as store:
        batch_id = Batches.of(store).resolve(batch)
        rows = export_rows(Batches.of(store), batch_id, labeller)
    _write(out_path, render(rows, file_format(out_path or "", fmt)))


@labels_group.command("import")
@click.argument("batch")
@click.argument("path", metavar="FILE")
@click.option("--format", "fmt", type=click.Choice(FORMATS), help="Default: from FILE's name.")
@click.option("--labeller", metavar="NAME", help="For rows that name no labeller.")
@db_option
@input_errors
def labels_import_command(
    batch: str, path: str, fmt: str | None, labeller: str | None, db_path: str | None
) -> None:
    """Store labels given elsewhere (case_id and label required; a label replaces the same
    labeller's earlier one). A row for a case not in the batch refuses the whole file."""
    with open_store(db_path, create=False) as store:
        batch_id = Batches.of(store).resolve(batch)
        count = import_labels(Batches.of(store), batch_id, path, file_format(path, fmt), labeller)
    console().print(f"stored {count} labels in batch {batch_id}")


@click.command("calibrate")
@click.argument("batch")
@click.option("--labeller", metavar="NAME", help="Only this labeller (default: the majority).")
@click.option(
    "--show", "limit", type=click.IntRange(0), default=10, show_default=True,
    help="How many cases to print per group of scorer bugs.",
)  # fmt: skip
@db_option
@json_option
@input_errors
def calibrate_command(
    batch: str, labeller: str | None, limit: int, db_path: str | None, as_json: bool
) -> None:
    """Agreement of the person with each scorer (counts and Cohen's kappa), between
    labellers, the confusion matrix, and the scorer bugs grouped by the rule that decided."""
    with open_store(db_path, read_only=True) as store:
        if Batches.of(store).info(batch).rubric is not None:
            judged = calibrate_rubric(Batches.of(store), batch, labeller)
            if as_json:
                print_json(judged.to_json())
            else:
                render_rubric_calibration(console(), judged)
            return
        result = calibrate(Batches.of(store), batch, labeller)
    if as_json:
        print_json(result.to_json())
    else:
        render_calibration(console(), result, limit)


def register(group: click.Group) -> None:
    """Add the calibration commands to the `toolscore` command group."""
    for command in (disagreements_command, batches_command, labels_group, calibrate_command):
        group.add_command(command)
