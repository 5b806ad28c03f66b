"""What an ingestion job does with an exception nobody meant: one file's (or one document's)
failure, in words, never the end of the job.

Readers raise :class:`~kgrag.errors.IngestError` for what they know to be wrong with a file. Any
other exception while one file is read (a parser's bug, a library's own error, a
``RecursionError`` on deep nesting, a ``MemoryError`` on a bomb-like file) or while one document
goes through a later stage (chunks, summary, entities) is turned into that file's failure by
:func:`failure_reason`, its traceback logged. Only what must stop the job goes through
(:func:`must_stop`): ``KeyboardInterrupt`` and ``SystemExit`` (they are no ``Exception``), and a
:class:`~kgrag.errors.StoreError`: a database that fails is no file's fault, and recording it as
one would hide it.
"""

from __future__ import annotations

import logging
from pathlib import PurePath

from kgrag.errors import StoreError
from kgrag.ingest import formats
from kgrag.ingest.containers.kinds import ContainerKind, container_kind

log = logging.getLogger(__name__)

__all__ = ["failure_reason", "must_stop", "reader_name"]

#: Longest exception text quoted in a reason (a library may put a whole buffer in it).
MAX_DETAIL_CHARS = 200

_CONTAINERS: dict[ContainerKind, str] = {
    "zip": "zip archive",
    "tar": "tar archive",
    "tgz": "tar archive",
    "tbz2": "tar archive",
    "txz": "tar archive",
    "gzip": "gzip",
    "bzip2": "bzip2",
    "xz": "xz",
    "eml": "e-mail",
    "mbox": "mailbox",
    "msg": "Outlook message",
}


def reader_name(name: PurePath, modality: str | None = None) -> str:
    """The reader of a file named ``name`` (of ``modality``), in words: a container's ("the zip
    archive reader"), a registered format's by its name ("the HTML reader": the format
    registry's :class:`~kgrag.ingest.formats.registry.DocumentFormat`), else the modality's
    ("the PDF reader", "the text reader")."""
    kind = container_kind(name)
    if kind is not None:
        return f"the {_CONTAINERS[kind]} reader"
    fmt = formats.for_suffix(name.suffix)
    if fmt is not None:  # a registered format says its own name
        return f"the {fmt.name} reader"
    what = {"image": "image", "audio": "audio", "pdf": "PDF"}.get(modality or "", "text")
    return f"the {what} reader"


def failure_reason(doing: str, e: Exception, path: str) -> str:
    """The reason a file (or a member, ``archive!member``) at ``path`` failed with the
    unexpected ``e`` while ``doing`` went on ("the PDF reader failed"), logged here with its
    traceback: "could not be read: the PDF reader failed (KeyError: '/Root')"."""
    log.warning("%s: %s: %s", path, doing, type(e).__name__)
    log.debug("%s: %s", path, doing, exc_info=e)
    detail = " ".join(str(e).split())
    if len(detail) > MAX_DETAIL_CHARS:
        detail = detail[: MAX_DETAIL_CHARS - 1] + "…"
    said = f"{type(e).__name__}: {detail}" if detail else type(e).__name__
    return f"{doing} ({said})"


def must_stop(e: BaseException) -> bool:
    """Whether ``e`` must end the job rather than one file: the store failing, or anything that
    is no ``Exception`` (an interrupt, an exit)."""
    return isinstance(e, StoreError) or not isinstance(e, Exception)
