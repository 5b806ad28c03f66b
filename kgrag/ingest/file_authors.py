"""Who a file says wrote it, read at ingestion from the file's own metadata: a PDF's
``/Author`` (its document information dictionary, read with pypdf) or else its XMP
``dc:creator``; an Office Open XML document's ``dc:creator`` (``docProps/core.xml``, .docx, .xlsx,
.pptx); an OpenDocument file's ``dc:creator`` or else ``meta:initial-creator`` (``meta.xml``,
.odt, .ods, .odp, .odg); an EPUB's ``dc:creator`` (its package document); an HTML page's
``<meta name="author">``; a Markdown file's front matter ``author:`` / ``authors:``. An e-mail
message's author is its sender (:mod:`kgrag.ingest.containers.mail`). A man page's AUTHOR
section is content, not metadata: it is not read here.

Stored on the Document as ``authors`` (a list of names) and answered by the ``document_authors``
tool and the author filter of ``metadata_search``. The names are normalised by
:func:`author_names`: whitespace collapsed, an e-mail address dropped beside a name, placeholders
that name no one (what an application writes when it knows no user: "Unknown", "Administrator",
"user") left out. Nothing here fails a file: unreadable metadata gives no author."""

from __future__ import annotations

import html
import io
import logging
import posixpath
import re
import warnings
import zipfile
from collections.abc import Iterable

__all__ = [
    "MAX_AUTHORS",
    "PLACEHOLDER_AUTHORS",
    "author_names",
    "author_words",
    "file_authors",
    "is_placeholder",
    "raw_authors",
]

logger = logging.getLogger(__name__)

_DC = "http://purl.org/dc/elements/1.1/"
_META = "urn:oasis:names:tc:opendocument:xmlns:meta:1.0"
_CONTAINER = "urn:oasis:names:tc:opendocument:xmlns:container"
_OOXML_SUFFIXES = frozenset({".docx", ".xlsx", ".pptx", ".docm", ".xlsm", ".pptm"})
_ODF_SUFFIXES = frozenset({".odt", ".ods", ".odp", ".odg", ".ott", ".ots", ".otp"})
_HTML_SUFFIXES = frozenset({".html", ".htm", ".xhtml"})
_MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".mdown", ".mkd"})
_MAX_PART_BYTES = 1_000_000
_HTML_HEAD_BYTES = 65_536
#: Names kept per document; a longer list (a mailing list's archive page) is cut.
MAX_AUTHORS = 20
#: One author's name at most (characters); longer is not a name.
MAX_AUTHOR_CHARS = 200

#: What applications and libraries write as the author when they know no one: seen on this
#: machine (``openpyxl``, the ``initial-creator`` of an .ods written through openpyxl; "The
#: user", the author of adduser's example home page for new accounts), and the
#: defaults of the common writers (python-docx's "python-docx", Office's "Microsoft Office
#: User", an account named "user", "Administrator" or "root", "Unknown"). Compared case-folded,
#: the whole name.
PLACEHOLDER_AUTHORS = frozenset(
    {
        "unknown",
        "unknown author",
        "anonymous",
        "author",
        "user",
        "admin",
        "administrator",
        "root",
        "owner",
        "none",
        "null",
        "n/a",
        "your name",
        "the user",
        "microsoft office user",
        "openpyxl",
        "python-docx",
    }
)


def is_placeholder(name: str) -> bool:
    """Whether ``name`` names no one (:data:`PLACEHOLDER_AUTHORS`, or no letter at all)."""
    folded = " ".join(name.casefold().split())
    return folded in PLACEHOLDER_AUTHORS or not any(c.isalpha() for c in folded)


def author_names(values: Iterable[str | None]) -> tuple[str, ...]:
    """The author names that ``values`` (raw metadata strings) give, in order, each once:
    a value holding several (separated by ``;`` or a line break; not by a comma, which
    "Thompson, Ken" holds) is split; ``Name <address>`` and ``address (Name)`` give the name,
    an address alone is kept; quotes and whitespace runs go; placeholders
    (:func:`is_placeholder`) are dropped."""
    out: dict[str, str] = {}
    for value in values:
        for piece in re.split(r"[;\n\r]+", html.unescape(value or "")):
            name = _one_name(piece)
            if name and not is_placeholder(name):
                out.setdefault(name.casefold(), name)
    return tuple(out.values())[:MAX_AUTHORS]


def author_words(name: str) -> list[str]:
    """The lower-case words of an author's name as the ``documents_by_metadata`` filter
    compares them (split at spaces, commas and full stops, as the statement splits a stored
    name; a possessive's "'s" dropped: "Debian's FTP masters" -> ``debian ftp masters``)."""
    words = re.split(r"[\s,.]+", name.lower())
    return [re.sub(r"['’]s$", "", w) for w in words if w]


_ADDRESS = re.compile(r"<?[\w.+-]+@[\w-]+(?:\.[\w-]+)+>?")


def _one_name(raw: str) -> str:
    """One name without its e-mail address ("Ken Thompson <ken@example.org>", "ken@example.org
    (Ken Thompson)", "Clark Cooper, clark@example.org"), the address when it is all there is."""
    text = " ".join(raw.split()).strip(" \"',")
    address = _ADDRESS.search(text)
    if address is not None:
        named = " ".join(_ADDRESS.sub(" ", text).split()).strip(" \"',;()<>")
        text = named or address.group(0).strip("<>")
    return text if len(text) <= MAX_AUTHOR_CHARS else ""


