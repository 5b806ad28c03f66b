"""Text decoding shared by every parser: strict UTF-8 with a message that locates the bad byte."""

from __future__ import annotations

from pathlib import Path

from kgrag.errors import IngestError

__all__ = ["decode_utf8"]


def decode_utf8(path: Path, data: bytes) -> str:
    """``data`` as text with ``\\n`` line ends; IngestError naming the file, offset, line and column
    of the first byte that is not UTF-8, or of a NUL (a binary file)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        bad = data[e.start : e.start + 1]
        line = data.count(b"\n", 0, e.start) + 1
        column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise IngestError(
            str(path),
            f"not valid UTF-8: byte 0x{bad.hex()} at offset {e.start} (line {line}, column "
            f"{column}); re-save the file as UTF-8 (for Latin-1 text: iconv -f latin1 -t utf-8)",
        ) from e
    nul = text.find("\x00")
    if nul >= 0:
        raise IngestError(
            str(path), f"contains a NUL character at offset {nul}; is it a binary file?"
        )
    return text.replace("\r\n", "\n").replace("\r", "\n")
