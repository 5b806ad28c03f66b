"""Zip containers (DOCX, PPTX, ODT, EPUB) opened within bounds, and their XML parts parsed safely.

Every limit is checked from the zip's central directory before a byte is inflated, and again
while inflating (a member that inflates past its declared size is refused): at most
:data:`MAX_MEMBERS` members, :data:`MAX_UNPACKED_BYTES` in all, :data:`MAX_MEMBER_BYTES` for one
member, and no member over 1 MB that claims a compression ratio above :data:`MAX_RATIO` (a zip
bomb). XML is parsed by lxml without entities, DTDs or network access, and refused past
:data:`MAX_XML_ELEMENTS` elements or past ``MAX_TABLE_CELLS`` (:mod:`._common`) table cells,
counted while parsing, so a table of a million empty cells costs a bounded parse, not a full one.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING

from kgrag.errors import EmptyInputError, IngestError
from kgrag.ingest.formats._common import CellBudget, require
from kgrag.ingest.formats._xml import MAX_XML_ELEMENTS, parse_bounded

if TYPE_CHECKING:
    from lxml import etree

__all__ = [
    "MAX_MEMBERS",
    "MAX_MEMBER_BYTES",
    "MAX_RATIO",
    "MAX_UNPACKED_BYTES",
    "MAX_XML_ELEMENTS",
    "Package",
]

#: Members of one container.
MAX_MEMBERS = 10_000
#: Uncompressed bytes of all members together.
MAX_UNPACKED_BYTES = 256 * 1024 * 1024
#: Uncompressed bytes of one member (the XML of one part, one embedded image).
MAX_MEMBER_BYTES = 64 * 1024 * 1024
#: Uncompressed/compressed ratio allowed for a member of more than 1 MB: text deflates about
#: 10:1, a table of empty cells about 400:1, a run of one byte (the zip bomb) about 1000:1.
MAX_RATIO = 500
_RATIO_FLOOR = 1024 * 1024


class Package:
    """A zip container read from bytes; ``kind`` ("DOCX", "EPUB", ...) names it in errors."""

    def __init__(self, path: Path, data: bytes, kind: str) -> None:
        self.path = path
        self.kind = kind
        self.budget = CellBudget(path)
        try:
            self._zip = zipfile.ZipFile(io.BytesIO(data))
            infos = self._zip.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError) as e:
            raise self.fail(f"corrupt or unreadable {kind}: not a zip archive ({e})") from e
        if len(infos) > MAX_MEMBERS:
            raise self.fail(f"{kind} has {len(infos):,} members; at most {MAX_MEMBERS:,}")
        self._infos = {i.filename: i for i in infos}
        total = sum(i.file_size for i in infos)
        if total > MAX_UNPACKED_BYTES:
            raise self.fail(
                f"{kind} unpacks to {total:,} bytes, over the {MAX_UNPACKED_BYTES:,} byte limit "
                "(a zip bomb, or a document to split)"
            )
        for info in infos:
            ratio = info.file_size / max(1, info.compress_size)
            if info.file_size > _RATIO_FLOOR and ratio > MAX_RATIO:
                raise self.fail(
                    f"{kind} member {info.filename!r} inflates {ratio:,.0f} times "
                    f"({info.compress_size:,} to {info.file_size:,} bytes), over the "
                    f"{MAX_RATIO}:1 limit (a zip bomb)"
                )

    def fail(self, reason: str) -> IngestError:
        return IngestError(str(self.path), reason)

    def empty(self, reason: str) -> EmptyInputError:
        """A document with nothing to ingest: skipped as ``empty`` in a folder, not a failure."""
        return EmptyInputError(str(self.path), reason)

    def names(self) -> list[str]:
        return list(self._infos)

    def has(self, name: str) -> bool:
        return name in self._infos

    def read(self, name: str) -> bytes:
        """The member's bytes; refused past :data:`MAX_MEMBER_BYTES` or its declared size."""
        info = self._infos.get(name)
        if info is None:
            raise self.fail(f"corrupt {self.kind}: member {name!r} is missing")
        if info.file_size > MAX_MEMBER_BYTES:
            raise self.fail(
                f"{self.kind} member {name!r} is {info.file_size:,} bytes, over the "
                f"{MAX_MEMBER_BYTES:,} byte limit for one part"
            )
        try:
            with self._zip.open(info) as f:
                data = f.read(info.file_size + 1)
        except (zipfile.BadZipFile, OSError, EOFError, ValueError, RuntimeError) as e:
            # RuntimeError: an encrypted member
            raise self.fail(f"corrupt or unreadable {self.kind}: member {name!r}: {e}") from e
        except Exception as e:  # zlib.error and friends on damaged streams
            raise self.fail(
                f"corrupt or unreadable {self.kind}: member {name!r}: {type(e).__name__}: {e}"
            ) from e
        if len(data) > info.file_size:
            raise self.fail(f"corrupt {self.kind}: member {name!r} inflates past its size")
        return data

    def xml(self, name: str, cell_tags: Collection[str] = ()) -> etree._Element:
        """The member parsed as XML (no entities, DTD or network); elements whose tag is in
        ``cell_tags`` count as table cells against ``MAX_TABLE_CELLS`` for the package."""
        return parse_xml(self, name, self.read(name), cell_tags)


def _tag_count(data: bytes, tag: str) -> int:
    """How many start tags ``tag`` (Clark notation) ``data`` holds, by the prefix its namespace
    is declared with in the first 64 KB (0 when undeclared there): a byte search, ~1 GB/s."""
    namespace, _, local = tag[1:].partition("}")
    found = re.search(rb'xmlns:([\w.-]+)="' + re.escape(namespace.encode()) + rb'"', data[:65536])
    if found is None:
        return 0
    start = b"<" + found.group(1) + b":" + local.encode()
    return sum(data.count(start + end) for end in (b">", b" ", b"/", b"\n", b"\t", b"\r"))


def parse_xml(
    package: Package, name: str, data: bytes, cell_tags: Collection[str] = ()
) -> etree._Element:
    """``data`` (the part ``name`` of ``package``) as an element tree, within the bounds above."""
    lxml_etree = require(package.path, "lxml.etree", "lxml")
    for tag in cell_tags:  # refuse a table of a million cells before parsing it
        package.budget.check(_tag_count(data, tag), f"{package.kind} part {name!r}")

    def count_cell(element: etree._Element) -> None:
        if element.tag in cell_tags:
            package.budget.take(1, f"{package.kind} part {name!r}")

    root = parse_bounded(
        lxml_etree,
        data,
        internal_entities=False,
        too_many=lambda: package.fail(
            f"{package.kind} part {name!r} has more than {MAX_XML_ELEMENTS:,} XML elements"
        ),
        invalid=lambda e: package.fail(
            f"corrupt {package.kind}: part {name!r} is not valid XML: {e}"
        ),
        each=count_cell,
    )
    if root is None:
        raise package.fail(f"corrupt {package.kind}: part {name!r} is empty")
    return root
