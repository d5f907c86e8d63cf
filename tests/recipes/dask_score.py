# mypy: ignore-errors
# (The recipe is the README's as written, with no types: pandas has no stubs here.)
"""The README's Dask recipe (tests/test_batch_dask.py runs it in a folder holding a join,
`joined`, and the spec, `tools.yaml`): keep the two the same."""

import dask.dataframe as dd
import pandas as pd

from toolscore import load_specs
from toolscore.batch import BatchScorer, merge_outcomes, write_report
from toolscore.join import read_joined

joined = read_joined("joined")  # what `toolscore join --format parquet` wrote
specs = load_specs("tools.yaml")
scorer = BatchScorer(specs, (joined.cases, joined.outputs))


def score_part(part: pd.DataFrame) -> pd.DataFrame:  # a partition: its records in order
    return pd.DataFrame({"outcome": [scorer.score_records(part.to_dict("records"))]})


parts = dd.read_parquet(joined.paths())
outcomes = list(parts.map_partitions(score_part, meta={"outcome": object}).compute()["outcome"])
summary = merge_outcomes(scorer.new_summary(), outcomes)  # in case order
summary.unmatched_outputs = joined.unmatched_outputs
write_report("report.json", specs, summary, (o.report_lines for o in outcomes))
