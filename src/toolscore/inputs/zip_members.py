"""A zip member's bytes, decompressed no further than the size the zip declares for it.

Python's zipfile truncates a member to its declared size only after decompressing each read
whole, so a small deflated member whose declared size was patched down inflates in memory
first (a 615 KB member to 1.24 GB) and is refused by its checksum afterwards. Here a
compressed member is read raw and decompressed with an output bound of one byte past its
declared size: a member with more is refused as soon as that byte appears, and one with less,
a deflate stream cut short, or a checksum that differs, is refused too. Stored members (no
compression) are read by zipfile, which reads no more than their bytes in the file.

The declared size itself is bounded before anything is read (`max_member_bytes`, and a
compression ratio of at most `MAX_RATIO`): what a log can make toolscore hold is one member
of at most that size.
"""

from __future__ import annotations

import importlib
import struct
import zlib
from typing import TYPE_CHECKING, Any

from toolscore.errors import InputError
from toolscore.inputs.bounds import env_limit

if TYPE_CHECKING:
    import zipfile

MAX_MEMBER_BYTES = 1 << 30
"""The largest member a log may hold uncompressed by default (1 GiB)."""
ENV_VAR = "TOOLSCORE_MAX_SAMPLE_BYTES"
"""The environment variable that sets another bound, in bytes."""
MAX_RATIO = 1000
"""The largest compression ratio a member may claim: JSON samples compress about 5-20:1, and
deflate cannot pass about 1,032:1."""
STORED, DEFLATED, ZSTD = 0, 8, 93
"""The zip compression methods read: none, deflate (Python's zipfile, older Inspect) and
zstd (Inspect)."""
LOCAL_HEADER = struct.Struct("<4s5H3L2H")
"""A zip member's local header: signature ... name length, extra field length."""
ZIP_MAGIC = b"PK\x03\x04"


def max_member_bytes(path: str) -> int:
    """The bound on a member's uncompressed size: $TOOLSCORE_MAX_SAMPLE_BYTES, else 1 GiB."""
    return env_limit(ENV_VAR, MAX_MEMBER_BYTES, path, "bytes")


def read_member(path: str, archive: zipfile.ZipFile, name: str) -> bytes:
    """The bytes of member `name` of the zip at `path`, checked against its declared size and
    checksum; an input error naming the member when they do not hold or it claims too much."""
    info = archive.getinfo(name)
    limit = max_member_bytes(path)
    if info.file_size > limit or info.file_size > MAX_RATIO * max(info.compress_size, 1):
        message = (
            f"a member of {info.file_size:,} bytes from {info.compress_size:,} compressed is "
            f"refused (over {limit:,} bytes or {MAX_RATIO}:1: a zip bomb?)"
        )
        raise InputError(path, message, field=name)
    if info.compress_type == STORED:
        return archive.read(name)  # no larger than its bytes; zipfile checks size and CRC
    if info.compress_type not in (DEFLATED, ZSTD):
        message = f"compressed with zip method {info.compress_type}: only deflate and zstd are read"
        raise InputError(path, message, field=name)
    raw = _raw(path, info, name)
    if info.compress_type == DEFLATED:
        data = _inflated(path, name, raw, info.file_size)
    else:
        data = _unzstd(path, name, raw, info.file_size)
    if len(data) > info.file_size:
        message = f"inflates past its declared size of {info.file_size:,} bytes (refused)"
        raise InputError(path, message, field=name)
    if len(data) < info.file_size:
        message = f"holds {len(data):,} bytes, short of its declared size of {info.file_size:,}"
        raise InputError(path, message, field=name)
    if zlib.crc32(data) != info.CRC:
        raise InputError(path, "the member's checksum does not match", field=name)
    return data


def _raw(path: str, info: zipfile.ZipInfo, name: str) -> bytes:
    """The member's compressed bytes, found through its local header."""
    with open(path, "rb") as handle:
        handle.seek(info.header_offset)
        header = handle.read(LOCAL_HEADER.size)
        if len(header) < LOCAL_HEADER.size or not header.startswith(ZIP_MAGIC):
            raise InputError(path, "not a readable Inspect eval log (bad zip)", field=name)
        name_length, extra_length = LOCAL_HEADER.unpack(header)[-2:]
        handle.seek(info.header_offset + LOCAL_HEADER.size + name_length + extra_length)
        return handle.read(info.compress_size)


def _inflated(path: str, name: str, raw: bytes, size: int) -> bytes:
    """Raw deflate data decompressed to at most `size + 1` bytes; the extra byte is there
    only when the stream holds more than `size`."""
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    try:
        data = inflater.decompress(raw, size + 1)
        if len(data) == size and not inflater.eof:  # at the size: the stream must end here
            data += inflater.decompress(inflater.unconsumed_tail, 1)
    except zlib.error as error:
        raise InputError(path, f"not readable deflate data ({error})", field=name) from None
    if len(data) <= size and not inflater.eof:
        raise InputError(path, "the member's deflate data ends early", field=name)
    return data


def _unzstd(path: str, name: str, raw: bytes, size: int) -> bytes:
    """zstd data decompressed to at most `size + 1` bytes, by `zstandard` (the `inspect`
    extra) or, from Python 3.14 on, the standard library's `compression.zstd`."""
    try:
        import zstandard  # noqa: PLC0415  (an optional library: the `inspect` extra)
    except ImportError:
        return _stdlib_unzstd(path, name, raw, size)
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
        return reader.read(size + 1)
    except zstandard.ZstdError as error:
        raise InputError(path, f"not readable zstd data ({error})", field=name) from None


def _stdlib_unzstd(path: str, name: str, raw: bytes, size: int) -> bytes:
    try:
        zstd: Any = importlib.import_module("compression.zstd")  # Python 3.14 on
    except ImportError:
        message = "its samples are zstd-compressed: pip install 'toolscore[inspect]' to read them"
        raise InputError(path, message, field=name) from None
    decompressor = zstd.ZstdDecompressor()
    try:
        data: bytes = decompressor.decompress(raw, size + 1)
    except zstd.ZstdError as error:
        raise InputError(path, f"not readable zstd data ({error})", field=name) from None
    return data
