"""Turn what the user typed (files, folders, globs, JSONL manifests) into :class:`SourceItem` s.

Nothing here reads file contents except manifests and the first bytes of files without an
extension (:mod:`kgrag.ingest.sniff`: UTF-8 text is ingested as plain text); parsing is
:mod:`kgrag.ingest.parsers`, containers (archives, e-mail) are :mod:`kgrag.ingest.containers`.
"""

from __future__ import annotations

import glob
import logging
import os
from collections.abc import Iterator, Sequence
from pathlib import Path, PurePath

from pydantic import ConfigDict, ValidationError

from kgrag.acl import AclEntry, parse_acl
from kgrag.core import Frozen, UnicodeText, unicode_problem
from kgrag.core.text import shown_text
from kgrag.ingest import formats
from kgrag.ingest.containers.kinds import CONTAINER_TYPES
from kgrag.ingest.formats import libreoffice
from kgrag.ingest.models import (
    ExpandedInputs,
    Modality,
    SkipKind,
    SourceItem,
    UnsupportedInput,
)
from kgrag.ingest.sniff import (
    MAX_LINE_CHARS,
    NOT_SNIFFED,
    file_looks_like_text,
    has_no_extension,
    may_be_text,
)

logger = logging.getLogger(__name__)

#: extension -> (modality, mime). Video containers are ingested through their audio track.
FILE_TYPES: dict[str, tuple[Modality, str]] = {
    ".txt": ("text", "text/plain"),
    ".md": ("text", "text/markdown"),
    ".markdown": ("text", "text/markdown"),
    ".pdf": ("pdf", "application/pdf"),
    ".csv": ("text", "text/csv"),
    ".tsv": ("text", "text/tab-separated-values"),
    ".xlsx": ("text", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
    ".png": ("image", "image/png"),
    ".jpg": ("image", "image/jpeg"),
    ".jpeg": ("image", "image/jpeg"),
    ".webp": ("image", "image/webp"),
    ".gif": ("image", "image/gif"),
    ".bmp": ("image", "image/bmp"),
    ".xpm": ("image", "image/x-xpixmap"),  # X PixMap: icons in /usr/share/pixmaps, C syntax
    ".tiff": ("image", "image/tiff"),
    ".tif": ("image", "image/tiff"),
    ".ico": ("image", "image/vnd.microsoft.icon"),  # a site's or program's icon: its largest size
    ".wav": ("audio", "audio/wav"),
    ".flac": ("audio", "audio/flac"),
    ".mp3": ("audio", "audio/mpeg"),
    ".m4a": ("audio", "audio/mp4"),
    ".ogg": ("audio", "audio/ogg"),
    ".oga": ("audio", "audio/ogg"),
    ".opus": ("audio", "audio/ogg"),
    ".aac": ("audio", "audio/aac"),
    ".mp4": ("audio", "video/mp4"),
    ".mkv": ("audio", "video/x-matroska"),
    ".webm": ("audio", "video/webm"),
    ".mov": ("audio", "video/quicktime"),
    ".avi": ("audio", "video/x-msvideo"),
}

#: A file without an extension (``README``, ``README.Debian``) whose content is text.
PLAIN_TEXT: tuple[Modality, str] = ("text", "text/plain")

#: Data formats read as text (by :mod:`kgrag.ingest.parsers`' text path, a JSON file's records as
#: a table) and stored under their registered MIME type, so that "Which YAML files do I have?"
#: lists them by type rather than by the words of their names (:func:`sniffed_text_type`).
DATA_TEXT_TYPES: dict[str, str] = {
    ".json": "application/json",  # RFC 8259
    ".yaml": "application/yaml",  # RFC 9512
    ".yml": "application/yaml",
    ".xml": "application/xml",  # RFC 7303
    ".toml": "application/toml",
}


def sniffed_text_type(name: PurePath) -> tuple[Modality, str]:
    """The (modality, mime) of a file of no reader of its own whose content is text: a data
    format's (:data:`DATA_TEXT_TYPES`) by its suffix, else plain text."""
    mime = DATA_TEXT_TYPES.get(name.suffix.lower())
    return ("text", mime) if mime is not None else PLAIN_TEXT


MANIFEST_SUFFIX = ".jsonl"
_GLOB_CHARS = frozenset("*?[")


def file_type(suffix: str) -> tuple[Modality, str] | None:
    """(modality, mime) of a supported suffix (any case), built in or a registered format."""
    known = FILE_TYPES.get(suffix.lower()) or CONTAINER_TYPES.get(suffix.lower())
    if known is not None:
        return known
    fmt = formats.for_suffix(suffix)
    return (fmt.modality, fmt.mime) if fmt is not None else None


def supported_extensions() -> str:
    """The supported extensions, for messages: ``.bmp, .flac, ...``."""
    extra = (s for fmt in formats.registered() for s in fmt.suffixes)
    return ", ".join(sorted({*FILE_TYPES, *CONTAINER_TYPES, *extra}))


_LIBREOFFICE = "{libreoffice}"  # how to read it through LibreOffice: _through_libreoffice()

#: What to do with a file type kgrag does not read but that another format of it would be.
CONVERT_HINTS: dict[str, str] = {
    # read through LibreOffice when it is installed (kgrag.ingest.formats.libreoffice)
    ".doc": f"a legacy Word document: {_LIBREOFFICE}, or save it as .docx",
    ".xls": f"a legacy Excel workbook: {_LIBREOFFICE}, or save it as .xlsx",
    ".ppt": f"a legacy PowerPoint deck: {_LIBREOFFICE}, or save it as .pptx",
    ".ods": f"an OpenDocument spreadsheet: {_LIBREOFFICE}, or save it as .xlsx",
    ".odp": f"an OpenDocument presentation: {_LIBREOFFICE}, or save it as .pptx",
    ".pages": "an Apple Pages document: export it as .docx or PDF",
    ".key": "an Apple Keynote deck: export it as .pptx or PDF",
    ".numbers": "an Apple Numbers spreadsheet: export it as .xlsx",
    ".heic": "a HEIC photo: convert it to JPEG",
    ".ps": "a PostScript file: convert it to PDF (ps2pdf)",
    ".eps": "an Encapsulated PostScript drawing: convert it to PDF or PNG",
    ".7z": "a 7-Zip archive: extract it, or repack it as .zip",
    ".rar": "a RAR archive: extract it, or repack it as .zip",
}


def _through_libreoffice() -> str:
    if libreoffice.soffice() is not None and not libreoffice.allowed():
        return "reading it through LibreOffice is turned off here (KGRAG_LIBREOFFICE=off)"
    return "install LibreOffice (soffice) to read it"


def unsupported_reason(suffix: str) -> str:
    not_text = (
        f"not text (binary, minified: a line over {MAX_LINE_CHARS:,} characters that is not "
        "JSON, or PostScript or RTF)"
    )
    hint = CONVERT_HINTS.get(suffix.lower())
    if hint is not None:
        hint = hint.replace(_LIBREOFFICE, _through_libreoffice())
        return f"unsupported file type '{suffix}': {hint}"
    if suffix.lower() in NOT_SNIFFED:
        shown = f"'{suffix}'"
    elif suffix and not has_no_extension(Path("x" + suffix)):
        shown = f"'{suffix}' and {not_text}"
    else:
        shown = f"'{suffix}' and {not_text}" if suffix else f"(no extension) and {not_text}"
    return (
        f"unsupported file type {shown} (supported: {supported_extensions()}, and text files "
        "of other types: source code, JSON, logs, ...)"
    )


class _ManifestLine(Frozen):
    # strict: a manifest line is JSON written by hand; a value of the wrong JSON type is refused,
    # not coerced
    model_config = ConfigDict(strict=True)

    path: UnicodeText
    title: UnicodeText | None = None
    acl: list[AclEntry] | None = None
    tags: list[UnicodeText] | None = None


class _Collector:
    """Accumulates items and rejections in order, de-duplicating resolved paths."""

    def __init__(self) -> None:
        self.items: list[SourceItem] = []
        self.rejected: list[UnsupportedInput] = []
        self._seen: set[Path] = set()

    def reject(
        self, path: str, reason: str, *, explicit: bool = True, kind: SkipKind = "unsupported_type"
    ) -> None:
        # a name of invalid UTF-8 (met in a folder) is shown with its bytes escaped: the report
        # is printed, written as JSON and sent over HTTP
        self.rejected.append(
            UnsupportedInput(path=shown_text(path), reason=reason, explicit=explicit, kind=kind)
        )

    def add_file(
        self,
        shown: str,
        resolved: Path,
        *,
        acl: Sequence[str],
        tags: Sequence[str] = (),
        title: str | None = None,
        explicit: bool,
        context: str = "",
    ) -> None:
        problem = unicode_problem(str(resolved))
        if problem is not None:  # its path would be the document's URI: no store can hold it
            self.reject(
                shown,
                f"{context}the file's path is not valid UTF-8 ({problem})",
                explicit=explicit,
                kind="unreadable",
            )
            return
        kind = file_type(resolved.suffix)
        if kind is None:
            # a symlink may point at a differently named file: judge the name the user sees too
            kind = file_type(Path(shown).suffix)
        if kind is None and may_be_text(Path(shown)) and file_looks_like_text(resolved):
            kind = sniffed_text_type(Path(shown))
        if kind is None:
            suffix = Path(shown).suffix.lower() or resolved.suffix.lower()
            if suffix == MANIFEST_SUFFIX and not explicit:
                self.reject(
                    shown,
                    "JSONL files are read as manifests only when named directly",
                    explicit=False,
                    kind="manifest_not_named",
                )
            else:
                self.reject(shown, context + unsupported_reason(suffix), explicit=explicit)
            return
        if resolved in self._seen:
            logger.debug("skipping duplicate input %s", resolved)
            return
        self._seen.add(resolved)
        modality, mime = kind
        self.items.append(
            SourceItem(
                path=resolved,
                title=title,
                acl=parse_acl(acl),
                tags=_dedup(tags),
                modality=modality,
                mime=mime,
            )
        )


def _dedup(values: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(v for v in values if v))


def _is_hidden(name: str) -> bool:
    return name.startswith(".")


def _walk(folder: Path) -> Iterator[Path]:
    """Files under ``folder``, recursively, sorted, hidden files and folders skipped.

    Symlinked folders are not followed (no cycles); symlinked files are returned.
    """
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not _is_hidden(d))
        for name in sorted(filenames):
            if not _is_hidden(name):
                yield Path(dirpath) / name


