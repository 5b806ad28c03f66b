"""Read the members of .zip and .tar archives (plain, or compressed by gzip, bzip2 or xz) and
single compressed files (.gz, .bz2, .xz) in memory, within a
:class:`~kgrag.ingest.containers.limits.Budget`. Nothing is extracted to disk."""

from __future__ import annotations

import bz2
import io
import lzma
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from kgrag.ingest.containers.limits import (
    CHUNK,
    Budget,
    ContainerRefused,
    MemberRefused,
    hidden,
    unsafe_name,
)
from kgrag.ingest.models import SkipKind


@dataclass(frozen=True, slots=True)
class Member:
    """One file inside a container: its name there and its bytes."""

    name: str
    data: bytes


@dataclass(frozen=True, slots=True)
class Refused:
    """A member not read: a failure (``kind`` None) or a skip of that kind."""

    name: str
    reason: str
    kind: SkipKind | None = None


Entry = Member | Refused


def zip_members(data: bytes, budget: Budget) -> Iterator[Entry]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = [i for i in archive.infolist() if not i.is_dir()]
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as e:
        raise ContainerRefused(f"corrupt or unreadable zip archive: {e}") from e
    budget.count_members(len(infos))
    for info in infos:
        name = info.filename
        problem = unsafe_name(name)
        if problem is not None:
            yield Refused(name, problem)
            continue
        if hidden(name):
            continue
        if info.flag_bits & 0x1:
            yield Refused(name, "member is encrypted (password-protected); not read")
            continue
        try:
            budget.check_declared(info.file_size, info.compress_size)
            with archive.open(info) as stream:
                content = budget.read(stream, info.compress_size)
        except MemberRefused as e:
            yield Refused(name, e.reason)
            continue
        except (
            zipfile.BadZipFile,
            zlib.error,
            OSError,
            EOFError,
            NotImplementedError,
            ValueError,  # a member's header offset outside the archive ("negative seek value")
        ) as e:
            yield Refused(name, f"corrupt member: {type(e).__name__}: {e}")
            continue
        yield Member(name, content)


@dataclass(frozen=True, slots=True)
class Compression:
    """A single-file compression format: its name in messages, its magic bytes, and a new
    decompressor of one stream (the ``bz2``/``lzma`` decompressor interface)."""

    name: str
    magic: bytes
    decompressor: Callable[[], _Decompressor]


class _Decompressor(Protocol):
    @property
    def eof(self) -> bool: ...
    @property
    def unused_data(self) -> bytes: ...
    @property
    def needs_input(self) -> bool: ...
    def decompress(self, data: bytes, max_length: int = -1) -> bytes: ...


class _Inflate:
    """zlib's gzip decompressor behind the ``bz2``/``lzma`` interface (input it could not use
    within ``max_length`` is kept and used first next time)."""

    def __init__(self) -> None:
        self._inflate = zlib.decompressobj(31)
        self._tail = b""

    @property
    def eof(self) -> bool:
        return self._inflate.eof

    @property
    def unused_data(self) -> bytes:
        return self._inflate.unused_data

    @property
    def needs_input(self) -> bool:
        return not self._tail

    def decompress(self, data: bytes, max_length: int = -1) -> bytes:
        out = self._inflate.decompress(self._tail + data, max(0, max_length))
        self._tail = self._inflate.unconsumed_tail
        return out


GZIP = Compression("gzip", b"\x1f\x8b", _Inflate)
BZIP2 = Compression("bzip2", b"BZh", bz2.BZ2Decompressor)
XZ = Compression("xz", b"\xfd7zXZ\x00", lzma.LZMADecompressor)


#: Compressed bytes handed to a decompressor at a time: the ratio check counts what was handed,
#: so a bomb is stopped within this much input of the bound.
INPUT_CHUNK = 4096


