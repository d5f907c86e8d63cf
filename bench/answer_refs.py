"""Measure how finding a returned value in a response grows with the response's length.

Usage: PYTHONPATH=src python bench/answer_refs.py [--sizes KB ...] [--repeat R]

For each shape of text (prose with numbers, digits and commas only, signs and exponents
only, letters only) and each size, times `missing_ref_outputs` looking for a number, a date
and a boolean that the text does not hold (the whole text is read), and prints seconds per
MB: a flat column is linear growth. One process, one core.
"""

from __future__ import annotations

import argparse
import time

from toolscore.core.answers import ResultRef, ScoredCalls, missing_ref_outputs
from toolscore.core.model import Call
from toolscore.core.rules import compile_rule
from toolscore.state.outputs import normalise_text

SHAPES = {
    "prose": "Your balance is 1,250.00 EUR, opened on 2024-05-03; it is untrue. ",
    "commas": "1,234,567,890,123,",
    "signs": "-1e-5e+-e--+1.2.3.",
    "letters": "abcdefghij",
}

REFS = (
    ResultRef("/n", label="look", written="n"),
    ResultRef("/d", label="look", rule=compile_rule({"kind": "date", "formats": ["%d/%m/%Y"]})),
    ResultRef("/b", label="look", written="b"),
)
SCORED = ScoredCalls(
    (Call("lookup", {}, result={"n": 1205.5, "d": "2024-03-05", "b": True}),),
    (0,),
    ((0, 0),),
    (Call("lookup", {}, label="look"),),
)


def seconds(text: str, repeat: int) -> float:
    """The best of `repeat` runs of the three look-ups over `text`."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        missing = missing_ref_outputs(
            REFS, [text], SCORED, of_value=normalise_text, of_text=normalise_text
        )
        best = min(best, time.perf_counter() - start)
        assert len(missing) == 3 or "untrue" not in text
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 10000])
    parser.add_argument("--repeat", type=int, default=3)
    options = parser.parse_args()
    print("| shape | size | seconds | seconds per MB |")
    print("|---|---|---|---|")
    for shape, unit in SHAPES.items():
        for size in options.sizes:
            text = (unit * (size * 1000 // len(unit) + 1))[: size * 1000]
            took = seconds(text, options.repeat)
            print(f"| {shape} | {size:,} KB | {took:.3f} | {took / (size / 1000):.3f} |")


if __name__ == "__main__":
    main()
