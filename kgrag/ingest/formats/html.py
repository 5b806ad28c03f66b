"""HTML pages: the main content as text (headings as their own lines), tables as data.

The page is parsed by selectolax (Lexbor, no network, no models). The content root is the page's
``<main>`` (or ``role="main"``, or its only ``<article>``), else its ``<body>``. Left out as
boilerplate: scripts, styles, forms, ``<nav>``, ``<aside>``, site headers and footers (those not
inside an article, main or section), elements with a navigation/banner/footer/search role,
hidden elements, and elements whose class or id says navigation (``nav*``, ``*navbar*``,
``*sidebar*``, ``*breadcrumb*``, ``*cookie*``, ``menu``, ``footer``). A ``<table>`` of at least
two rows is read as a :class:`~kgrag.ingest.models.ParsedTable` (caption: its ``<caption>``, else
the heading it sits under) and kept out of the text; a table holding tables (page layout) is read
as text. A cell spanning rows or columns gives its text to each (so every row reads whole). A
heading loses the permalink a generator appends to it (``Options #``, ``Install ¶``).

Bounds: a page of more than :data:`MAX_HTML_BYTES` is refused before parsing, and the tables'
cells count against :data:`~kgrag.ingest.formats._common.MAX_TABLE_CELLS`; a page whose elements
nest deeper than :data:`MAX_HTML_DEPTH` is read as text with its tags dropped. EPUB chapters are
read by :func:`extract_html` too.
"""

from __future__ import annotations

import codecs
import html
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from kgrag.errors import EmptyInputError, IngestError
from kgrag.ingest.decoding import decode_text, decode_utf8
from kgrag.ingest.formats._common import (
    CellBudget,
    TextBuilder,
    make_table,
    one_line,
    require,
    title_text,
)
from kgrag.ingest.formats.registry import DocumentFormat, ParsedContent, register
from kgrag.ingest.models import ParsedPage, ParsedTable, SourceItem
from kgrag.ingest.sections import Heading

if TYPE_CHECKING:
    from selectolax.lexbor import LexborHTMLParser, LexborNode

__all__ = [
    "HTML",
    "MAX_HTML_BYTES",
    "MAX_HTML_DEPTH",
    "HtmlText",
    "decode_html",
    "extract_html",
    "html_to_text",
    "nesting_depth",
    "parse_html",
]

#: Bytes of one HTML page (or EPUB chapter): a larger page is refused, not parsed.
MAX_HTML_BYTES = 10 * 1024 * 1024

_SKIP_TAGS = frozenset(
    {
        *("script", "style", "noscript", "template", "head", "title", "meta", "link"),
        *("nav", "aside", "form", "button", "select", "textarea", "input", "label"),
        *("svg", "math", "iframe", "object", "embed", "canvas", "dialog", "video", "audio"),
    }
)
_PAGE_CHROME = frozenset({"header", "footer"})
#: inside these, a <header> or <footer> belongs to the content (an article's title), not the site
_CONTENT_TAGS = frozenset({"article", "main", "section"})
_SKIP_ROLES = frozenset(
    {"navigation", "banner", "contentinfo", "search", "menu", "menubar", "dialog", "complementary"}
)
_NAV_WORDS = ("navbar", "sidebar", "breadcrumb", "cookie", "skip-link", "skiplink")
_NAV_TOKENS = frozenset({"menu", "footer", "masthead"})
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_BLOCKS = frozenset(
    {
        *("p", "div", "section", "article", "main", "blockquote", "dd", "dt", "dl"),
        *("figure", "figcaption", "address", "details", "summary", "center", "body", "hr"),
        *("header", "footer", "caption", "tr", "td", "th", "tbody", "thead", "tfoot", "table"),
    }
)
_LISTS = frozenset({"ul", "ol", "menu"})
#: the permalink a documentation generator appends to a heading ("Options #", "Install ¶")
_PERMALINK = re.compile(r"\s+[#¶]$")
_CHARSET = re.compile(
    rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)"""
    rb"""|^\s*<\?xml[^>]*encoding\s*=\s*["']([A-Za-z0-9_.:-]+)""",
    re.IGNORECASE,
)


