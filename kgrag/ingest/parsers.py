"""Read one :class:`SourceItem` into a :class:`ParsedDocument`, or say exactly why not.

Every failure is an :class:`kgrag.errors.IngestError` naming the file and the reason; nothing is
guessed silently (no encoding detection, no partial PDFs). Audio is only checked (signature;
duration probed with ffprobe, not decoded) and hashed here: transcription happens in the audio
stage.
"""

from __future__ import annotations

import hashlib
import io
import logging
import re
import warnings
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any

from kgrag.errors import EmptyInputError, IngestError
from kgrag.ingest import formats, ocr, spreadsheet
from kgrag.ingest.aligned_tables import aligned_tables
from kgrag.ingest.decoding import decode_text
from kgrag.ingest.faq import faq_headings
from kgrag.ingest.file_authors import file_authors
from kgrag.ingest.file_dates import file_dates
from kgrag.ingest.info import info_headings, info_text, is_info
from kgrag.ingest.json_tables import json_table, minified_json_text
from kgrag.ingest.markdown_inline import inline_text
from kgrag.ingest.markdown_tables import pipe_tables
from kgrag.ingest.models import ParsedDocument, ParsedImage, ParsedPage, ParsedTable, SourceItem
from kgrag.ingest.pdf_tables import pdf_tables
from kgrag.ingest.roff import ROFF_MIME, is_roff, man_page_text
from kgrag.ingest.running_lines import strip_running_lines
from kgrag.ingest.sections import Heading, line_headings, locate_headings, numbered_headings
from kgrag.ingest.sniff import document_suffix, is_html_document
from kgrag.ingest.sources import file_type
from kgrag.ingest.underlines import underlined_headings
from kgrag.modalities.audio import DEFAULT_MAX_MEDIA_SECONDS, check_media
from kgrag.text.file_names import file_name_title
from kgrag.text.words import word_set

if TYPE_CHECKING:
    from pypdf import PageObject, PdfReader

logger = logging.getLogger(__name__)

#: images (files or embedded in PDFs) with a side shorter than this are not content
MIN_IMAGE_SIDE = 16
#: embedded PDF images smaller than this on a side (icons, bullets, rules) are dropped
MIN_PDF_IMAGE_SIDE = 32
MAX_TITLE_CHARS = 200

__all__ = [
    "MIN_IMAGE_SIDE",
    "MIN_PDF_IMAGE_SIDE",
    "markdown_text",
    "parse",
    "parse_bytes",
    "read_file",
    "strip_markdown",
]


def parse(
    item: SourceItem,
    max_bytes: int,
    *,
    ocr_enabled: bool = True,
    max_media_seconds: float = DEFAULT_MAX_MEDIA_SECONDS,
) -> ParsedDocument:
    """Parse ``item``; raise :class:`IngestError` (path, reason) when it cannot be used
    (:class:`~kgrag.errors.EmptyInputError` when it holds nothing: 0 bytes, only whitespace).

    With ``ocr_enabled`` (and Tesseract installed), PDF pages without a text layer and images
    that are mostly text get their OCR text as pages (:mod:`kgrag.ingest.ocr`). A recording is
    probed, not decoded, and refused when longer than ``max_media_seconds``."""
    data = read_file(item.path, max_bytes)
    return parse_bytes(item, data, ocr_enabled=ocr_enabled, max_media_seconds=max_media_seconds)


