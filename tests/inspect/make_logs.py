"""Write the Inspect eval log fixtures with inspect_ai itself, offline (the mock model of
task.py): the task run twice per sample (epochs 2), as a `.eval` log and as a `.json` log;
the `.eval` log is also the README's example (examples/inspect/).

Run from the repository root: `PYTHONPATH=src python tests/inspect/make_logs.py`.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from inspect_ai import eval as inspect_eval

HERE = Path(__file__).parent
EXAMPLE = HERE.parent.parent / "examples" / "inspect"
sys.path.insert(0, str(HERE))

from task import mock_model, refunds  # noqa: E402  (a sibling module, found through sys.path)


def main() -> None:
    for log_format in ("eval", "json"):
        with tempfile.TemporaryDirectory() as log_dir:
            inspect_eval(
                refunds(epochs=2),
                model=mock_model(),
                log_dir=log_dir,
                log_format=log_format,
                display="none",
            )
            (written,) = Path(log_dir).glob(f"*.{log_format}")
            shutil.copyfile(written, HERE / "fixtures" / f"refunds.{log_format}")
    shutil.copyfile(HERE / "fixtures" / "refunds.eval", EXAMPLE / "refunds.eval")


if __name__ == "__main__":
    main()
