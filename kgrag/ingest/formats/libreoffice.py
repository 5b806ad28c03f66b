"""Files read through LibreOffice: legacy Word, Excel and PowerPoint (.doc, .xls, .ppt) and
OpenDocument spreadsheets and presentations (.ods, .odp) and their templates (.ots, .otp).

Real folders hold them next to .docx and PDF. When LibreOffice's ``soffice`` is installed, such a
file is converted headless into its Office Open XML twin (.docx, .xlsx, .pptx) in a private
temporary folder and read by that format's parser; the document keeps the original file as its
source, so answers cite the .doc. Without ``soffice`` these formats are not available: their
files are skipped with a hint saying how to read them (:data:`kgrag.ingest.sources.CONVERT_HINTS`).

Each conversion runs one ``soffice`` process with a fresh profile (conversions in parallel do
not share one, and nothing a document does persists), macros disabled outright, links to
untrusted places blocked and Calc's external links never updated, under a time limit after which
the process group is killed. A ``.doc`` that is really RTF (Word saves RTF under that name) is
read as RTF without LibreOffice.

An operator who does not want LibreOffice to parse what users send (a service taking untrusted
uploads) turns it off: ``KGRAG_LIBREOFFICE=off`` (:attr:`kgrag.config.Settings.libreoffice`),
process-wide; these formats are then skipped as if it were not installed, saying so.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from kgrag.errors import IngestError
from kgrag.ingest import spreadsheet
from kgrag.ingest.formats.docx import parse_docx
from kgrag.ingest.formats.pptx import parse_pptx
from kgrag.ingest.formats.registry import DocumentFormat, ParsedContent, Parser, register
from kgrag.ingest.formats.rtf import parse_rtf
from kgrag.ingest.models import SourceItem

__all__ = ["CONVERT_TIMEOUT_S", "allow", "allowed", "convert", "soffice"]

log = logging.getLogger(__name__)

#: A conversion still running after this long is killed and the file fails (a document that
#: makes LibreOffice loop, or one so large it would hold a worker for minutes).
CONVERT_TIMEOUT_S = 120.0

#: The first bytes of an OLE compound file: every Word 97-2003, Excel 97-2003 and PowerPoint
#: 97-2003 file.
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_ZIP_MAGIC = b"PK\x03\x04"

#: The profile each conversion starts from: no macro runs (whatever the document asks), linked
#: content from untrusted places is not fetched, and Calc never updates external links on load.
_SETTINGS = (
    ("Common/Security/Scripting", "DisableMacrosExecution", "true"),
    ("Common/Security/Scripting", "MacroSecurityLevel", "3"),
    ("Common/Security/Scripting", "BlockUntrustedRefererLinks", "true"),
    ("Calc/Content/Update", "Link", "1"),  # 1: never
)
_PROFILE_SETTINGS = (
    '<?xml version="1.0" encoding="UTF-8"?>\n'
    '<oor:items xmlns:oor="http://openoffice.org/2001/registry" '
    'xmlns:xs="http://www.w3.org/2001/XMLSchema" '
    'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n'
    + "".join(
        f'<item oor:path="/org.openoffice.Office.{where}"><prop oor:name="{name}" '
        f'oor:op="fuse"><value>{value}</value></prop></item>\n'
        for where, name, value in _SETTINGS
    )
    + "</oor:items>\n"
)


@functools.cache
def soffice() -> str | None:
    """The path of LibreOffice's ``soffice`` (or ``libreoffice``) program, if installed."""
    return shutil.which("soffice") or shutil.which("libreoffice")


class _Switch:
    """Whether LibreOffice may be used in this process. Off from the start when the environment
    says ``KGRAG_LIBREOFFICE=off`` (so a process that never reads its settings, a Ray worker or
    a library user's agent, fails closed); set from the settings by :func:`allow`."""

    on = os.environ.get("KGRAG_LIBREOFFICE", "auto").strip().lower() != "off"


def allow(on: bool) -> None:
    """Let kgrag convert files with LibreOffice (when it is installed), or not: process-wide."""
    _Switch.on = on


def allowed() -> bool:
    """LibreOffice has not been turned off (:func:`allow`, ``KGRAG_LIBREOFFICE=off``)."""
    return _Switch.on


def _available() -> bool:
    return allowed() and soffice() is not None