def parse_bytes(
    item: SourceItem,
    data: bytes,
    *,
    name: PurePath | None = None,
    ocr_enabled: bool = True,
    max_media_seconds: float = DEFAULT_MAX_MEDIA_SECONDS,
) -> ParsedDocument:
    """Parse ``data``, the content of ``item``, as :func:`parse` does.

    ``name`` is the file name that decides the format when ``item.path`` is not a file on disk
    (a member of an archive, an e-mail attachment: :mod:`kgrag.ingest.containers`); such an
    item's images are kept as bytes and recordings are refused (they are read from a path)."""
    path = item.path
    in_memory = name is not None
    suffix = (name if name is not None else path).suffix.lower()
    if not data:
        raise EmptyInputError(str(path), "file is empty (0 bytes)")
    sha256 = hashlib.sha256(data).hexdigest()
    tables: list[ParsedTable] = []
    if item.modality == "text" and _read_as_text(suffix):
        actual = document_suffix(data)
        kind = file_type(actual) if actual is not None else None
        if actual is not None and kind is not None:
            # a document under a text file's name (a spreadsheet saved as "codes.csv", a PDF as
            # ".txt"): read by its own format, stored as what it is
            suffix = actual
            item = item.model_copy(update={"modality": kind[0], "mime": kind[1]})
    fmt = formats.for_suffix(suffix)
    if fmt is None and item.modality == "text" and is_html_document(data):
        # a web page under another name ("closure example.txt"): its text, not its tags, styles
        # and entities; stored as what it is, as a man page is
        fmt = formats.for_suffix(".html")
        if fmt is not None:
            item = item.model_copy(update={"mime": fmt.mime})
    if fmt is not None:
        content = fmt.parse(item, data)
        # a format's title (an HTML <title> or first heading, a DOCX core title) is judged as a
        # text file's heading is: "Introduction" titles no document
        title = _naming(content.title) or _file_title(name or path)
        pages, images, tables = list(content.pages), list(content.images), list(content.tables)
    elif suffix in spreadsheet.SUFFIXES:
        title, pages, images, tables = _parse_spreadsheet(item, data, suffix)
    elif item.modality == "text":
        title, pages, images, tables, roff = _parse_text(item, data, suffix)
        if roff:  # a man page: stored as what it is, whatever its name ("zstd.1.gz")
            item = item.model_copy(update={"mime": ROFF_MIME})
    elif item.modality == "pdf":
        title, pages, images = _parse_pdf(item, data, ocr_enabled)
        found = pdf_tables(path, data)
        tables = list(found.tables)
        pages = _without_tables(pages, found.page_texts)
    elif item.modality == "image":
        title, pages, images = _parse_image(item, data, ocr_enabled, in_memory=in_memory)
    elif in_memory:
        raise _fail(path, "recordings inside archives and messages are not read; extract it")
    else:
        title, pages, images = _parse_audio(item, data, max_media_seconds)
    if in_memory and title == _stem_title(path):
        title = _stem_title(name or path)
    if item.title:
        title = item.title
    logger.debug(
        "parsed %s: %d bytes, %d pages, %d images, %d tables",
        path,
        len(data),
        len(pages),
        len(images),
        len(tables),
    )
    return ParsedDocument(
        source=item,
        sha256=sha256,
        bytes=len(data),
        title=title,
        pages=tuple(pages),
        images=tuple(images),
        tables=tuple(tables),
        dates=file_dates(path, data, suffix=suffix, on_disk=not in_memory),
        authors=file_authors(data, suffix=suffix, mime=item.mime),
    )


_Parsed = tuple[str, list[ParsedPage], list[ParsedImage]]


def _read_as_text(suffix: str) -> bool:
    """Whether a file named with ``suffix`` is read as text: a text type (``.txt``, ``.csv``,
    ``.html``, ...) or none kgrag knows (sniffed as text), not a document format of its own."""
    kind = file_type(suffix)
    return kind is None or kind[1].startswith("text/")


def _fail(path: Path, reason: str) -> IngestError:
    return IngestError(str(path), reason)


def _mb(n: int) -> str:
    return f"{n / 1_000_000:.1f} MB"


def read_file(path: Path, max_bytes: int) -> bytes:
    """The file's bytes; IngestError when unreadable or over ``max_bytes``, EmptyInputError
    when it has none."""
    try:
        size = path.stat().st_size
    except OSError as e:
        raise _fail(path, f"cannot read file: {e.strerror or e}") from e
    _check_size(path, size, max_bytes)
    try:
        with path.open("rb") as f:
            data = f.read(max_bytes + 1)
    except OSError as e:
        raise _fail(path, f"cannot read file: {e.strerror or e}") from e
    _check_size(path, len(data), max_bytes)  # the file may have grown since stat()
    return data


def _check_size(path: Path, size: int, max_bytes: int) -> None:
    if size == 0:
        raise EmptyInputError(str(path), "file is empty (0 bytes)")
    if size > max_bytes:
        have, limit = _mb(size), _mb(max_bytes)
        if have == limit:
            have, limit = f"{size:,} bytes", f"{max_bytes:,} byte"
        raise _fail(
            path,
            f"file is {have}, over the {limit} limit (KGRAG_MAX_FILE_BYTES); "
            "raise the limit or split the file",
        )


# ---------------------------------------------------------------------------------------- text


