"""A zip member is decompressed no further than its declared size (issue 25): a deflated
sample whose declared size was patched down is refused as soon as it inflates past it, in
memory bounded by that size, not by what it would inflate to."""

from __future__ import annotations

import os
import struct
import tracemalloc
import zipfile
import zlib
from pathlib import Path

import pytest

from toolscore.errors import InputError
from toolscore.inputs.zip_members import ENV_VAR, read_member

NAME = "samples/1_epoch_1.json"
CHUNK = b'{"id": 1, "messages": []}' + b" " * ((1 << 20) - 25)
"""One MiB of a sample (JSON, then blanks): deflate packs it about 1,000:1."""


def log_with(path: Path, mebibytes: int, declared: int | None = None, chunk: bytes = CHUNK) -> Path:
    """A `.eval` log of one deflated member of `mebibytes` MiB, written a chunk at a time;
    with `declared`, its declared size (local header and central directory) patched to it."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", "{}")
        with archive.open(NAME, "w") as member:
            for _ in range(mebibytes):
                member.write(chunk)
    if declared is not None:
        with zipfile.ZipFile(path) as archive:
            offset = archive.getinfo(NAME).header_offset
        data = bytearray(path.read_bytes())
        struct.pack_into("<L", data, offset + 22, declared)
        struct.pack_into("<L", data, data.rindex(b"PK\x01\x02") + 24, declared)
        path.write_bytes(bytes(data))
    return path


def read(path: Path) -> bytes:
    with zipfile.ZipFile(path) as archive:
        return read_member(str(path), archive, NAME)


def test_a_member_patched_to_claim_less_is_refused_within_its_declared_size(
    tmp_path: Path,
) -> None:
    """The reproducer, scaled down: 64 MiB that deflate to about 64 KB, declared as 600 KB.
    zipfile alone inflates all 64 MiB before its checksum refuses them; here the peak stays
    near the declared size."""
    path = log_with(tmp_path / "patched.eval", 64, declared=600_000)
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as caught:
            read(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert str(caught.value) == (
        f"{path}: {NAME}: inflates past its declared size of 600,000 bytes (refused)"
    )
    assert peak < 4 << 20, f"{peak:,} bytes held"


def test_a_member_that_claims_more_than_it_holds_is_refused(tmp_path: Path) -> None:
    path = log_with(tmp_path / "short.eval", 1, declared=(1 << 20) + 1)
    with pytest.raises(InputError, match="holds 1,048,576 bytes, short of its declared size"):
        read(path)


def test_a_deflate_stream_cut_short_is_refused(tmp_path: Path) -> None:
    """A compressed size patched down leaves the stream without its end."""
    path = log_with(tmp_path / "cut.eval", 1, chunk=os.urandom(1 << 19).hex().encode())
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(NAME)
    data = bytearray(path.read_bytes())
    struct.pack_into("<L", data, data.rindex(b"PK\x01\x02") + 20, info.compress_size // 2)
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match="deflate data ends early"):
        read(path)


def test_a_checksum_that_does_not_match_is_refused(tmp_path: Path) -> None:
    path = log_with(tmp_path / "crc.eval", 1)
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo(NAME)
    data = bytearray(path.read_bytes())
    struct.pack_into("<L", data, data.rindex(b"PK\x01\x02") + 16, info.CRC ^ 1)
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match="checksum does not match"):
        read(path)


def test_an_intact_member_reads_whole(tmp_path: Path) -> None:
    path = log_with(tmp_path / "intact.eval", 2)
    data = read(path)
    assert data == CHUNK * 2
    assert zlib.crc32(data) == zlib.crc32(CHUNK * 2)


def test_the_size_bound_is_set_by_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """$TOOLSCORE_MAX_SAMPLE_BYTES lowers (or raises) the 1 GiB bound; a value that is not a
    number of bytes is one line."""
    path = log_with(tmp_path / "bound.eval", 1)
    monkeypatch.setenv(ENV_VAR, str(1 << 20))
    assert read(path) == CHUNK
    monkeypatch.setenv(ENV_VAR, str((1 << 20) - 1))
    with pytest.raises(InputError, match=r"over 1,048,575 bytes or 1000:1: a zip bomb\?"):
        read(path)
    monkeypatch.setenv(ENV_VAR, "1G")
    with pytest.raises(InputError, match=r"TOOLSCORE_MAX_SAMPLE_BYTES must be a whole number"):
        read(path)


def test_other_compression_methods_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "bzip2.eval"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_BZIP2) as archive:
        archive.writestr(NAME, os.urandom(4096))
    with pytest.raises(InputError, match="zip method 12: only deflate and zstd are read"):
        read(path)
