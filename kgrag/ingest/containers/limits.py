"""Bounds on what one container may expand to, and the budget that enforces them while reading."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

#: Bytes read at a time from a compressed stream.
CHUNK = 64 * 1024


@dataclass(frozen=True, slots=True)
class ContainerLimits:
    """What one file on disk may expand to, nested containers included."""

    max_depth: int = 3
    """Containers nested inside containers: ``a.zip!b.zip!c.zip`` is 3 deep; a 4th is refused."""
    max_ratio: float = 200.0
    """Uncompressed over compressed size above which a member is a bomb (once it is large)."""
    ratio_floor: int = 1 << 20
    """The ratio is judged only once a member (or stream) has produced this many bytes."""
    max_total_bytes: int = 1 << 30
    """All members of one file, uncompressed, together."""
    max_members: int = 10_000
    """Members of one file, nested ones included."""
    max_member_bytes: int = 200 * 1024 * 1024
    """One member, uncompressed (the per-file limit of files on disk)."""


class Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class MemberRefused(Exception):
    """One member cannot be read (too large, a bomb, corrupt): the others still can."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ContainerRefused(Exception):
    """The whole container cannot be read (corrupt, too many members, expands too far)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _size(n: float) -> str:
    if n >= 1 << 30:
        return f"{n / (1 << 30):.1f} GiB"
    return f"{n / (1 << 20):.1f} MiB"


class Budget:
    """What one file on disk has used of its :class:`ContainerLimits` so far."""

    def __init__(self, limits: ContainerLimits) -> None:
        self.limits = limits
        self.members = 0
        self.total_bytes = 0

    def count_members(self, n: int) -> None:
        self.members += n
        if self.members > self.limits.max_members:
            raise ContainerRefused(
                f"holds over {self.limits.max_members:,} members (nested ones included); "
                "not read (an archive bomb?)"
            )

    def check_declared(self, size: int, compressed: int | None) -> None:
        """Refuse a member by the sizes its archive declares, before reading it."""
        lim = self.limits
        if size > lim.max_member_bytes:
            raise MemberRefused(
                f"declares {_size(size)} uncompressed, over the {_size(lim.max_member_bytes)} "
                "per-file limit"
            )
        if (
            compressed is not None
            and size > lim.ratio_floor
            and size > lim.max_ratio * max(1, compressed)
        ):
            raise MemberRefused(
                f"declares a compression ratio of {size / max(1, compressed):,.0f}:1, over "
                f"{lim.max_ratio:.0f}:1 (a zip bomb?); not read"
            )
        self._check_total(size)

    def _check_total(self, more: int) -> None:
        if self.total_bytes + more > self.limits.max_total_bytes:
            raise ContainerRefused(
                f"expands to over {_size(self.limits.max_total_bytes)} uncompressed; "
                "not read (an archive bomb?)"
            )

    def read(self, stream: Readable, compressed: int | None) -> bytes:
        """Read one member from ``stream``, stopping as soon as it breaks a limit."""
        lim = self.limits
        parts: list[bytes] = []
        n = 0
        while True:
            block = stream.read(CHUNK)
            if not block:
                break
            n += len(block)
            if n > lim.max_member_bytes:
                raise MemberRefused(
                    f"is over the {_size(lim.max_member_bytes)} per-file limit uncompressed"
                )
            if (
                compressed is not None
                and n > lim.ratio_floor
                and n > lim.max_ratio * max(1, compressed)
            ):
                raise MemberRefused(
                    f"expands over {lim.max_ratio:.0f} times its compressed size "
                    f"({compressed:,} bytes; a zip bomb?); reading stopped at {_size(n)}"
                )
            self._check_total(len(block))
            self.total_bytes += len(block)
            parts.append(block)
        return b"".join(parts)


_DRIVE = re.compile(r"^[A-Za-z]:")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def unsafe_name(name: str) -> str | None:
    """Why a member's name is refused (absolute, climbing out with ``..``, control
    characters), or None. Members are never written to disk; such names are refused anyway, as
    an archive made to attack extraction is not a document collection."""
    if name.startswith(("/", "\\")) or _DRIVE.match(name):
        return "member has an absolute name; refused (path traversal)"
    if ".." in re.split(r"[\\/]", name):
        return "member name climbs out of the archive with '..'; refused (path traversal)"
    if _CONTROL.search(name):
        return "member name contains control characters; refused"
    return None


def hidden(name: str) -> bool:
    """Hidden members (``.DS_Store``, ``__MACOSX/``) are passed over, as in folders."""
    return any(p.startswith(".") or p == "__MACOSX" for p in re.split(r"[\\/]", name) if p)
