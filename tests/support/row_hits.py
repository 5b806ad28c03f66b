"""A table row as a retrieved hit (kgrag.ingest.table_rows' chunk text), for the support tests of
kgrag.agent.rows."""

from __future__ import annotations

from kgrag.core import Hit


def row_hit(
    text: str,
    *,
    id: str,
    title: str,
    uri: str | None = None,
    row: int,
    table: int = 1,
    sheet: str | None = None,
    document_id: str = "doc_1",
) -> Hit:
    """The row ``row`` of table ``table`` of a document titled ``title`` (file ``uri``), whose
    chunk text is ``text`` (``"caption — column: value; ..."``)."""
    return Hit(
        id=id,
        kind="chunk",
        score=0.0,
        text=text,
        document_id=document_id,
        title=title,
        uri=uri,
        table=table,
        sheet=sheet,
        row=row,
    )