def _parse_text(
    item: SourceItem, data: bytes, suffix: str
) -> tuple[str, list[ParsedPage], list[ParsedImage], list[ParsedTable], bool]:
    """The text's title, its one page (none when a Markdown file is only tables), no images, a
    Markdown file's pipe tables (:mod:`kgrag.ingest.markdown_tables`), and whether it was roff
    (a man page)."""
    path = item.path
    info = is_info(data)
    if info:  # a GNU Info manual: its nodes' text, without the NUL of its index marker
        data = info_text(data)
    raw = decode_text(path, data).text
    markup = ""
    roff = False
    headings: tuple[Heading, ...] = ()
    tables: tuple[ParsedTable, ...] = ()
    if suffix in (".md", ".markdown"):
        raw, tables = pipe_tables(raw, path)
        text, heading, headings = markdown_text(raw)
        markup = " and Markdown markup"
    elif is_roff(raw):  # a man page, whatever its name ("zstd.1", "cscope.man")
        text, heading, headings = man_page_text(raw)
        markup, roff = " and roff requests", True
    else:
        text, heading = raw, None
        if info:
            headings = info_headings(text)
        else:
            text, headings, tables = _plain_text(path, text, suffix)
    if not text.strip() and not tables:
        raise EmptyInputError(str(path), f"contains no text (only whitespace{markup})")
    if _release_log(path):
        # its first line is the newest release's heading ("Release 3.19.0 (11 Apr 2022)"), not
        # what the file is: every release of it would be cited under the newest one's name
        title = _file_title(path)
    else:
        first = _first_line(text)
        if first is not None and first.lower() == path.name.lower():
            first = None  # "# errcodes.txt": the file's name, which its file title gives
        title = _naming(heading) or _naming(first, prose=True) or _file_title(path)
    pages = [ParsedPage(number=None, text=text, headings=headings)] if text.strip() else []
    return title, pages, [], list(tables), roff


def _plain_text(
    path: Path, text: str, suffix: str
) -> tuple[str, tuple[Heading, ...], tuple[ParsedTable, ...]]:
    """A plain text file's text, its underlined headings (:mod:`kgrag.ingest.underlines`; none
    when it reads as a FAQ or has numbered heading lines, which section it already) and
    its aligned tables (:mod:`kgrag.ingest.aligned_tables`), a JSON file's list of records as a
    table (:mod:`kgrag.ingest.json_tables`), minified JSON that is no table one value a line. A
    release log's lines (a diff's statistics, a ChangeLog's "* file:  what changed" wrapped at a
    column) and source code's (declarations aligned at a column) are not tables."""
    found = json_table(text)
    if found is not None:
        return "", (), (found,)
    text = minified_json_text(text) or text
    tables: tuple[ParsedTable, ...] = ()
    name = path.name.split(".", 1)[0].lower()
    if name not in RELEASE_LOG_NAMES and suffix.lstrip(".") not in SOURCE_CODE_SUFFIXES:
        text, tables = aligned_tables(text, path)
    marked, headings = underlined_headings(text)
    # a FAQ's questions and numbered heading lines section a text the chunker reads without
    # headings of its own (kgrag.ingest.chunking): marked ones would turn them off
    if headings and not faq_headings(text) and not numbered_headings(text):
        text = marked
    else:
        headings = ()
    return text, headings, tables


#: Suffixes of source code, whose columns are declarations, not tables.
SOURCE_CODE_SUFFIXES = word_set(
    """c h cc cpp cxx hpp hh m py pl pm rb php js ts go rs java kt scala cs swift lua tcl awk
    sed sh bash zsh ksh el vim lisp scm hs ml s asm sql r jl"""
)


#: File names that say what kind of file it is, not what it is about: the folder says that.
GENERIC_FILE_NAMES = word_set(
    """readme copyright copying license licence changelog changes news authors contributors
    todo install notice history index"""
)


#: The names of release logs (``NEWS``, ``ChangeLog``, ``CHANGES.md``, ``changelog.Debian``):
#: entries newest first, so the first line heads one release and the file is titled by its name
#: and folder instead ("changelog (valgrind)").
RELEASE_LOG_NAMES = word_set("changelog changes news history")


def _release_log(path: PurePath) -> bool:
    """Whether ``path`` names a release log: ``changelog.Debian.gz`` too, and a name a package's
    name was put before ("login NEWS.Debian.gz", "hunspell-en-us NEWS.Debian.gz"), whose first
    line heads a release all the same ("shadow (1:4.11.1+dfsg1-0exp1) experimental; ...")."""
    words = path.name.split(".", 1)[0].lower().split()
    return bool(words) and words[-1] in RELEASE_LOG_NAMES


def _file_title(path: PurePath) -> str:
    """The file's name as its title; a generic one ("copyright", "README") with its folder's:
    "copyright (espeak-ng)", so that two packages' licence files are told apart. A generic name
    keeps an extension that is no file type ("README.saving (fakeroot)", "README.Debian
    (passwd)"), as a gzipped one's does ("NEWS.Debian (systemd)"): fakeroot's README and
    README.saving are two files of one folder."""
    if path.name.split(".", 1)[0].lower() in GENERIC_FILE_NAMES and path.parent.name:
        named = path.name if path.suffix and file_type(path.suffix) is None else path.stem
        return f"{file_name_title(named)} ({path.parent.name})"
    return _stem_title(path)


def _stem_title(path: PurePath) -> str:
    """The file's name without its extension, read as a title
    (:func:`file_name_title`)."""
    return file_name_title(path.stem)


