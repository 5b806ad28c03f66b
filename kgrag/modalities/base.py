"""Protocols every model provider implements, and the typed results they return.

Providers import their heavy dependencies (torch, open_clip, whisper, openai) lazily, inside the
provider, and raise :class:`kgrag.errors.DependencyMissingError` naming the extra when one is
missing. They never log vectors or document text.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from kgrag.cancel import CancelToken
from kgrag.core import Frozen


class TextEmbedder(Protocol):
    """Embeds text into a fixed-size vector space."""

    @property
    def model_name(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    @property
    def max_tokens(self) -> int:
        """The longest input (in the model's tokens) the model reads without truncation."""
        ...

    def count_tokens(self, text: str) -> int: ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length vector per text, in order."""
        ...


@runtime_checkable
class ImageEmbedder(Protocol):
    """A joint image-text space (CLIP): images and texts embed into comparable vectors."""

    @property
    def model_name(self) -> str: ...

    @property
    def dimensions(self) -> int: ...

    def embed_images(self, paths: Sequence[Path]) -> list[list[float]]:
        """One unit-length vector per image file, in order."""
        ...

    def embed_texts(self, texts: Sequence[str]) -> list[list[float]]:
        """One unit-length vector per text, in the same space as the images."""
        ...


class TranscriptSegment(Frozen):
    """One timed piece of a transcript."""

    start_s: float
    end_s: float
    text: str


class Transcript(Frozen):
    """What a transcriber heard in one recording."""

    language: str
    duration_s: float
    segments: tuple[TranscriptSegment, ...]

    @property
    def text(self) -> str:
        return " ".join(s.text.strip() for s in self.segments).strip()


class Transcriber(Protocol):
    """Speech to timed text."""

    @property
    def model_name(self) -> str: ...

    def transcribe(self, path: Path, *, cancel: CancelToken | None = None) -> Transcript:
        """The speech of ``path``. Refuses (before decoding) a recording longer than the
        transcriber's media limit; stops with CancelledError soon after ``cancel`` is set."""
        ...