@dataclass
class HtmlText:
    """What one HTML document holds: its title, text, tables and the images it points to."""

    title: str | None
    text: str
    first_heading: str | None
    tables: list[ParsedTable] = field(default_factory=list)
    headings: tuple[Heading, ...] = ()
    """``<h1>``-``<h6>`` placed on the text's lines, at levels 1-6."""
    images: list[tuple[str, str | None]] = field(default_factory=list)
    """``(src, alt)`` of each ``<img>`` in the content, in reading order."""


def decode_html(path: Path, data: bytes) -> str:
    """UTF-8 text, or text in the charset the page declares in a ``<meta>`` (or, for XHTML, its
    XML declaration) in its first 4 KB, or, declaring none, in the legacy encoding
    :func:`kgrag.ingest.decoding.decode_text` reads."""
    try:
        return decode_utf8(path, data)
    except IngestError as utf8_error:
        m = _CHARSET.search(data[:4096])
        if m is None:
            return decode_text(path, data).text
        name = (m.group(1) or m.group(2)).decode("ascii").lower()
        try:
            codec = codecs.lookup(name).name
        except LookupError:
            raise IngestError(
                str(path), f"{utf8_error.reason}; the page declares charset {name!r}, unknown here"
            ) from None
        if codec == "utf-8":  # declared, but not: most often Windows-1252 text
            return decode_text(path, data).text
        if codec in ("latin-1", "iso8859-1", "ascii"):
            codec = "cp1252"  # what browsers read for both (the WHATWG encoding standard)
        try:
            text = data.decode(codec)
        except UnicodeDecodeError:
            text = data.decode("latin-1") if codec == "cp1252" else ""
            if not text:
                raise IngestError(
                    str(path), f"not valid {name} text, the charset the page declares"
                ) from None
        return text.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")


def html_to_text(markup: str) -> str:
    """A plain reading of HTML, tags dropped: an e-mail's HTML body when no HTML format is
    registered, a page nested too deep to parse (:data:`MAX_HTML_DEPTH`)."""
    markup = re.sub(r"(?is)<(script|style|head)\b.*?</\1\s*>", " ", markup)
    markup = re.sub(r"(?i)<br\s*/?>|</(p|div|li|tr|h[1-6])\s*>", "\n", markup)
    text = html.unescape(re.sub(r"<[^>]+>", " ", markup))
    return "\n".join(" ".join(line.split()) for line in text.splitlines()).strip()


#: Elements open inside one another beyond which a page is read as text with its tags dropped
#: (:func:`html_to_text`), not parsed: Lexbor's tree builder looks through the open elements at
#: each block's start tag, so a page of 100,000 nested ``<div>``\ s (a fuzzed copy of a real
#: page) took 77 s to parse, 40,000 took 4.6 s, 5,000 0.04 s.
MAX_HTML_DEPTH = 5000
#: Elements that are no deeper than their parent's level: void ones, and those HTML closes by
#: itself when the next one starts (``<p>``, ``<li>``, table cells...).
_FLAT_TAGS = frozenset(
    {
        *("area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param"),
        *("source", "track", "wbr", "p", "li", "dt", "dd", "tr", "td", "th", "tbody", "thead"),
        *("tfoot", "option", "optgroup", "rb", "rt", "rp", "colgroup", "caption", "html"),
        *("head", "body"),
    }
)
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)[^<>]*?(/?)>")


def nesting_depth(text: str, stop: int = MAX_HTML_DEPTH) -> int:
    """How deep the elements of ``text`` nest, by its tags (not a parse; at most ``stop``)."""
    depth = deepest = 0
    for m in _TAG.finditer(text):
        if m.group(3) or m.group(2).lower() in _FLAT_TAGS:
            continue
        if m.group(1):
            depth = max(0, depth - 1)
        else:
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest >= stop:
                    break
    return deepest


def _cell_tags(text: str) -> int:
    """About how many ``<td>``/``<th>`` start tags ``text`` holds (a byte count, not a parse)."""
    count = 0
    for case in (str.lower, str.upper):
        count += text.count(case("<td")) + text.count(case("<th")) - text.count(case("<thead"))
    return count