def convert(item: SourceItem, data: bytes, what: str, infilter: str, target: str) -> bytes:
    """``data`` (the bytes of ``item``, ``what`` it should be, e.g. "a Word 97-2003 document")
    read by LibreOffice's import filter ``infilter`` (e.g. "MS Word 97") and written in the format
    of suffix ``target`` ("docx", "xlsx", "pptx").

    The filter is forced: left to guess, LibreOffice reads a damaged workbook as a text file and
    converts its bytes into cells.

    Raises :class:`IngestError` naming the file when LibreOffice is missing, cannot read it,
    or takes longer than :data:`CONVERT_TIMEOUT_S`."""
    path = item.path
    program = soffice()
    if program is None:
        raise IngestError(str(path), f"{what}: reading it needs LibreOffice (soffice)")
    if not allowed():
        raise IngestError(str(path), f"{what}: reading it through LibreOffice is turned off here")
    with tempfile.TemporaryDirectory(prefix="kgrag-soffice-") as tmp:
        work = Path(tmp)
        user = work / "profile" / "user"
        user.mkdir(parents=True)
        (user / "registrymodifications.xcu").write_text(_PROFILE_SETTINGS, encoding="utf-8")
        # a fixed name: the user's file name may hold anything, and LibreOffice names its
        # output after its input
        source = work / f"in{path.suffix.lower()}"
        source.write_bytes(data)
        out = work / "out"
        command = [
            program,
            "--headless",
            "--norestore",
            "--nologo",
            "--nodefault",
            "--nolockcheck",
            f"-env:UserInstallation={(work / 'profile').as_uri()}",
            f"--infilter={infilter}",
            "--convert-to",
            target,
            "--outdir",
            str(out),
            str(source),
        ]
        started = time.perf_counter()
        stderr = _run(command, path, what)
        produced = out / f"in.{target}"
        if not produced.is_file() or produced.stat().st_size == 0:
            said = stderr.strip().splitlines()[-1] if stderr.strip() else "no output"
            raise IngestError(
                str(path),
                f"LibreOffice could not read it as {what} (damaged, password-protected, or "
                f"another format): {said}",
            )
        log.debug("converted %s to .%s in %.1f s", path, target, time.perf_counter() - started)
        return produced.read_bytes()


def _run(command: list[str], path: Path, what: str) -> str:
    """Run ``command`` in its own process group; its stderr, or IngestError on a timeout."""
    env = {**os.environ, "SAL_USE_VCLPLUGIN": "svp"}  # no display, ever
    proc = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        env=env,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=CONVERT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise IngestError(
            str(path), f"LibreOffice took over {CONVERT_TIMEOUT_S:.0f} s to convert {what}"
        ) from None
    return f"{out}\n{err}"


def _converted(what: str, infilter: str, target: str, parse: Parser, magic: bytes) -> Parser:
    """A parser converting with LibreOffice, then reading the result with ``parse``."""

    def parse_converted(item: SourceItem, data: bytes) -> ParsedContent:
        if magic == _OLE_MAGIC and data.lstrip()[:5] == b"{\\rtf":
            return parse_rtf(item, data)  # Word's "Save as RTF" under a .doc name
        if not data.startswith(magic):
            kind = "an OLE compound file" if magic == _OLE_MAGIC else "a zip package"
            raise IngestError(str(item.path), f"not {what}: it is not {kind}")
        return parse(item, convert(item, data, what, infilter, target))

    return parse_converted


def _spreadsheet(item: SourceItem, data: bytes) -> ParsedContent:
    return ParsedContent(
        title=None, pages=(), tables=tuple(spreadsheet.parse_xlsx(item.path, data))
    )


def _format(
    name: str,
    suffix: str,
    mime: str,
    what: str,
    infilter: str,
    target: str,
    parse: Parser,
    magic: bytes,
) -> DocumentFormat:
    return register(
        DocumentFormat(
            name=name,
            suffixes=(suffix,),
            mime=mime,
            parse=_converted(what, infilter, target, parse, magic),
            available=_available,
        )
    )


DOC = _format(
    "Word 97-2003 (.doc)",
    ".doc",
    "application/msword",
    "a Word 97-2003 document",
    "MS Word 97",
    "docx",
    parse_docx,
    _OLE_MAGIC,
)
XLS = _format(
    "Excel 97-2003 (.xls)",
    ".xls",
    "application/vnd.ms-excel",
    "an Excel 97-2003 workbook",
    "MS Excel 97",
    "xlsx",
    _spreadsheet,
    _OLE_MAGIC,
)
PPT = _format(
    "PowerPoint 97-2003 (.ppt)",
    ".ppt",
    "application/vnd.ms-powerpoint",
    "a PowerPoint 97-2003 deck",
    "MS PowerPoint 97",
    "pptx",
    parse_pptx,
    _OLE_MAGIC,
)
ODS = _format(
    "OpenDocument spreadsheet",
    ".ods",
    "application/vnd.oasis.opendocument.spreadsheet",
    "an OpenDocument spreadsheet",
    "calc8",
    "xlsx",
    _spreadsheet,
    _ZIP_MAGIC,
)
OTS = _format(
    "ots",
    ".ots",
    "application/vnd.oasis.opendocument.spreadsheet-template",
    "an OpenDocument spreadsheet template",
    "calc8_template",
    "xlsx",
    _spreadsheet,
    _ZIP_MAGIC,
)
OTP = _format(
    "otp",
    ".otp",
    "application/vnd.oasis.opendocument.presentation-template",
    "an OpenDocument presentation template",
    "impress8_template",
    "pptx",
    parse_pptx,
    _ZIP_MAGIC,
)
ODP = _format(
    "OpenDocument presentation",
    ".odp",
    "application/vnd.oasis.opendocument.presentation",
    "an OpenDocument presentation",
    "impress8",
    "pptx",
    parse_pptx,
    _ZIP_MAGIC,
)
