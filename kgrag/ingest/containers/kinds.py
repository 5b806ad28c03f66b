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
    ".svgz": ("text", "application/gzip"),  # a gzipped SVG drawing (icon themes): an .svg.gz
    ".eml": ("text", "message/rfc822"),
    ".mbox": ("text", "application/mbox"),
    ".msg": ("text", "application/vnd.ms-outlook"),
}


#: Suffixes that name one compressed file of a type: its kind and the suffix of the file inside
#: (``logo.svgz`` holds ``logo.svg``).
_COMPRESSED_TYPES: dict[str, tuple[ContainerKind, str]] = {".svgz": ("gzip", ".svg")}
#: Compression suffixes -> the kind of a compressed tar, and of one compressed file.
_COMPRESSIONS: dict[str, tuple[ContainerKind, ContainerKind]] = {
    ".gz": ("tgz", "gzip"),
    ".bz2": ("tbz2", "bzip2"),
    ".xz": ("txz", "xz"),
}


def compressed_name(name: PurePath) -> PurePath:
    """The name of the file a compressed file ``name`` holds: ``zstd.1.gz`` holds ``zstd.1``,
    ``logo.svgz`` holds ``logo.svg``, ``a.tar.gz`` ``a.tar``; a name with no compression
    suffix is its own (``a.txt``)."""
    suffix = name.suffix.lower()
    inner = _COMPRESSED_TYPES.get(suffix)
    if inner is not None:
        return name.with_suffix(inner[1])
    return name.with_suffix("") if suffix in _COMPRESSIONS else name


def container_kind(name: PurePath) -> ContainerKind | None:
    """The kind of container ``name`` is, by its suffix(es); None when it is not one."""
    suffix = name.suffix.lower()
    if suffix in _COMPRESSED_TYPES:
        return _COMPRESSED_TYPES[suffix][0]
    if suffix in _COMPRESSIONS:  # a compressed tar, or one compressed file
        tarred, single = _COMPRESSIONS[suffix]
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
