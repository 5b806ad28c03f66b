"""The registry of document formats: what a format module declares and how it is looked up."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kgrag.ingest.models import Modality, ParsedImage, ParsedPage, ParsedTable, SourceItem

__all__ = ["DocumentFormat", "ParsedContent", "for_suffix", "register", "registered"]


@dataclass(frozen=True, slots=True)
class ParsedContent:
    """What a format's parser read from one file; ``title`` None means "use the file's name"."""

    title: str | None
    pages: tuple[ParsedPage, ...]
    images: tuple[ParsedImage, ...] = ()
    tables: tuple[ParsedTable, ...] = ()


#: reads the file's bytes (already size-checked) into content, or raises IngestError(path, reason)
Parser = Callable[[SourceItem, bytes], ParsedContent]


@dataclass(frozen=True, slots=True)
class DocumentFormat:
    """One family of files: the suffixes it is chosen by, the MIME type stored, its parser."""

    name: str
    """What the format is called in messages ("the HTML reader failed"): "HTML", "Word (.docx)"."""
    suffixes: tuple[str, ...]
    mime: str
    parse: Parser
    modality: Modality = "text"
    #: whether this machine can read the format now (a program it needs is installed); a format
    #: that cannot is not looked up, so its files are skipped as unsupported, with a hint
    available: Callable[[], bool] = lambda: True


_BY_SUFFIX: dict[str, DocumentFormat] = {}


def register(fmt: DocumentFormat) -> DocumentFormat:
    """Make ``fmt`` the parser of its suffixes (lower case, with the dot); a suffix has one."""
    for suffix in fmt.suffixes:
        if not suffix.startswith(".") or suffix != suffix.lower():
            raise ValueError(f"format {fmt.name}: suffix {suffix!r} must be lower case with a dot")
        taken = _BY_SUFFIX.get(suffix)
        if taken is not None and taken.name != fmt.name:
            raise ValueError(f"suffix {suffix} is already parsed by format {taken.name}")
        _BY_SUFFIX[suffix] = fmt
    return fmt


def for_suffix(suffix: str) -> DocumentFormat | None:
    """The format registered for ``suffix`` (any case), if any and available on this machine."""
    fmt = _BY_SUFFIX.get(suffix.lower())
    return fmt if fmt is not None and fmt.available() else None


def registered() -> tuple[DocumentFormat, ...]:
    """Every registered format available on this machine once, in registration order."""
    return tuple(fmt for fmt in dict.fromkeys(_BY_SUFFIX.values()) if fmt.available())