class DecompressStream:
    """A compressed stream (one or more concatenated streams) decompressed as it is read,
    refusing to produce more than the budget allows or more than ``max_ratio`` times its
    input: a bomb stops within one block of the bound, never after inflating it."""

    def __init__(self, data: bytes, budget: Budget, compression: Compression) -> None:
        if not data.startswith(compression.magic):
            raise ContainerRefused(f"not {compression.name} data (no {compression.name} header)")
        self._data = data
        self._pos = 0
        self._kind = compression
        self._codec = compression.decompressor()
        self._buffer = b""
        self._limits = budget.limits
        self.produced = 0

    def _fill(self) -> bytes:
        name = self._kind.name
        while True:
            if self._codec.eof:
                self._pos -= len(self._codec.unused_data)
                if not self._data[self._pos :].strip(b"\0"):
                    return b""
                self._codec = self._kind.decompressor()  # the next stream
            source = b""
            if self._codec.needs_input:
                if self._pos >= len(self._data):
                    raise ContainerRefused(f"{name} data ends early (truncated?)")
                source = self._data[self._pos : self._pos + INPUT_CHUNK]
                self._pos += len(source)
            try:
                out = self._codec.decompress(source, CHUNK)
            except (zlib.error, OSError, EOFError, lzma.LZMAError) as e:
                raise ContainerRefused(f"corrupt {name} data: {e}") from e
            if out:
                self._account(len(out))
                return out

    def _account(self, n: int) -> None:
        lim = self._limits
        name = self._kind.name
        self.produced += n
        if self.produced > lim.max_total_bytes:
            raise ContainerRefused(
                f"expands to over {lim.max_total_bytes / (1 << 30):.1f} GiB; "
                f"not read (a {name} bomb?)"
            )
        consumed = max(1, self._pos)
        if self.produced > lim.ratio_floor and self.produced > lim.max_ratio * consumed:
            raise ContainerRefused(
                f"expands over {lim.max_ratio:.0f} times its compressed size "
                f"(a {name} bomb?); reading stopped at {self.produced:,} bytes"
            )

    def read(self, size: int = -1) -> bytes:
        while size < 0 or len(self._buffer) < size:
            block = self._fill()
            if not block:
                break
            self._buffer += block
        if size < 0:
            out, self._buffer = self._buffer, b""
        else:
            out, self._buffer = self._buffer[:size], self._buffer[size:]
        return out


def decompress(data: bytes, budget: Budget, compression: Compression) -> bytes:
    """The whole content of a compressed file, within the per-file limit and the budget."""
    stream = DecompressStream(data, budget, compression)
    try:
        return budget.read(stream, len(data))
    except MemberRefused as e:
        raise ContainerRefused(e.reason) from e


def tar_members(
    data: bytes, budget: Budget, compression: Compression | None = None
) -> Iterator[Entry]:
    """Members of a tar archive (``compression`` None: not compressed), read as a stream
    (``r|``): one member in memory at a time."""
    source: DecompressStream | io.BytesIO = (
        DecompressStream(data, budget, compression) if compression else io.BytesIO(data)
    )
    try:
        with tarfile.open(fileobj=source, mode="r|") as archive:  # type: ignore[call-overload]
            for info in archive:
                if info.isdir():
                    continue
                budget.count_members(1)
                name = info.name
                problem = unsafe_name(name)
                if problem is not None:
                    yield Refused(name, problem)
                    continue
                if hidden(name):
                    continue
                if not info.isfile():
                    yield Refused(name, "a link or special file, not a regular file", "unreadable")
                    continue
                stream = archive.extractfile(info)
                if stream is None:
                    continue
                try:
                    budget.check_declared(info.size, None)
                    content = budget.read(stream, None)
                except MemberRefused as e:
                    yield Refused(name, e.reason)
                    continue
                yield Member(name, content)
    except (tarfile.TarError, EOFError, OSError, zlib.error, lzma.LZMAError) as e:
        raise ContainerRefused(f"corrupt or unreadable tar archive: {e}") from e