def _resolve(path: Path) -> Path | None:
    try:
        return path.resolve(strict=True)
    except (OSError, RuntimeError):  # missing, dangling symlink, symlink loop
        return None


def expand_inputs(
    paths: Sequence[str], acl: Sequence[str] = (), root: Path | None = None
) -> ExpandedInputs:
    """Expand files, folders, globs and ``*.jsonl`` manifests into source items.

    Relative paths and globs are taken relative to ``root`` (default: the working directory).
    ``acl`` applies to every item except manifest lines that give their own ``acl``; an ACL
    entry that is not namespaced (:func:`kgrag.acl.parse_principal`) raises
    :class:`~kgrag.errors.InvalidAclError` for ``acl`` and rejects the line for a manifest's.
    Folders are walked recursively in sorted order, skipping hidden files and folders; globs
    support ``**``. The same resolved file is returned once (first occurrence wins). Inputs
    that cannot be used come back in ``rejected`` with a reason; nothing is raised for them.
    """
    acl = parse_acl(acl)
    base = (root if root is not None else Path.cwd()).resolve()
    out = _Collector()
    for raw in paths:
        if not raw or not raw.strip():
            out.reject(raw, "empty path")
            continue
        candidate = Path(raw).expanduser()
        if not candidate.is_absolute():
            candidate = base / candidate
        if any(ch in _GLOB_CHARS for ch in raw) and not candidate.exists():
            _expand_glob(raw, candidate, acl, out)
            continue
        resolved = _resolve(candidate)
        if resolved is None:
            out.reject(raw, "no such file or directory")
        elif resolved.is_dir():
            _expand_folder(resolved, acl, out)
        elif not resolved.is_file():
            out.reject(raw, "not a regular file")
        elif candidate.suffix.lower() == MANIFEST_SUFFIX:
            _read_manifest(raw, resolved, acl, out)
        else:
            out.add_file(raw, resolved, acl=acl, explicit=True)
    logger.info(
        "expanded %d inputs: %d items, %d rejected", len(paths), len(out.items), len(out.rejected)
    )
    return ExpandedInputs(items=tuple(out.items), rejected=tuple(out.rejected))


