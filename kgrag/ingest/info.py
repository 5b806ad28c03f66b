"""GNU Info manuals (what ``makeinfo`` writes: ``/usr/share/info/*.info.gz``) as plain text.

An Info file is text in nodes, each after a ``\\x1f`` line and a navigation line (``File:
gzip.info,  Node: Overview,  Next: Sample,  Up: Top``); an index node is marked by the bytes
``\\0\\b[index\\0\\b]``, an image by ``\\0\\b[image src="..."\\0\\b]``, and the file ends with a
tag table of byte offsets. Read as plain text, the NUL of an index marker made the whole manual
a "binary file". Kept: each node's text, its title first. Left out: the preamble (the file's
name, the dir entries, and the copying notice the top node repeats), the navigation lines, the
index nodes (lines pointing at nodes, as a contents page points at pages), the markers, the tag
table and an indirect file's table of its parts."""

from __future__ import annotations

import re

from kgrag.ingest.sections import Heading

#: How an Info file begins (``This is gzip.info, produced by makeinfo version 6.8 from
#: gzip.texi.``), in its first bytes.
_PRODUCED = re.compile(rb"\AThis is [^\n]*, produced by [Mm]akeinfo")
#: The bytes that start a node: the separator, then the node's navigation line.
_NODE_START = b"\x1f\nFile: "
_MARKER = re.compile(rb"\x00\x08\[[^\x00]*\x00\x08\]")
_INDEX_MARKER = b"\x00\x08[index\x00\x08]"
#: Parts after a separator that are tables for the Info reader, not text.
_TABLES = (b"Tag Table:", b"End Tag Table", b"Indirect:", b"Local Variables:")


def is_info(data: bytes) -> bool:
    """Whether ``data`` is an Info file (or a part of a split one: ``find.info-1``)."""
    return _PRODUCED.match(data[:200]) is not None and _NODE_START in data


def info_text(data: bytes) -> bytes:
    """The nodes' text of the Info file ``data`` (module doc), one node after another."""
    nodes = []
    for part in data.split(b"\x1f")[1:]:  # the first part is the preamble
        body = part.lstrip(b"\n")
        if body.startswith(_TABLES) or _INDEX_MARKER in body:
            continue
        if body.startswith(b"File: "):
            body = body.split(b"\n", 1)[1] if b"\n" in body else b""
        body = _MARKER.sub(b"", body).strip(b"\n")
        if body.strip():
            nodes.append(body)
    return b"\n\n".join(nodes) + b"\n"


#: A heading line and its underline (``*`` chapter, ``=`` section, ``-`` subsection, ``.``
#: subsubsection, as ``makeinfo`` writes them), the rule as long as the heading.
_UNDERLINED = re.compile(r"^(?P<text>\S[^\n]*)\n(?P<rule>\*+|=+|-+|\.+)$", re.MULTILINE)
_LEVELS = {"*": 1, "=": 2, "-": 3, ".": 4}


def info_headings(text: str) -> tuple[Heading, ...]:
    """The headings of an Info manual's text (:func:`info_text`, decoded): each underlined line,
    at the depth its rule's character gives."""
    return tuple(
        Heading(start=m.start(), level=_LEVELS[m.group("rule")[0]], text=m.group("text").strip())
        for m in _UNDERLINED.finditer(text)
        if len(m.group("rule")) == len(m.group("text"))
    )
