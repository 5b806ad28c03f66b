"""Markdown's inline markup off a line (kgrag.ingest.markdown_inline), as paragraphs, headings and
pipe table cells are read. A code span is literal: what it holds is kept as written, markup-like
characters too (eSpeak NG's dictionary.md writes the rule ``_^_<language code>`` in a table cell,
and X-SAMPA's retroflex n is ``n` ``); before, its underscores were read as emphasis."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgrag.ingest.markdown_inline import inline_text
from kgrag.ingest.markdown_tables import pipe_tables
from kgrag.ingest.parsers import markdown_text


@pytest.mark.parametrize(
    ("line", "text"),
    [
        ("`_^_<language code>`", "_^_<language code>"),
        ("Define `__init__` in the class", "Define __init__ in the class"),
        ("`**kwargs` and **bold**", "**kwargs and bold"),
        ("`` n` `` is retroflex", "n` is retroflex"),
        ("[`fonipa`](../phonemes.md) and *em*", "fonipa and em"),
        ("[Rust](https://en.wikipedia.org/wiki/Rust_(language))", "Rust"),
    ],
)
def test_a_code_span_is_kept_as_written_and_other_markup_goes(line: str, text: str) -> None:
    assert inline_text(line) == text


def test_a_table_cell_and_a_paragraph_keep_a_code_span_alike() -> None:
    real = (
        "| Rule | Meaning |\n|---|---|\n"
        "| `_^_<language code>` | Translate using a different language. |\n"
    )
    _, (table,) = pipe_tables(real, Path("dictionary.md"))
    assert table.rows == (("_^_<language code>", "Translate using a different language."),)
    text, _, _ = markdown_text("Write `_^_EN` to translate a word as English.\n")
    assert text.strip() == "Write _^_EN to translate a word as English."