def _expand_folder(folder: Path, acl: Sequence[str], out: _Collector) -> None:
    found = False
    for path in _walk(folder):
        resolved = _resolve(path)
        if resolved is None or not resolved.is_file():
            out.reject(
                str(path),
                "not a readable regular file (dangling symlink?)",
                explicit=False,
                kind="unreadable",
            )
            continue
        found = True
        out.add_file(str(path), resolved, acl=acl, explicit=False)
    if not found:
        out.reject(str(folder), "folder contains no files")


def _expand_glob(raw: str, pattern: Path, acl: Sequence[str], out: _Collector) -> None:
    matches = sorted(glob.glob(str(pattern), recursive=True))
    files = 0
    for match in matches:
        path = Path(match)
        if any(_is_hidden(part) for part in path.parts if part not in (".", "..")):
            continue
        resolved = _resolve(path)
        if resolved is None or not resolved.is_file():
            continue  # folders matched by the pattern are not walked
        files += 1
        out.add_file(match, resolved, acl=acl, explicit=False)
    if files == 0:
        out.reject(raw, "no files match this pattern")


def _read_manifest(shown: str, manifest: Path, acl: Sequence[str], out: _Collector) -> None:
    folder = manifest.parent
    try:
        # surrogateescape: a line of invalid UTF-8 is refused alone, below
        lines = manifest.read_text(encoding="utf-8", errors="surrogateescape").splitlines()
    except OSError as e:
        out.reject(shown, f"cannot read manifest: {e}")
        return
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        context = f"manifest {manifest} line {number}: "
        problem = unicode_problem(line)
        if problem is not None:  # invalid UTF-8 on this line: the others are still read
            out.reject(f"{manifest}:{number}", f"{context}malformed line ({problem})")
            continue
        try:
            entry = _ManifestLine.model_validate_json(line)
        except ValidationError as e:
            out.reject(f"{manifest}:{number}", f"{context}malformed line ({_first_error(e)})")
            continue
        _add_manifest_entry(entry, context, folder, acl, out)


