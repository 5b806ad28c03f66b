"""What Office Open XML packages (.docx, .pptx) share: opening the package at its main part, the
relationships between parts, the core title, pictures referenced from drawings, and the content a
parser returns. Also the Dublin Core namespace,
which OpenDocument and EPUB metadata use too."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kgrag.ingest.formats._common import capped_images, embedded_image, title_text
from kgrag.ingest.formats._zipped import Package
from kgrag.ingest.formats.registry import ParsedContent
from kgrag.ingest.models import ParsedImage, ParsedPage, ParsedTable, SourceItem

if TYPE_CHECKING:
    from lxml import etree

__all__ = [
    "BLIP",
    "DC",
    "VML_IMAGE",
    "A",
    "P",
    "Part",
    "R",
    "alt_text",
    "core_title",
    "main_part",
    "office_content",
    "open_package",
    "picture",
    "read_part",
]

R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
WP = "http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"
P = "http://schemas.openxmlformats.org/presentationml/2006/main"
PKG_REL = "http://schemas.openxmlformats.org/package/2006/relationships"
DC = "http://purl.org/dc/elements/1.1/"
OFFICE_DOCUMENT = (
    "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument",
    "http://purl.oclc.org/ooxml/officeDocument/relationships/officeDocument",
)
BLIP = f"{{{A}}}blip"
VML_IMAGE = "{urn:schemas-microsoft-com:vml}imagedata"
_DOC_PR = f"{{{WP}}}docPr"
_CNV_PR = f"{{{P}}}cNvPr"
_REL_ID = f"{{{R}}}embed"


def relationship_types(package: Package, part: str) -> dict[str, tuple[str, str]]:
    """``rId -> (type, member name)`` of ``part``'s internal relationships."""
    folder, name = posixpath.split(part)
    rels = posixpath.join(folder, "_rels", name + ".rels")
    if not package.has(rels):
        return {}
    out: dict[str, tuple[str, str]] = {}
    for rel in package.xml(rels).iter(f"{{{PKG_REL}}}Relationship"):
        if rel.get("TargetMode") == "External":
            continue
        target = rel.get("Target") or ""
        member = target.lstrip("/") if target.startswith("/") else posixpath.join(folder, target)
        out[rel.get("Id") or ""] = (rel.get("Type") or "", posixpath.normpath(member))
    return out


@dataclass(frozen=True, slots=True)
class Part:
    """A part of a package (``name``: its member) and its internal relationships."""

    name: str
    relationships: dict[str, tuple[str, str]]
    """``rId -> (type, member name)``."""
    targets: dict[str, str]
    """``rId -> member name``: what a picture's ``r:embed`` names."""

    def related(self, type_suffix: str) -> str | None:
        """The first member related by a type ending in ``type_suffix`` (``/styles``), if any."""
        return next((m for t, m in self.relationships.values() if t.endswith(type_suffix)), None)


def read_part(package: Package, name: str) -> Part:
    """``name`` with its relationships."""
    relationships = relationship_types(package, name)
    targets = {rid: member for rid, (_, member) in relationships.items()}
    return Part(name=name, relationships=relationships, targets=targets)


def open_package(
    item: SourceItem, data: bytes, kind: str, default_main: str
) -> tuple[Package, Part]:
    """``item``'s package (``kind``: DOCX, PPTX, named in its errors) and its main part: the one
    the root relationships name, else ``default_main``."""
    package = Package(item.path, data, kind)
    return package, read_part(package, main_part(package, default_main))


def office_content(
    package: Package,
    *,
    first_heading: str | None,
    pages: Iterable[ParsedPage],
    images: list[ParsedImage],
    tables: list[ParsedTable],
) -> ParsedContent:
    """A parser's content: titled by the core title, else ``first_heading``; images capped."""
    return ParsedContent(
        title=core_title(package) or first_heading,
        pages=tuple(pages),
        images=capped_images(package.path, images),
        tables=tuple(tables),
    )


def main_part(package: Package, default: str) -> str:
    """The officeDocument part the package's root relationships name, else ``default``."""
    for kind, member in relationship_types(package, "").values():
        if kind in OFFICE_DOCUMENT and package.has(member):
            return member
    if not package.has(default):
        raise package.fail(f"corrupt {package.kind}: no {default} part")
    return default


def core_title(package: Package) -> str | None:
    """``dc:title`` of ``docProps/core.xml``, if set."""
    if not package.has("docProps/core.xml"):
        return None
    found = package.xml("docProps/core.xml").find(f"{{{DC}}}title")
    return title_text(found.text) if found is not None else None


def picture(
    package: Package,
    part: Part,
    blip: etree._Element,
    caption: str | None,
    page: int | None = None,
) -> ParsedImage | None:
    """The image a ``a:blip`` (or VML ``v:imagedata``) points to, if it decodes."""
    member = part.targets.get(blip.get(_REL_ID) or blip.get(f"{{{R}}}id") or "")
    if member is None or not package.has(member):
        return None
    data = package.read(member)
    return embedded_image(package.path, data, page=page, caption=caption, name=member)


def alt_text(drawing: etree._Element) -> str | None:
    """The alt text (``descr``, else ``title``) of the drawing holding a picture."""
    for pr in drawing.iter(_DOC_PR, _CNV_PR):
        text = pr.get("descr") or pr.get("title")
        if text:
            return text
    return None