#: Headings that name a section of any document, not a document ("Introduction", "README").
GENERIC_HEADINGS = word_set(
    """introduction overview readme abstract contents preface summary about description notes
    index home untitled document title changelog changes news todo"""
) | {"table of contents", "read me", "getting started"}
#: A first line that is boilerplate, not a title: a copyright or licence line (in a source file's
#: comment too: "// Copyright 2009 The Go Authors."), a shebang, an editor's mode line.
_BOILERPLATE = re.compile(
    r"^(?:(?://+|#+|/\*+|\*+|;+|--|%+|rem\s)\s*)?"  # in a comment of source code
    r"(?:copyright\b|\(c\)|©|spdx-license-identifier)|^#!|-\*-.*-\*-",
    re.IGNORECASE,
)


#: A first line of prose that is not a title: a ``Field: value`` header line ("Format: ...",
#: "Upstream-Name: ..."), a setting (``name = value``), a line holding a web or e-mail address
#: (a mailbox's "From rms@gnu.org Thu Jul 22 20:37:55 1999"), a list item, a sentence or a
#: label.
_NOT_A_TITLE = re.compile(
    r"^[A-Za-z][\w-]*:\s|https?://|www\.|(?<![\w.+-])[\w.+-]+@[\w-]+\.[\w.-]+"
    # a setting ("config_version = \"1\"", a TOML or INI file's first line)
    r"|^[A-Za-z_][\w.-]*[ \t]*=[ \t]*\S"
    # a list item ("- check that ... is installed"), a sentence ("Please read x.txt for
    # documentation.") or a label of what follows ("To install:")
    r"|^(?:[-*+•]|\d+[.)])\s|[^.][.:]$"
    # a sentence and the start of the next ("Cscope is a ... browsing tool.  Although it is")
    r"|[a-z]{2}[.!?]\s+[A-Z]"
)
#: Words a title does not end with: the first line is a sentence cut at the line's end
#: ("This package was debianized by Luke Yelavich on").
_CONTINUES = word_set("a an and as at by for from in into of on or the to with")


def _naming(line: str | None, *, prose: bool = False) -> str | None:
    """``line`` when it can be the document's title: not a generic section heading
    ("Introduction"), not a copyright line or a shebang, not data or markup (a JSON or XML
    file's first line); else None (the file name is used). With ``prose`` (a plain first line,
    not a heading), also not a header field, an address, or a sentence that continues on the
    next line."""
    if not line:
        return None
    if prose and (
        _NOT_A_TITLE.search(line) or line.rstrip(" ,;").rsplit(" ", 1)[-1].lower() in _CONTINUES
    ):
        return None
    bare = line.strip(" #*:=-").lower()
    if bare in GENERIC_HEADINGS or _BOILERPLATE.search(line.strip()):
        return None
    if line.lstrip().startswith(("{", "[", "<")) or not _WORD.search(line):
        return None  # data or markup: "{", "<?xml ...>", "---"
    return line


_WORD = re.compile(r"[^\W_]{2}")


_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT_RULE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
#: Lines that are no paragraph's, so no setext heading's text: a list item, an ATX heading, a
#: fence, a rule, a block quote's line, an indented code line.
_NOT_PARAGRAPH = re.compile(
    r"^ {0,3}(?:[-*+]\s|\d+[.)]\s|#|```|~~~|>|[-=*_](?:[ \t]*[-=*_])*[ \t]*$)|^ {4}"
)
_THEMATIC_BREAK = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_BLOCKQUOTE = re.compile(r"^ {0,3}>[ \t]?")
_LINK_DEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s+\S+.*$")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
#: A line of badges: only images that are links ("[![CircleCI](...svg)][circleci]",
#: "[![PyPI version](...)](https://pypi.org/...)"). Their alt texts name build services and
#: registries, not what the document is about, and opened its first chunk.
_LINKED_IMAGE = r"\[!\[[^\]]*\](?:\([^)]*\)|\[[^\]]*\])\](?:\([^)]*\)|\[[^\]]*\])"
_BADGES = re.compile(rf"[ \t]*(?:{_LINKED_IMAGE}[ \t]*)+")
#: A link whose text is wrapped onto the next line ("[prometheus-dcgm" then
#: "](https://github.com/...)"): the line-by-line rules see no link, and the address stayed.
_WRAPPED_LINK = re.compile(r"(?<!!)\[([^\[\]\n]*\n[^\[\]\n]*)\]\([^()\s]*\)")


