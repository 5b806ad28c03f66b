"""Text decoding shared by every parser.

Files in real folders are not all UTF-8: old changelogs, CSV files saved by spreadsheet programs and
text written on Windows are often in a legacy 8-bit code page. :func:`decode_text` reads, in order:

1. a byte-order mark (UTF-8, UTF-16 or UTF-32) decides;
2. strict UTF-8;
3. otherwise a legacy encoding. Text in a Latin script (English, French, German, Spanish ...) has
   few bytes above 0x7F: its accented letters. It is read as Windows-1252, the superset of
   ISO-8859-1 that browsers use for both (the WHATWG encoding standard), so ``0xe9`` is ``é``.
   Text whose bytes are mostly above 0x7F (Cyrillic, Greek, Japanese, Chinese ...) is read in the
   encoding ``charset_normalizer`` finds most coherent. A guess that is not legible (control
   characters) is refused with the UTF-8 error, naming the file and the first bad byte.

A NUL is always refused: that is a binary file, whatever its name says. Other control characters
(C0 but tab, line feed, vertical tab, form feed and carriage return; DEL; C1:
:data:`kgrag.core.text.CONTROL_CHARACTER_CLASS`) are dropped from the decoded text, so that none
is stored, indexed or quoted in an answer: a bell (``\\x07``) in a changelog, a terminal's escape
sequence in a formatted manual (``\\x1b[1m``, dropped whole), a character a backspace strikes over
(nroff's bold ``N\\bN``: the one shown stays).
"""

from __future__ import annotations

import codecs
import logging
import re
from dataclasses import dataclass
from pathlib import Path

from kgrag.core.text import CONTROL_CHARACTER_CLASS
from kgrag.errors import IngestError

__all__ = ["DecodedText", "decode_text", "decode_utf8", "legible"]

#: At or above this share of bytes above 0x7F (of the bytes that are not ASCII whitespace),
#: a non-UTF-8 file is taken to be in a non-Latin script and its encoding is detected; below it,
#: the file is Windows-1252. A French or German text has 1-5 %, a Russian or Japanese one 50-100 %.
NON_LATIN_SHARE = 0.3
#: At least this share of a decoded legacy text's characters must be printable (or whitespace).
MIN_PRINTABLE = 0.95
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_WHITESPACE = frozenset("\t\n\r\f\v")
#: A terminal's control sequence (ECMA-48 CSI: "\x1b[1m" bold, "\x1b[0m" plain), dropped whole.
_TERMINAL_SEQUENCE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")
#: A character a backspace strikes over (nroff's bold "N\bN", underline "_\bN").
_STRUCK_OVER = re.compile(r"[^\n\x08]\x08")
_CONTROL = re.compile(f"[{CONTROL_CHARACTER_CLASS}]")
_log = logging.getLogger(__name__)
_ASCII = bytes(range(0x80))
#: Windows-1252 with its five unassigned bytes (0x81, 0x8D, 0x8F, 0x90, 0x9D) read as Latin-1's
#: control characters, so that decoding never fails.
_CP1252 = {
    b: bytes([b]).decode("cp1252", errors="replace").replace("\ufffd", chr(b))
    for b in range(0x80, 0xA0)
}
_CP1252_TABLE = str.maketrans({chr(b): c for b, c in _CP1252.items()})


@dataclass(frozen=True)
class DecodedText:
    """A file's text with ``\\n`` line ends, and the encoding it was read in (a codec name)."""

    text: str
    encoding: str


def decode_utf8(path: Path, data: bytes) -> str:
    """``data`` as strict UTF-8 text with ``\\n`` line ends; IngestError naming the file, offset,
    line and column of the first byte that is not UTF-8, or of a NUL (a binary file)."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise _not_utf8(path, data, e) from e
    return _checked(path, text)


def decode_text(path: Path, data: bytes) -> DecodedText:
    """``data`` as text: by its byte-order mark, as UTF-8, or in a legacy encoding (module doc).
    IngestError naming the file when it holds a NUL or is not legible in any of them."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            try:
                return DecodedText(_checked(path, data.decode(codec)), codec)
            except UnicodeDecodeError as e:
                raise IngestError(
                    str(path), f"starts with a {codec} byte-order mark but is not {codec}: {e}"
                ) from e
    try:
        return DecodedText(decode_utf8(path, data), "utf-8")
    except IngestError as utf8_error:
        legacy = None if b"\x00" in data else _legacy(data)
        if legacy is None:
            raise IngestError(
                str(path),
                f"{utf8_error.reason}, and not legible text in a legacy encoding either; "
                "is it a binary file?",
            ) from utf8_error
        _log.info("%s: not UTF-8, read as %s", path, legacy.encoding)
        return DecodedText(_checked(path, legacy.text), legacy.encoding)


def legible(data: bytes) -> bool:
    """Whether ``data`` (a file's first bytes, possibly cut inside a character) reads as text in
    the way :func:`decode_text` reads it: no NUL, and mostly printable."""
    for bom, codec in _BOMS:
        if data.startswith(bom):
            text = codecs.getincrementaldecoder(codec)(errors="replace").decode(data)
            return "\x00" not in text and _mostly_printable(text)
    if b"\x00" in data:
        return False
    try:
        text = codecs.getincrementaldecoder("utf-8-sig")().decode(data, final=False)
    except UnicodeDecodeError:
        return _legacy(data) is not None
    return _mostly_printable(text)


def _legacy(data: bytes) -> DecodedText | None:
    """``data`` read in a legacy 8-bit or East Asian encoding, or None if it is not legible."""
    meaningful = len(data) - sum(data.count(c) for c in b" \t\r\n")
    high = len(data.translate(None, _ASCII))  # the bytes above 0x7F
    if high >= NON_LATIN_SHARE * max(1, meaningful):
        import charset_normalizer  # only for the rare non-Latin legacy file

        best = charset_normalizer.from_bytes(data).best()
        if best is not None and best.encoding not in ("utf_8", "ascii"):
            try:
                text = data.decode(best.encoding)
            except (UnicodeDecodeError, LookupError):
                text = ""
            if text and _mostly_printable(text):
                return DecodedText(text, codecs.lookup(best.encoding).name)
    text = data.decode("latin-1").translate(_CP1252_TABLE)
    return DecodedText(text, "cp1252") if _mostly_printable(text) else None


def _mostly_printable(text: str) -> bool:
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text:
        return True
    printable = sum(1 for c in text if c.isprintable() or c in _WHITESPACE)
    return printable >= MIN_PRINTABLE * len(text)


def _checked(path: Path, text: str) -> str:
    nul = text.find("\x00")
    if nul >= 0:
        raise IngestError(
            str(path), f"contains a NUL character at offset {nul}; is it a binary file?"
        )
    text = _CONTROL.sub("", _STRUCK_OVER.sub("", _TERMINAL_SEQUENCE.sub("", text)))
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _not_utf8(path: Path, data: bytes, e: UnicodeDecodeError) -> IngestError:
    bad = data[e.start : e.start + 1]
    line = data.count(b"\n", 0, e.start) + 1
    column = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
    return IngestError(
        str(path),
        f"not valid UTF-8: byte 0x{bad.hex()} at offset {e.start} (line {line}, column {column})",
    )
