"""Measure loading a large YAML spec: the bounded loader against plain `yaml.safe_load`.

Usage: python bench/specload.py [--tools N] [--repeat R] [--record]

A generated spec of N tools (10 arguments each, every kind, enums with aliases, a nested
object and a list) is loaded two ways, alternated so that both meet the same load: `before`
is what toolscore did until issue 11 (`yaml.safe_load`, the pure-Python loader, then
validation); `after` is `load_specs` (libyaml's parser with the duplicate-key, alias and depth
checks, then the same validation). The YAML parse alone is timed both ways too, and with
libyaml's loader without the checks (collection paused alike), for what the checks cost. Then
`load_specs` once its parse is in the cache of parsed specs (issue 30; the cache in a temporary
folder) against `load_specs(cache=False)`. Last, a 9-level alias bomb is loaded by
`load_specs`, which must refuse it at once.
"""

from __future__ import annotations

import argparse
import gc
import os
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import yaml

from run import Figure, best_of, record
from toolscore.errors import SpecError
from toolscore.specs.loading import load_specs, parse_specs
from toolscore.specs.parsing import parse_document

TOOL = """\
  tool_{n}:
    version: {n}
    args:
      order_id: exact
      name: {{kind: casefold, reason: "names are typed by hand"}}
      amount: {{kind: number, tol: 0.005}}
      count: {{kind: integer, coerce: true}}
      unit: {{kind: enum, values: [EUR, USD, GBP], aliases: {{euro: EUR}}, default: EUR}}
      day: date
      at: {{kind: datetime, tol: 60}}
      note: text
      tags: {{kind: list, items: exact, order: unordered}}
      where:
        kind: object
        args:
          city: casefold
          country: {{kind: exact, default: FR}}
"""


def spec_text(tools: int) -> str:
    """A spec of `tools` tools, as YAML."""
    return 'version: "bench"\ntools:\n' + "".join(TOOL.format(n=n) for n in range(tools))


def bomb_text(levels: int) -> str:
    """A spec whose enum values are `levels` nested levels of nine aliases each."""
    lines = ["tools:", "  t:", "    args:", "      x:", "        kind: enum", "        values:"]
    lines.append("          - &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]")
    lines += [f"          - &l{k} [{', '.join([f'*l{k - 1}'] * 9)}]" for k in range(1, levels)]
    return "\n".join(lines) + "\n"


def plain_load(content: bytes, loader: type[yaml.SafeLoader]) -> None:
    """libyaml's safe loading without the checks, collection paused as `parse_document` does."""
    gc.disable()
    try:
        yaml.load(content, Loader=loader)
    finally:
        gc.enable()


def before(path: Path) -> None:
    """Loading as toolscore did before: `yaml.safe_load`, then validation."""
    content = path.read_bytes()
    specs, problems = parse_specs(yaml.safe_load(content), str(path))
    assert specs is not None, problems


def main() -> None:
    """Time both loaders, print the table, and append it to RESULTS.md with --record."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=2000, help="tools in the generated spec")
    parser.add_argument("--repeat", type=int, default=5, help="timed repetitions (best is kept)")
    parser.add_argument("--record", action="store_true", help="append the results to RESULTS.md")
    args = parser.parse_args()
    started, clock = datetime.now(UTC), time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        os.environ["TOOLSCORE_CACHE_DIR"] = str(Path(folder) / "cache")
        spec = Path(folder) / "tools.yaml"
        spec.write_text(spec_text(args.tools))
        content = spec.read_bytes()
        old = new = old_parse = new_parse = c_parse = cached = float("inf")
        c_loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        for _ in range(args.repeat):  # alternated, so that both meet the same load
            old = min(old, best_of(1, lambda: before(spec)))
            new = min(new, best_of(1, lambda: load_specs(spec, cache=False)))
            load_specs(spec)  # the parse goes to the cache
            cached = min(cached, best_of(1, lambda: load_specs(spec)))
            old_parse = min(old_parse, best_of(1, lambda: yaml.safe_load(content)))
            new_parse = min(new_parse, best_of(1, lambda: parse_document(content, str(spec))))
            c_parse = min(c_parse, best_of(1, lambda: plain_load(content, c_loader)))
        bomb = Path(folder) / "bomb.yaml"
        bomb.write_text(bomb_text(9))
        start = time.perf_counter()
        try:
            load_specs(bomb)
        except SpecError as error:
            refused = str(error).split(": ", 1)[1]
        else:
            raise SystemExit("the alias bomb was accepted")
        bomb_seconds = time.perf_counter() - start
    size = f"{len(content) / 1e6:.1f} MB, {args.tools:,} tools, best of {args.repeat}"
    figures = [
        Figure("l1. load_specs, before (yaml.safe_load)", f"{old:.2f} s", "-", None, size),
        Figure("l2. load_specs, after (bounded libyaml loader)", f"{new:.2f} s", "-", None, size),
        Figure("l3. before / after", f"{old / new:.2f}x", ">= 1x", old >= new, "whole load"),
        Figure("l4. YAML parse alone, before", f"{old_parse:.2f} s", "-", None, "safe_load"),
        Figure("l5. YAML parse alone, after", f"{new_parse:.2f} s", "-", None, "with checks"),
        Figure("l6. parse before / after", f"{old_parse / new_parse:.2f}x", "-", None, ""),
        Figure("l7. YAML parse, libyaml without the checks", f"{c_parse:.2f} s", "-", None,
               f"the checks add {(new_parse / c_parse - 1) * 100:.0f}%"),
        Figure("l8. 9-level alias bomb refused", f"{bomb_seconds * 1000:.0f} ms", "< 1 s",
               bomb_seconds < 1, refused),
        Figure("l9. load_specs, parse from the cache", f"{cached:.2f} s", "-", None,
               "validated and compiled as ever"),
        Figure("l10. uncached / cached", f"{new / cached:.2f}x", "> 1x", new > cached,
               "whole load"),
    ]  # fmt: skip
    table = ["| figure | measured | target | result | notes |", "|---|---|---|---|---|"]
    table += [figure.row() for figure in figures]
    print("\n".join(table))
    if args.record:
        command = f"python bench/specload.py --tools {args.tools} --repeat {args.repeat} --record"
        record(command, started, time.perf_counter() - clock, [], table)


if __name__ == "__main__":
    main()