#: A heading's attribute block ("## Introduction {#intro}", "# Setup {.tabs #setup}": Pandoc,
#: kramdown, Hugo, MkDocs' attr_list), not words of the heading.
_HEADING_ATTRIBUTES = re.compile(r"[ \t]*\{[ \t]*[#.:][^{}]*\}[ \t]*$")
#: A front matter block (Jekyll, Hugo, MkDocs, Pandoc): YAML between "---" lines, or TOML
#: between "+++" lines, at the very start of the file.
_FRONT_MATTER = re.compile(
    r"\A(?:---[ \t]*\n(.*?)\n(?:---|\.\.\.)|\+\+\+[ \t]*\n(.*?)\n\+\+\+)[ \t]*(?:\n|\Z)", re.DOTALL
)
_FRONT_MATTER_TITLE = re.compile(
    r"^title[ \t]*[:=][ \t]*(.+?)[ \t]*$", re.MULTILINE | re.IGNORECASE
)


def front_matter_title(markdown: str) -> tuple[str, str | None]:
    """``markdown`` without its front matter block, and the block's ``title`` (quotes removed),
    if any: the document's own name for itself, before its first heading ("Introduction")."""
    block = _FRONT_MATTER.match(markdown)
    if block is None:
        return markdown, None
    found = _FRONT_MATTER_TITLE.search(block.group(1) or block.group(2) or "")
    title = found.group(1).strip().strip("'\"").strip() if found else None
    return markdown[block.end() :], title or None


def strip_markdown(markdown: str) -> tuple[str, str | None]:
    """:func:`markdown_text`'s text and title."""
    text, title, _ = markdown_text(markdown)
    return text, title


def markdown_text(markdown: str) -> tuple[str, str | None, tuple[Heading, ...]]:
    """Remove the Markdown syntax that would pollute embeddings; keep all the words.

    Heading markers and attribute blocks ("{#intro}"), emphasis/strike/code markers, link and
    image URLs (their text or alt text stays), link definitions, block quote markers, fence
    lines and thematic breaks go; list markers, tables and code content stay. A front matter
    block goes, its title staying as the text's first line. Returns the text, the title (the
    front matter's, else the first heading's text) and the headings (``#`` to ``######`` at
    levels 1 to 6, an underline of ``=`` 1 and of ``-`` 2).
    """
    markdown, title = front_matter_title(_HTML_COMMENT.sub("", markdown))
    markdown = _WRAPPED_LINK.sub(lambda m: re.sub(r"\n[ \t]*", " ", m.group(1)), markdown)
    lines_out: list[str] = [title, ""] if title else []
    heading: str | None = title
    marks: list[tuple[int, int, str]] = []  # (line, level, text)
    in_fence = False
    paragraph = False  # the line before is a paragraph's (a setext heading's text)
    for raw in markdown.split("\n"):
        line, after_paragraph = raw, paragraph
        paragraph = bool(raw.strip()) and not in_fence and not _NOT_PARAGRAPH.match(raw)
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            lines_out.append(line)
            continue
        line = _BLOCKQUOTE.sub("", line)
        m = _ATX_HEADING.match(line)
        if m:
            # a badge after a heading's words ("# pkgconf [![test](...svg)](...)") is no word
            # of it: its alt text titled pkgconf's README "pkgconf test"
            line = inline_text(_BADGES.sub("", _HEADING_ATTRIBUTES.sub("", m.group(2) or "")))
            if heading is None and line.strip():
                heading = line.strip()
            marks.append((len(lines_out), len(m.group(1)), line))
            lines_out.append(line)
            continue
        if _BADGES.fullmatch(line):
            continue
        # an underline of dashes under a paragraph's line makes it a heading (CommonMark), not
        # a thematic break: "Part" over "----" was read as text and a rule
        setext = _SETEXT_RULE.match(line)
        if setext and after_paragraph and lines_out and lines_out[-1].strip():
            if heading is None:
                heading = lines_out[-1].strip()
            marks.append((len(lines_out) - 1, 1 if setext.group(1)[0] == "=" else 2, lines_out[-1]))
            lines_out.append("")
            continue
        if _THEMATIC_BREAK.match(line) or _LINK_DEF.match(line):
            lines_out.append("")
            continue
        lines_out.append(inline_text(line))
    return "\n".join(lines_out).strip("\n"), heading, line_headings(lines_out, marks)


