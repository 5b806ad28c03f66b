"""Which names are containers, and of what kind (no imports from the rest of kgrag.ingest)."""

from __future__ import annotations

from pathlib import PurePath
from typing import Literal

ContainerKind = Literal[
    "zip", "tar", "tgz", "tbz2", "txz", "gzip", "bzip2", "xz", "eml", "mbox", "msg"
]

#: suffix -> (modality, MIME type) of the container's own document
CONTAINER_TYPES: dict[str, tuple[Literal["text"], str]] = {
    ".zip": ("text", "application/zip"),
    ".tar": ("text", "application/x-tar"),
    ".tgz": ("text", "application/gzip"),
    ".gz": ("text", "application/gzip"),
    ".tbz2": ("text", "application/x-bzip2"),
    ".tbz": ("text", "application/x-bzip2"),
    ".bz2": ("text", "application/x-bzip2"),
    ".txz": ("text", "application/x-xz"),
    ".xz": ("text", "application/x-xz"),
    ".eml": ("text", "message/rfc822"),
    ".mbox": ("text", "application/mbox"),
    ".msg": ("text", "application/vnd.ms-outlook"),
}


def container_kind(name: PurePath) -> ContainerKind | None:
    """The kind of container ``name`` is, by its suffix(es); None when it is not one."""
    suffix = name.suffix.lower()
    compressed: dict[str, tuple[ContainerKind, ContainerKind]] = {
        ".gz": ("tgz", "gzip"),
        ".bz2": ("tbz2", "bzip2"),
        ".xz": ("txz", "xz"),
    }
    if suffix in compressed:  # a compressed tar, or one compressed file
        tarred, single = compressed[suffix]
        return tarred if PurePath(name.stem).suffix.lower() == ".tar" else single
    kinds: dict[str, ContainerKind] = {
        ".zip": "zip",
        ".tar": "tar",
        ".tgz": "tgz",
        ".tbz2": "tbz2",
        ".tbz": "tbz2",
        ".txz": "txz",
        ".eml": "eml",
        ".mbox": "mbox",
        ".msg": "msg",
    }
    return kinds.get(suffix)
