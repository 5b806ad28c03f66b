"""The files attached to a question (at query time), as the executor receives them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from kgrag.core import Frozen
from kgrag.modalities.base import Transcriber

__all__ = ["Attachment", "AttachmentInputs"]


class Attachment(Frozen):
    """A file attached to a question, checked (size, signature) before the question runs."""

    name: str
    """The file's name as the caller gave it (for messages and the trace)."""
    path: Path
    modality: Literal["image", "audio"]
    mime: str
    sha256: str
    bytes: int


@dataclass(frozen=True)
class AttachmentInputs:
    """The attachments of one question and the model that reads audio ones."""

    files: tuple[Attachment, ...] = ()
    transcriber: Callable[[], Transcriber] | None = None