#: An editor's mode line ("-*- text -*-", "# -*- readme-debian -*-", "GNU gzip NEWS  -*- outline
#: -*-"): how Emacs should show the file, not its words.
_MODE_LINE = re.compile(r"-\*-.*?-\*-")
#: vi's, Vim's or vile's mode line ("-- vile:txtmode fc=78", "# vim:set ft=sh sw=2 et:").
_VI_MODE_LINE = re.compile(r"(?:^|\s)(?:vim?|vile):[ \t]*\S.*$")
#: A revision control keyword as RCS and CVS expand it ("$Id: TODO,v 1.21 2013-07-02 ... $",
#: "$MawkId: README,v 1.6 2019/01/29 02:05:45 tom Exp $", "($Date: 2001/02/04 12:06:10 $)"):
#: the file's revision, not what it is about.
_RCS_KEYWORD = re.compile(r"\(?\$[A-Z][A-Za-z]*:[^$\n]*\$\)?")
#: The comment mark a plain-text line opens with, and closes with, then a space ("#
#: /etc/nsswitch.conf", "#\tATOMIC TIME", "# ~/.bashrc: ... #"): a configuration or data file's
#: comment, or a Markdown heading in a file not named ``.md``; the words between are the line.
#: Not a shebang ("#!/bin/sh") nor a C directive ("#include <stdio.h>"), with no space after.
_COMMENT_MARKS = re.compile(r"^#+(?=[ \t]|$)[ \t]*|[ \t]+#+$")
#: A first line this long, not ending a sentence, whose next line goes on in lower case, is
#: prose wrapped at the text's width ("You are looking for the traditional text log files in
#: /var/log, and they are" then "gone?"), not a title: plain text wraps at 72 to 80 columns, and
#: a title standing alone is shorter.
_WRAPPED_PROSE_CHARS = 60


#: An Org document's title keyword ("#+TITLE: GnuPG Details"), among the keyword and comment
#: lines that open it ("# doc/DETAILS  -*- org -*-", "#+OPTIONS: ^:{}").
_ORG_HEADER_LINES = 20
_ORG_TITLE = re.compile(r"^#\+title:[ \t]*(\S.*?)\s*$", re.IGNORECASE)


def _org_title(lines: list[str]) -> str | None:
    """The ``#+TITLE:`` of an Org document, when the lines before it are comments, keywords or
    blank (Org's in-buffer settings open the file); None otherwise."""
    for raw in lines:
        if match := _ORG_TITLE.match(raw):
            return match.group(1)
        if raw.strip() and not raw.lstrip().startswith("#"):
            return None
    return None


def _first_line(text: str) -> str | None:
    """The text's first line, without an editor's mode line, a revision control keyword or the
    comment marks around it; a line left with no words (a mode line, "$Id: ... $") is passed
    over: wget's README is "GNU Wget", not "README (wget)", gnupg's DETAILS "GnuPG Details"
    (its Org title keyword: :func:`_org_title`), not "doc/DETAILS", mawk's "mawk -- an
    implementation of new/posix awk", not "-- $MawkId: README,v 1.6 ... $". So is a comment with
    no words ("#") when a comment with words follows it ("# /etc/login.defs - Configuration control
    ..."), not code (a Makefile's "PROGRAMS = \\"). None when that line is wrapped prose
    (:data:`_WRAPPED_PROSE_CHARS`): the file is then named by its name."""
    lines = text.split("\n")
    org = _org_title(lines[:_ORG_HEADER_LINES])
    if org is not None:
        return org[:MAX_TITLE_CHARS]
    in_comment = False
    for n, raw in enumerate(lines):
        line = _MODE_LINE.sub(" ", raw)
        if line != raw and not _WORD.search(line):
            continue
        line = _RCS_KEYWORD.sub(" ", _VI_MODE_LINE.sub(" ", line))
        stripped = line.strip()
        bare = _COMMENT_MARKS.sub("", stripped)
        if not _WORD.search(bare) and (line != raw or bare != stripped):
            # a comment with no words ("#"), a keyword or a vi mode line: in a "#" comment, the
            # comment must go on ("# vim:set ft=sh ..." then the script's code names nothing)
            in_comment = in_comment or raw.lstrip().startswith("#")
            continue
        line = " ".join(bare.split())
        if line:
            if in_comment and bare == stripped:
                return None  # the comment ended with no words: code or data follows
            if _wrapped(line, lines[n + 1] if n + 1 < len(lines) else ""):
                return None
            if len(line) > MAX_TITLE_CHARS:
                cut = line[:MAX_TITLE_CHARS].rsplit(" ", 1)[0]
                line = cut + "…"
            return line
    return None


def _wrapped(line: str, following: str) -> bool:
    """Whether ``line`` is a line of prose that ``following`` goes on with."""
    nxt = _COMMENT_MARKS.sub("", following.strip())
    return (
        len(line) >= _WRAPPED_PROSE_CHARS
        and not line.endswith((".", "!", "?", ":", ";"))
        and nxt[:1].islower()
    )


# -------------------------------------------------------------------------------- spreadsheets