def _first_error(e: ValidationError) -> str:
    err = e.errors()[0]
    loc = ".".join(str(p) for p in err.get("loc", ()))
    msg = str(err.get("msg", "invalid"))
    return f"{loc}: {msg}" if loc else msg


def _add_manifest_entry(
    entry: _ManifestLine, context: str, folder: Path, acl: Sequence[str], out: _Collector
) -> None:
    shown = entry.path
    if not shown.strip():
        out.reject(shown, f"{context}empty path")
        return
    target = Path(shown).expanduser()
    if not target.is_absolute():
        target = folder / target
    escapes = f"{context}path escapes the manifest's folder {folder}"
    resolved = _resolve(target)
    if resolved is None:
        # judge the written path too, so a missing file outside the folder reads as an escape
        if not Path(os.path.normpath(target)).is_relative_to(folder):
            out.reject(shown, escapes)
        else:
            out.reject(shown, f"{context}no such file")
        return
    if not resolved.is_relative_to(folder):
        out.reject(shown, escapes)
        return
    if resolved.is_dir():
        out.reject(shown, f"{context}is a folder; manifest entries must be files")
        return
    if not resolved.is_file():
        out.reject(shown, f"{context}not a regular file")
        return
    if resolved.suffix.lower() == MANIFEST_SUFFIX:
        out.reject(shown, f"{context}nested manifests are not supported")
        return
    title = entry.title.strip() if entry.title else ""
    out.add_file(
        shown,
        resolved,
        acl=entry.acl if entry.acl is not None else acl,
        tags=entry.tags or (),
        title=title or None,
        explicit=True,
        context=context,
    )
