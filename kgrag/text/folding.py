"""Accent folding for lexical search: ``Zürich`` and ``Zurich``, ``Aschenbrödel`` and
``Aschenbrodel``, ``São Paulo`` and ``Sao Paulo`` are one word to the full-text stage.

Neither engine's full-text index folds accents as kgrag configures it (RediSearch in FalkorDB has
no option for it; Lucene in Neo4j would need another analyzer), so a chunk whose text has
accents also stores its folded text (``Chunk.text_folded``, written only when it differs from
the text; :func:`kgrag.text.search_properties.chunk_search_properties`), and an entity whose name
has accents its folded name (``Entity.name_folded``, :func:`folded`). Both properties are indexed
beside the text and the name, and the full-text query and the names a question is matched
against are folded the same way: a question typed with or without the accents finds the text and
the entities written either way, on both engines.
"""

from __future__ import annotations

import unicodedata

__all__ = ["fold", "folded"]

#: Latin letters that carry no combining mark in Unicode's decomposition (NFKD leaves them as
#: they are): their usual ASCII spellings, as Lucene's ASCIIFoldingFilter writes them.
_LETTERS = str.maketrans(
    {
        "ß": "ss",
        "ẞ": "SS",
        "æ": "ae",
        "Æ": "AE",
        "œ": "oe",
        "Œ": "OE",
        "ø": "o",
        "Ø": "O",
        "ð": "d",
        "Ð": "D",
        "đ": "d",
        "Đ": "D",
        "þ": "th",
        "Þ": "TH",
        "ł": "l",
        "Ł": "L",
        "ı": "i",
    }
)


def fold(text: str) -> str:
    """``text`` without diacritics: compatibility-decomposed (NFKD), combining marks dropped,
    then recomposed (NFC), and the few Latin letters without a decomposition spelled in ASCII
    (``ø`` -> ``o``, ``ß`` -> ``ss``). Text without accents is returned unchanged; other scripts
    keep their letters (only their combining marks go)."""
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(c for c in decomposed if not unicodedata.combining(c))
    return unicodedata.normalize("NFC", bare).translate(_LETTERS)


def folded(text: str | None) -> str | None:
    """The folded form to store beside ``text`` (an entity's ``name_folded``), or None when
    folding changes nothing (ASCII text stores nothing more)."""
    if text is None:
        return None
    out = fold(text)
    return None if out == text else out