def _skipped(node: LexborNode, in_content: bool) -> bool:
    tag = node.tag or ""
    if tag in _SKIP_TAGS or (tag in _PAGE_CHROME and not in_content):
        return True
    attrs = node.attributes
    if "hidden" in attrs or (attrs.get("aria-hidden") or "").lower() == "true":
        return True
    if (attrs.get("role") or "").lower() in _SKIP_ROLES:
        return True
    style = (attrs.get("style") or "").replace(" ", "").lower()
    if "display:none" in style:
        return True
    names = f"{attrs.get('class') or ''} {attrs.get('id') or ''}".lower().split()
    return any(
        n.startswith("nav") or n in _NAV_TOKENS or any(w in n for w in _NAV_WORDS) for n in names
    )


def _content_root(tree: LexborHTMLParser) -> LexborNode | None:
    for selector in ("main", "[role=main]"):
        found = tree.css_first(selector)
        if found is not None and (found.text(deep=True) or "").strip():
            return found
    articles = tree.css("article")
    if len(articles) == 1 and (articles[0].text(deep=True) or "").strip():
        return articles[0]
    return tree.body or tree.root


def _span(cell: LexborNode, attribute: str) -> int:
    """A cell's ``colspan``/``rowspan`` (1 when absent or odd; at most 64). Only ASCII digits
    make a span: ``"⁴"`` is a digit to ``str.isdigit`` but no number to ``int``."""
    value = (cell.attributes.get(attribute) or "1").strip()
    return min(int(value), 64) if value.isascii() and value.isdigit() and int(value) > 0 else 1


def _cell_text(cell: LexborNode) -> str:
    return one_line(cell.text(deep=True, separator=" ") or "")


class _Walker:
    def __init__(self, path: Path, budget: CellBudget, page: int | None, first_table: int):
        self.path = path
        self.budget = budget
        self.page = page
        self.first_table = first_table
        self.out = TextBuilder()
        self.buffer: list[str] = []
        self.items: list[int] = []  # depth of each open <li>
        self.lists = 0
        self.heading: str | None = None
        self.tables: list[ParsedTable] = []
        self.images: list[tuple[str, str | None]] = []

    def flush(self) -> None:
        text = "".join(self.buffer)
        self.buffer.clear()
        if not text.strip():
            return
        if self.items:
            self.out.item(text, self.items[-1])
        else:
            self.out.paragraph(text)

    def table(self, node: LexborNode) -> bool:
        """Read ``node`` as a table; False when it is page layout (read it as text instead)."""
        if len(node.css("table")) > 1:
            return False
        rows: list[list[str]] = []
        carried: dict[int, tuple[int, str]] = {}  # column -> (rows still spanned, text)
        for tr in node.css("tr"):
            cells = [c for c in tr.iter() if c.tag in ("td", "th")]
            self.budget.take(max(1, len(cells)))
            row: list[str] = []
            for cell in cells:
                while len(row) in carried:  # a cell of a row above spans down into this row
                    row.append(self._carry(carried, len(row)))
                text = _cell_text(cell)
                width = _span(cell, "colspan")
                down = _span(cell, "rowspan")
                self.budget.take(width - 1 + (width * (down - 1)))
                for _ in range(width):
                    if down > 1:
                        carried[len(row)] = (down - 1, text)
                    row.append(text)
            while len(row) in carried:
                row.append(self._carry(carried, len(row)))
            rows.append(row)
        if len(rows) < 2:
            return False
        caption_node = node.css_first("caption")
        caption = _cell_text(caption_node) if caption_node is not None else self.heading
        table = make_table(
            self.first_table + len(self.tables), rows, page=self.page, caption=caption
        )
        if table is not None:
            self.tables.append(table)
        return True

    @staticmethod
    def _carry(carried: dict[int, tuple[int, str]], column: int) -> str:
        left, text = carried[column]
        if left <= 1:
            del carried[column]
        else:
            carried[column] = (left - 1, text)
        return text

    def walk(self, root: LexborNode) -> None:
        # iterative: a page nested thousands of elements deep must not exhaust Python's stack
        stack: list[tuple[LexborNode, bool, bool]] = [(root, False, root.tag in _CONTENT_TAGS)]
        while stack:
            node, leaving, in_content = stack.pop()
            tag = node.tag or ""
            if leaving:
                self.flush()
                if tag == "li" and self.items:
                    self.items.pop()
                elif tag in _LISTS:
                    self.lists -= 1
                    if not self.lists:
                        self.out.end_list()
                continue
            if node.is_text_node:
                # source line breaks are spaces in HTML; only <br> breaks a line
                self.buffer.append((node.text_content or "").replace("\n", " "))
                continue
            if not node.is_element_node or _skipped(node, in_content):
                continue
            if tag == "br":
                self.buffer.append("\n")
                continue
            if tag == "img":
                src = node.attributes.get("src")
                if src:
                    self.images.append((src, node.attributes.get("alt")))
                continue
            if tag in _HEADINGS:
                self.flush()
                text = _PERMALINK.sub("", one_line(node.text(deep=True, separator=" ") or ""))
                self.out.heading(text, int(tag[1]))
                self.heading = text or self.heading
                continue
            if tag == "pre":
                self.flush()
                self.out.preformatted(node.text(deep=True) or "")
                continue
            if tag == "table":
                self.flush()
                if self.table(node):
                    continue
            if tag in _BLOCKS or tag in _LISTS or tag == "li":
                self.flush()
                if tag == "li":
                    self.items.append(max(0, self.lists - 1))
                elif tag in _LISTS:
                    self.lists += 1
                stack.append((node, True, in_content))
            inside = in_content or tag in _CONTENT_TAGS
            children = list(node.iter(include_text=True))
            stack.extend((child, False, inside) for child in reversed(children))
        self.flush()