def _parse_spreadsheet(
    item: SourceItem, data: bytes, suffix: str
) -> tuple[str, list[ParsedPage], list[ParsedImage], list[ParsedTable]]:
    path = item.path
    pages: list[ParsedPage] = []
    if suffix in (".csv", ".tsv"):
        text = decode_text(path, data).text
        tables = spreadsheet.parse_csv(path, text)
        # the comment lines a data file starts with describe it: they are its text
        described = "\n".join(spreadsheet.split_preamble(text).comments).strip()
        if described:
            pages.append(ParsedPage(number=None, text=described))
    else:
        tables = spreadsheet.parse_xlsx(path, data)
    return _stem_title(path), pages, [], tables


# ----------------------------------------------------------------------------------------- pdf


def _without_tables(pages: list[ParsedPage], texts: dict[int, str]) -> list[ParsedPage]:
    """Pages whose tables were read as rows keep only the text outside their tables."""
    out = []
    for page in pages:
        text = texts.get(page.number or 0, page.text)
        if text.strip():
            if text != page.text:  # the same headings, placed on the text without the tables
                placed = [(h.level, h.text) for h in page.headings]
                page = page.model_copy(
                    update={"text": text, "headings": locate_headings(text, placed)}
                )
            out.append(page)
    return out


def _parse_pdf(item: SourceItem, data: bytes, ocr_enabled: bool) -> _Parsed:
    path = item.path
    import pypdf
    from pypdf.errors import PyPdfError

    if b"%PDF-" not in data[:1024]:
        raise _fail(path, "not a PDF (no %PDF- header)")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reader = pypdf.PdfReader(io.BytesIO(data), strict=False)
            if reader.is_encrypted and not reader.decrypt(""):
                raise _fail(path, "PDF is password-protected; decrypt it first")
            count = len(reader.pages)
    except IngestError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, OSError) as e:
        raise _fail(path, f"corrupt or unreadable PDF: {e}") from e
    except Exception as e:  # pypdf raises assorted errors on damaged files
        raise _fail(path, f"corrupt or unreadable PDF: {type(e).__name__}: {e}") from e
    if count == 0:
        raise _fail(path, "PDF has no pages")

    pages: list[ParsedPage] = []
    images: list[ParsedImage] = []
    textless: list[int] = []
    for number in range(1, count + 1):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                page = reader.pages[number - 1]
                text = page.extract_text() or ""
        except Exception as e:  # a damaged page: refuse the file rather than drop pages
            raise _fail(
                path, f"corrupt or unreadable PDF: page {number}: {type(e).__name__}: {e}"
            ) from e
        text = text.replace("\r\n", "\n").replace("\x00", "")
        if text.strip():
            pages.append(ParsedPage(number=number, text=text))
        else:
            textless.append(number)
        images.extend(_pdf_page_images(path, page, number))
    ocr_ran = bool(textless) and ocr_enabled and ocr.available()
    if ocr_ran:
        scanned = ocr.pdf_page_texts(path, data, textless)
        pages.extend(ParsedPage(number=n, text=t) for n, t in scanned.items())
        pages.sort(key=lambda p: p.number or 0)
    if not pages and not images:
        raise _fail(
            path,
            f"PDF has no extractable text and no images on its {count} page(s)"
            + ("; OCR found no text either" if ocr_ran else "; is it a scan? run OCR on it first"),
        )
    title = (
        _pdf_title(reader)
        or (_naming(_first_line(pages[0].text)) if pages else None)
        or _stem_title(path)
    )
    outline = _pdf_outline(reader)
    pages = [
        page.model_copy(
            update={
                "headings": locate_headings(
                    page.text,
                    [(h.level, h.text) for h in page.headings]
                    + [(level, text) for level, text in outline.get(page.number or 0, ())],
                )
            }
        )
        for page in strip_running_lines(pages)
    ]
    return title, pages, images


def _pdf_outline(reader: PdfReader) -> dict[int, list[tuple[int, str]]]:
    """The PDF's outline (its bookmarks: the table of contents a viewer shows) as page number
    -> (depth from 1, title) of the sections starting on it, in order; empty when it has none
    or it cannot be read."""
    out: dict[int, list[tuple[int, str]]] = {}

    def walk(items: list[Any], depth: int) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
                continue
            try:
                index = reader.get_destination_page_number(item)
                title = " ".join(str(item.title).split())
            except Exception as e:  # a broken destination: the outline helps, it is not content
                logger.debug("PDF outline entry unreadable: %s", e)
                continue
            if index is not None and index >= 0 and title:
                out.setdefault(index + 1, []).append((depth, title))

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            walk(reader.outline, 1)
    except Exception as e:
        logger.debug("PDF outline unreadable: %s", e)
        return {}
    return out


