"""Read the members of .zip, .tar, .tgz/.tar.gz archives and .gz files in memory, within a
:class:`~kgrag.ingest.containers.limits.Budget`. Nothing is extracted to disk."""

from __future__ import annotations

import io
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

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
        except (zipfile.BadZipFile, zlib.error, OSError, EOFError, NotImplementedError) as e:
            yield Refused(name, f"corrupt member: {type(e).__name__}: {e}")
            continue
        yield Member(name, content)


class GunzipStream:
    """A gzip stream (one or more members) decompressed as it is read, refusing to produce
    more than the budget allows or more than ``max_ratio`` times its input."""

    def __init__(self, data: bytes, budget: Budget) -> None:
        if data[:2] != b"\x1f\x8b":
            raise ContainerRefused("not gzip data (no gzip header)")
        self._data = data
        self._pos = 0
        self._inflate = zlib.decompressobj(31)
        self._buffer = b""
        self._limits = budget.limits
        self.produced = 0

    def _fill(self) -> bytes:
        while True:
            if self._inflate.eof:
                self._pos -= len(self._inflate.unused_data)
                if not self._data[self._pos :].strip(b"\0"):
                    return b""
                self._inflate = zlib.decompressobj(31)  # the next member of the stream
            source = self._inflate.unconsumed_tail
            if not source:
                if self._pos >= len(self._data):
                    raise ContainerRefused("gzip data ends early (truncated?)")
                source = self._data[self._pos : self._pos + CHUNK]
                self._pos += len(source)
            try:
                out = self._inflate.decompress(source, CHUNK)
            except zlib.error as e:
                raise ContainerRefused(f"corrupt gzip data: {e}") from e
            if out:
                self._account(len(out))
                return out

    def _account(self, n: int) -> None:
        lim = self._limits
        self.produced += n
        if self.produced > lim.max_total_bytes:
            raise ContainerRefused(
                f"expands to over {lim.max_total_bytes / (1 << 30):.1f} GiB; "
                "not read (a gzip bomb?)"
            )
        consumed = max(1, self._pos - len(self._inflate.unconsumed_tail))
        if self.produced > lim.ratio_floor and self.produced > lim.max_ratio * consumed:
            raise ContainerRefused(
                f"expands over {lim.max_ratio:.0f} times its compressed size "
                f"(a gzip bomb?); reading stopped at {self.produced:,} bytes"
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


def gunzip(data: bytes, budget: Budget) -> bytes:
    """The whole content of a .gz file, within the per-file limit and the budget."""
    stream = GunzipStream(data, budget)
    try:
        return budget.read(stream, len(data))
    except MemberRefused as e:
        raise ContainerRefused(e.reason) from e


def tar_members(data: bytes, budget: Budget, *, gzipped: bool) -> Iterator[Entry]:
    """Members of a tar archive, read as a stream (``r|``): one member in memory at a time."""
    source: GunzipStream | io.BytesIO = GunzipStream(data, budget) if gzipped else io.BytesIO(data)
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
    except (tarfile.TarError, EOFError, OSError, zlib.error) as e:
        raise ContainerRefused(f"corrupt or unreadable tar archive: {e}") from e