def extract_html(
    path: Path,
    text: str,
    *,
    budget: CellBudget | None = None,
    page: int | None = None,
    first_table: int = 0,
) -> HtmlText:
    """The title, main-content text, tables (numbered from ``first_table``, on ``page``) and
    image references of the HTML ``text``."""
    budget = budget or CellBudget(path)
    # a table of a million cells is refused before it is parsed (its DOM would take ~300 MB)
    budget.check(_cell_tags(text), "the page's tables")
    if nesting_depth(text) >= MAX_HTML_DEPTH:
        return HtmlText(title=None, text=html_to_text(text), first_heading=None)
    lexbor = require(path, "selectolax.lexbor", "selectolax")
    tree = lexbor.LexborHTMLParser(text)
    title_node = tree.css_first("title")
    title = title_text(title_node.text(deep=True)) if title_node is not None else None
    if title is None:
        og = tree.css_first('meta[property="og:title"]')
        title = title_text(og.attributes.get("content")) if og is not None else None
    root = _content_root(tree)
    walker = _Walker(path, budget, page, first_table)
    if root is not None:
        walker.walk(root)
    text = walker.out.text()
    return HtmlText(
        title=title,
        text=text,
        headings=walker.out.headings(),
        first_heading=walker.out.first_heading,
        tables=walker.tables,
        images=walker.images,
    )


def parse_html(item: SourceItem, data: bytes) -> ParsedContent:
    path = item.path
    if len(data) > MAX_HTML_BYTES:
        raise IngestError(
            str(path),
            f"HTML page is {len(data):,} bytes, over the {MAX_HTML_BYTES:,} byte limit for one "
            "page; split it",
        )
    found = extract_html(path, decode_html(path, data))
    if not found.text.strip() and not found.tables:
        raise EmptyInputError(
            str(path),
            "contains no text (an HTML page with nothing outside scripts, styles, navigation "
            "and markup)",
        )
    pages = (
        (ParsedPage(number=None, text=found.text, headings=found.headings),)
        if found.text.strip()
        else ()
    )
    return ParsedContent(
        title=found.title or found.first_heading, pages=pages, tables=tuple(found.tables)
    )


HTML = register(
    DocumentFormat(
        name="HTML", suffixes=(".html", ".htm", ".xhtml"), mime="text/html", parse=parse_html
    )
)