def _pdf_page_images(path: Path, page: PageObject, number: int) -> list[ParsedImage]:
    out: list[ParsedImage] = []
    try:
        files = page.images
        count = len(files)
    except Exception as e:
        logger.warning("%s: page %d: cannot list images (%s); skipping them", path, number, e)
        return out
    for index in range(count):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                image_file = files[index]
                img = image_file.image
                if img is None:
                    continue
                width, height = img.size
                blob = bytes(image_file.data)
        except Exception as e:  # one undecodable image (exotic filter) does not sink the PDF
            logger.warning(
                "%s: page %d: image %d cannot be decoded (%s: %s); skipping it",
                path,
                number,
                index + 1,
                type(e).__name__,
                e,
            )
            continue
        if min(width, height) < MIN_PDF_IMAGE_SIDE:
            continue
        out.append(ParsedImage(data=blob, page=number, width=width, height=height))
    return out


def _pdf_title(reader: PdfReader) -> str | None:
    try:
        meta = reader.metadata
        title = meta.title if meta is not None else None
    except Exception:
        return None
    if not isinstance(title, str):
        return None
    title = " ".join(title.split())
    return title[:MAX_TITLE_CHARS] or None


# --------------------------------------------------------------------------------------- image


def _parse_image(
    item: SourceItem, data: bytes, ocr_enabled: bool, *, in_memory: bool = False
) -> _Parsed:
    path = item.path
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as probe:
                probe.verify()
            with Image.open(io.BytesIO(data)) as img:
                img.load()
                width, height = img.size
    except UnidentifiedImageError as e:
        raise _fail(path, "not a readable image (unknown or damaged format)") from e
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as e:
        raise _fail(path, f"image is too large to decode safely: {e}") from e
    except Exception as e:  # truncated or damaged data: OSError, SyntaxError, ValueError, ...
        raise _fail(path, f"corrupt image: {type(e).__name__}: {e}") from e
    if min(width, height) < MIN_IMAGE_SIDE:
        raise _fail(
            path,
            f"image is {width}x{height} pixels; images need at least {MIN_IMAGE_SIDE} pixels "
            "on each side",
        )
    title = _stem_title(path)
    if in_memory:  # no file of its own: the pipeline saves it beside the extracted ones
        image = ParsedImage(data=data, width=width, height=height, caption=item.title)
    else:
        image = ParsedImage(path=path, width=width, height=height, caption=item.title)
    text = ocr.image_text(path, data) if ocr_enabled else None
    pages = [ParsedPage(number=None, text=text)] if text else []
    return title, pages, [image]


# --------------------------------------------------------------------------------------- audio


def _audio_signature_ok(suffix: str, head: bytes) -> bool:
    if suffix == ".wav":
        return head[:4] in (b"RIFF", b"RF64") and head[8:12] == b"WAVE"
    if suffix == ".flac":
        return head[:4] == b"fLaC" or head[:3] == b"ID3"
    if suffix in (".ogg", ".oga", ".opus"):
        return head[:4] == b"OggS"
    if suffix == ".aac":  # ADTS frames (0xFFF sync word, layer 0), or an ADIF header
        return head[:4] == b"ADIF" or (len(head) > 1 and head[0] == 0xFF and head[1] & 0xF6 == 0xF0)
    if suffix == ".avi":
        return head[:4] == b"RIFF" and head[8:12] == b"AVI "
    if suffix == ".mp3":
        return head[:3] == b"ID3" or (len(head) > 1 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0)
    if suffix in (".m4a", ".mp4", ".mov"):
        return head[4:8] in (b"ftyp", b"moov", b"mdat", b"free", b"wide", b"skip")
    if suffix in (".mkv", ".webm"):
        return head[:4] == b"\x1a\x45\xdf\xa3"
    return True


_AUDIO_EXPECTED = {
    ".wav": "a RIFF/WAVE header",
    ".flac": "an fLaC header",
    ".ogg": "an OggS header",
    ".oga": "an OggS header",
    ".opus": "an OggS header",
    ".aac": "an ADTS frame or an ADIF header",
    ".avi": "a RIFF/AVI header",
    ".mov": "a QuickTime 'ftyp' or 'moov' box",
    ".mp3": "an ID3 tag or an MPEG frame header",
    ".m4a": "an MP4 'ftyp' box",
    ".mp4": "an MP4 'ftyp' box",
    ".mkv": "a Matroska (EBML) header",
    ".webm": "a WebM (EBML) header",
}


def _parse_audio(item: SourceItem, data: bytes, max_media_seconds: float) -> _Parsed:
    path = item.path
    suffix = path.suffix.lower()
    if not _audio_signature_ok(suffix, data[:16]):
        expected = _AUDIO_EXPECTED.get(suffix, "a known header")
        raise _fail(path, f"does not look like a {suffix} file (expected {expected})")
    # before any decoding: a tiny file can hold hours of audio (MediaTooLongError names it)
    check_media(path, max_media_seconds)
    return _stem_title(path), [], []
