"""A JSON file that is a list of flat records, read as a table: one row per record, its keys the
columns.

iso-codes' ``iso_15924.json`` is ``{"15924": [{"alpha_4": "Cyrl", "name": "Cyrillic",
"numeric": "220"}, ...]}``; read as text, its records were cut into chunks of braces and quotes
across record boundaries, and "What is the ISO 15924 numeric code of the Cyrillic script?"
found a chunk of other scripts. The rule: the document is an array of objects whose values are
all scalars (strings, numbers, booleans, null), or an object whose single key holds such an
array (the key is then the table's caption). Anything else stays text.
"""

from __future__ import annotations

import json
from typing import Any

from kgrag.ingest.formats._common import MAX_TABLE_CELLS
from kgrag.ingest.models import ParsedTable
from kgrag.ingest.sniff import MAX_LINE_CHARS
from kgrag.ingest.spreadsheet import MAX_COLUMNS, cell_text

__all__ = ["json_table", "minified_json_text", "records_of"]

_SCALARS = (str, int, float, bool, type(None))


def _cell(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else cell_text(value)


def records_of(document: Any) -> tuple[str | None, list[dict[str, Any]]] | None:
    """The caption and records of a JSON ``document`` that is a table by the module's rule,
    else None."""
    caption = None
    if isinstance(document, dict) and len(document) == 1:
        caption, document = next(iter(document.items()))
    if not isinstance(document, list) or not document:
        return None
    if not all(
        isinstance(r, dict) and r and all(isinstance(v, _SCALARS) for v in r.values())
        for r in document
    ):
        return None
    return caption, document


def json_table(text: str, *, index: int = 0) -> ParsedTable | None:
    """``text`` as a table when it is a JSON list of flat records (module doc), else None (and
    None when it has more cells than :data:`~kgrag.ingest.formats._common.MAX_TABLE_CELLS`:
    it is read as text, as before)."""
    head = text.lstrip()[:1]
    if head not in ("[", "{"):
        return None
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        # not JSON, or nested deeper than the parser recurses ("[" on each of 100,000 lines):
        # read as text, as before; one file must not stop the job
        return None
    found = records_of(document)
    if found is None:
        return None
    caption, records = found
    columns: dict[str, None] = {}
    for record in records:
        columns.update(dict.fromkeys(record))
    header = list(columns)[:MAX_COLUMNS]
    if len(header) * len(records) > MAX_TABLE_CELLS:
        return None
    rows = tuple(tuple(_cell(r.get(c)) for c in header) for r in records)
    return ParsedTable(
        index=index,
        caption=cell_text(caption) or None if caption is not None else None,
        header=tuple(cell_text(c) for c in header),
        rows=rows,
    )


def minified_json_text(text: str) -> str | None:
    """A JSON document written on lines of over :data:`~kgrag.ingest.sniff.MAX_LINE_CHARS`
    (minified data) that is no table, written one value a line (indented), so that its chunks
    cut between values, as a JSON file written by hand is cut; None for any other text."""
    if text.lstrip()[:1] not in ("[", "{") or all(
        len(line) <= MAX_LINE_CHARS for line in text.splitlines()
    ):
        return None
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return json.dumps(document, indent=1, ensure_ascii=False)
