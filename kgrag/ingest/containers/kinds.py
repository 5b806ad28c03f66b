"""Which names are containers, and of what kind (no imports from the rest of kgrag.ingest)."""

from __future__ import annotations

from pathlib import PurePath
from typing import Literal

ContainerKind = Literal["zip", "tar", "tgz", "gzip", "eml", "mbox", "msg"]

#: suffix -> (modality, MIME type) of the container's own document
CONTAINER_TYPES: dict[str, tuple[Literal["text"], str]] = {
    ".zip": ("text", "application/zip"),
    ".tar": ("text", "application/x-tar"),
    ".tgz": ("text", "application/gzip"),
    ".gz": ("text", "application/gzip"),
    ".eml": ("text", "message/rfc822"),
    ".mbox": ("text", "application/mbox"),
    ".msg": ("text", "application/vnd.ms-outlook"),
}


def container_kind(name: PurePath) -> ContainerKind | None:
    """The kind of container ``name`` is, by its suffix(es); None when it is not one."""
    suffix = name.suffix.lower()
    if suffix == ".gz":
        inner = PurePath(name.stem).suffix.lower()
        return "tgz" if inner == ".tar" else "gzip"
    kinds: dict[str, ContainerKind] = {
        ".zip": "zip",
        ".tar": "tar",
        ".tgz": "tgz",
        ".eml": "eml",
        ".mbox": "mbox",
        ".msg": "msg",
    }
    return kinds.get(suffix)