def file_authors(data: bytes, *, suffix: str, mime: str) -> tuple[str, ...]:
    """The authors of the file whose content is ``data``, read as its name's ``suffix`` (with
    the dot, lower case) and its stored ``mime`` type say; empty when it names none."""
    return author_names(raw_authors(data, suffix=suffix, mime=mime))


def raw_authors(data: bytes, *, suffix: str, mime: str) -> list[str]:
    """The author values the file's metadata holds, as written (before :func:`author_names`);
    empty when it has none or they cannot be read."""
    try:
        if data[:1024].find(b"%PDF-") >= 0:
            return _pdf_authors(data)
        if suffix in _OOXML_SUFFIXES:
            return _xml_texts(data, "docProps/core.xml", [f"{{{_DC}}}creator"])
        if suffix in _ODF_SUFFIXES:
            paths = [f".//{{{_DC}}}creator", f".//{{{_META}}}initial-creator"]
            return _xml_texts(data, "meta.xml", paths)
        if suffix == ".epub":
            return _epub_authors(data)
        if suffix in _HTML_SUFFIXES or mime in ("text/html", "application/xhtml+xml"):
            return _html_authors(data)
        if suffix in _MARKDOWN_SUFFIXES:
            return _front_matter_authors(data)
    except Exception as e:  # damaged metadata: no author, never a failed file
        logger.debug("no authors read: %s: %s", type(e).__name__, e)
    return []


def _pdf_authors(data: bytes) -> list[str]:
    import pypdf

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reader = pypdf.PdfReader(io.BytesIO(data), strict=False)
        meta = reader.metadata
        author = meta.author if meta is not None else None
        if author and author.strip():
            return [str(author)]
        xmp = reader.xmp_metadata
        creators = xmp.dc_creator if xmp is not None else None
        return [str(c) for c in creators or ()]


def _part(package: zipfile.ZipFile, name: str) -> bytes | None:
    try:
        info = package.getinfo(name)
    except KeyError:
        return None
    return package.read(info) if info.file_size <= _MAX_PART_BYTES else None


def _parse_xml(raw: bytes) -> object:
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
    return etree.fromstring(raw, parser)


def _xml_texts(data: bytes, member: str, paths: list[str]) -> list[str]:
    """The texts of the first of ``paths`` (ElementTree paths) that finds any in ``member``."""
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        raw = _part(package, member)
    if raw is None:
        return []
    root = _parse_xml(raw)
    for path in paths:
        texts = [e.text or "" for e in root.findall(path)]  # type: ignore[attr-defined]
        if any(t.strip() for t in texts):
            return texts
    return []


def _epub_authors(data: bytes) -> list[str]:
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        container = _part(package, "META-INF/container.xml")
        if container is None:
            return []
        root = _parse_xml(container)
        for rootfile in root.iter(f"{{{_CONTAINER}}}rootfile"):  # type: ignore[attr-defined]
            opf = _part(package, posixpath.normpath(rootfile.get("full-path") or ""))
            if opf is not None:
                return [e.text or "" for e in _parse_xml(opf).iter(f"{{{_DC}}}creator")]  # type: ignore[attr-defined]
    return []


_META_TAG = re.compile(rb"<meta\b[^>]*>", re.IGNORECASE)
_ATTRIBUTE = re.compile(rb"""([\w:-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""")


def _html_authors(data: bytes) -> list[str]:
    """``content`` of each ``<meta name="author">`` (or ``dc.creator``) in the page's first
    64 KB (its head)."""
    head = data[:_HTML_HEAD_BYTES]
    end = head.lower().find(b"</head")
    head = head[:end] if end >= 0 else head
    out = []
    for tag in _META_TAG.findall(head):
        attributes = {
            m.group(1).lower(): (m.group(2) or m.group(3) or m.group(4) or b"")
            for m in _ATTRIBUTE.finditer(tag)
        }
        name = attributes.get(b"name", b"").strip().lower()
        if name in (b"author", b"dc.creator", b"dcterms.creator"):
            out.append(attributes.get(b"content", b"").decode("utf-8", "replace"))
    return out


_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_AUTHOR_KEY = re.compile(r"^(?:author|authors)[ \t]*:[ \t]*(.*)$", re.IGNORECASE)
_LIST_ITEM = re.compile(r"^[ \t]+-[ \t]+(.+)$|^-[ \t]+(.+)$")


def _front_matter_authors(data: bytes) -> list[str]:
    """``author:`` / ``authors:`` of a YAML front matter block: a name, a flow list
    (``[A, B]``), or a block list of ``- name`` lines (an item's ``name:`` key too)."""
    block = _FRONT_MATTER.match(data[:_HTML_HEAD_BYTES].decode("utf-8", "replace"))
    if block is None:
        return []
    lines = block.group(1).splitlines()
    for i, line in enumerate(lines):
        found = _AUTHOR_KEY.match(line)
        if found is None:
            continue
        value = found.group(1).strip()
        if value.startswith("[") and value.endswith("]"):
            return [v for v in value[1:-1].split(",")]
        if value:
            return [re.sub(r"^name:\s*", "", value)]
        items = []
        for following in lines[i + 1 :]:
            item = _LIST_ITEM.match(following)
            if item is None:
                if following.startswith((" ", "\t")):
                    continue  # a nested key of the item before ("  email: ...")
                break
            items.append(re.sub(r"^name:\s*", "", (item.group(1) or item.group(2)).strip()))
        return items
    return []
