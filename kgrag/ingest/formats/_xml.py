"""XML parsed within bounds, for every format made of XML (the parts of a DOCX, PPTX, ODT or
EPUB; an SVG drawing): lxml with DTDs and the network off, huge trees refused, comments and
processing instructions dropped, and at most :data:`MAX_XML_ELEMENTS` elements, counted while
parsing, so a file of a million elements costs a bounded parse, not a full one."""

from __future__ import annotations

import io
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING

from kgrag.errors import IngestError

if TYPE_CHECKING:
    from lxml import etree

__all__ = ["MAX_XML_ELEMENTS", "parse_bounded"]

#: Elements of one XML part or file.
MAX_XML_ELEMENTS = 1_000_000


def _nothing(_: etree._Element) -> None:
    return None


def parse_bounded(
    lxml_etree: ModuleType,
    data: bytes,
    *,
    internal_entities: bool,
    too_many: Callable[[], IngestError],
    invalid: Callable[[Exception], IngestError],
    each: Callable[[etree._Element], None] = _nothing,
) -> etree._Element | None:
    """The root of ``data`` parsed as XML (None when it holds no element). External entities are
    never read; ``internal_entities`` expands those the document defines itself (within
    libxml2's amplification limits), else none is. Raises ``too_many()`` past
    :data:`MAX_XML_ELEMENTS` elements and ``invalid(error)`` on XML that is not well formed;
    ``each`` sees every element as it ends (and may raise its own IngestError)."""
    elements = 0
    root: etree._Element | None = None
    try:
        events = lxml_etree.iterparse(
            io.BytesIO(data),
            events=("end",),
            resolve_entities="internal" if internal_entities else False,
            load_dtd=False,
            no_network=True,
            huge_tree=False,
            remove_comments=True,
            remove_pis=True,
        )
        for _, element in events:
            elements += 1
            if elements > MAX_XML_ELEMENTS:
                raise too_many()
            each(element)
            root = element
    except lxml_etree.XMLSyntaxError as e:
        raise invalid(e) from e
    return root
