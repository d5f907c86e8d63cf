"""The per-replay copy of a tau2 state, before and after `restore`, side by side in one
process: CPU seconds of `copy.deepcopy` of the domain's initial Environment (what every
replay cost before) against `checkout.restore` of a used one (what a replay costs now, once a
used state is in the pool), on states changed by each task's gold actions.

Run in the bench venv (setup.sh):
    bench/tau2/.venv/bin/python bench/tau2/tau2_restore.py [--domain retail] [--tasks 20]

The final state's snapshot is taken for the verdict either way, so it is not counted; the
restored state is checked to dump exactly as the initial one does.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("LOGURU_LEVEL", "WARNING")

import orjson

from toolscore.tau2 import checkout, import_tau2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--domain", default="retail")
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--checkout", type=Path, default=None)
    args = parser.parse_args()
    recorded = Path(sys.prefix) / "tau2-checkout"
    repo = str((args.checkout or Path(recorded.read_text().strip())).resolve())
    imported = import_tau2(repo, args.domain)
    plans = [c["plans"][0] for c in imported.cases if c["plans"] and c["plans"][0]]
    original = checkout.load_environment(repo, args.domain)
    initial = checkout.snapshot(original)
    initial_text = orjson.dumps(initial, option=orjson.OPT_SORT_KEYS)
    deep, restored, changed, refused = 0.0, 0.0, 0, 0
    for plan in plans[: args.tasks]:
        started = time.process_time()
        state = copy.deepcopy(original)
        deep += time.process_time() - started
        for call in plan:
            # tau2 keeps what a raising tool changed, as the import's on_error: keep does
            with contextlib.suppress(Exception):
                checkout.call_tool(state, call["name"], call["args"])
        compared = checkout.snapshot(state)
        changed += compared != initial
        started = time.process_time()
        ok = checkout.restore(state, compared, original, initial)
        restored += time.process_time() - started
        if not ok:
            refused += 1
            continue
        after = orjson.dumps(checkout.snapshot(state), option=orjson.OPT_SORT_KEYS)
        assert after == initial_text, "a restored state differs from the initial one"
    n = min(args.tasks, len(plans))
    print(
        json.dumps(
            {
                "domain": args.domain,
                "states": n,
                "changed_by_their_actions": changed,
                "refused": refused,
                "deepcopy_cpu_s_per_state": round(deep / n, 4),
                "restore_cpu_s_per_state": round(restored / n, 4),
                "ratio": round(deep / restored, 1) if restored else None,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
