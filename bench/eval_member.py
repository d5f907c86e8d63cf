"""What a deflated `.eval` member whose declared size was patched down makes toolscore hold
before it is refused (issue 25): peak memory and seconds of converting the log, and the error.

The member is `--mib` MiB of one JSON sample padded with blanks (deflate packs it about
1,000:1), its declared size patched to `--declared` bytes in the local header and the central
directory. Peak memory is tracemalloc's, during the conversion alone.

    PYTHONPATH=src python bench/eval_member.py --mib 600 --declared 600000
"""

from __future__ import annotations

import argparse
import io
import struct
import tempfile
import time
import tracemalloc
import zipfile
from pathlib import Path

from toolscore.errors import InputError
from toolscore.inputs.conversion import Conversion
from toolscore.inputs.inspect_logs import convert

NAME = "samples/1_epoch_1.json"
CHUNK = b'{"id": 1, "messages": []}' + b" " * ((1 << 20) - 25)


def write(path: Path, mib: int, declared: int) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", "{}")
        with archive.open(NAME, "w") as member:
            for _ in range(mib):
                member.write(CHUNK)
        offset = archive.getinfo(NAME).header_offset
    data = bytearray(path.read_bytes())
    struct.pack_into("<L", data, offset + 22, declared)
    struct.pack_into("<L", data, data.rindex(b"PK\x01\x02") + 24, declared)
    path.write_bytes(bytes(data))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=600, help="the member's real size, MiB")
    parser.add_argument("--declared", type=int, default=600_000, help="its declared size")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "patched.eval"
        write(path, args.mib, args.declared)
        size = path.stat().st_size / 1e3
        tracemalloc.start()
        started = time.perf_counter()
        try:
            convert(str(path), Conversion("outputs"), io.BytesIO())
            outcome = "read (not refused)"
        except InputError as error:
            outcome = error.message
        seconds = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    print("| member | file | seconds | peak MiB | outcome |")
    print("|---|---|---|---|---|")
    print(f"| {args.mib} MiB declared as {args.declared:,} bytes | {size:.0f} KB | "
          f"{seconds:.2f} | {peak / 2**20:.1f} | {outcome} |")  # fmt: skip


if __name__ == "__main__":
    main()
