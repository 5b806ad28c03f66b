"""A manual's contents and index pages are no summary of it, and "What is X?" is answered by
what kind of thing X is.

Found on a folder of real files (BENCHMARKS.md, "A tenth folder"): Nettle's PDF manual (four
pages of contents, six of index) was listed as "Nettle Manual: 55 struct ccm_aes192_ctx ." and
a paper on CRCs as "2 Related work 3 3 CRC tricks and tips 4 3.1 Incremental CRC computation .":
contents lines name every topic, so they were the most central "sentences". "What is Nettle?"
quoted "Nettle is dual licenced under the GNU General Public License ..." (a sentence starting
with the subject and "is", as a definition does) over the introduction's "Nettle is a
cryptographic library that is designed to fit easily in more or less any context"."""

from __future__ import annotations

from pathlib import Path

from kgrag.agent.synthesis import defines, defines_kind, select_sentences
from kgrag.core import Hit
from kgrag.ingest.parsers import parse
from kgrag.ingest.records import ChunkRecord
from kgrag.ingest.sources import expand_inputs
from kgrag.ingest.summaries import Summariser
from kgrag.modalities.text import default_text_embedder
from kgrag.text.contents import without_contents_lines

#: pages 1-9 and 106-111 of the Nettle manual (``/usr/share/doc/nettle-dev/nettle.pdf.gz``):
#: title, copying notice, four pages of contents, chapters 1-3, six pages of index
MANUAL = Path(__file__).parents[1] / "data" / "contents_pages" / "nettle-excerpt.pdf"


def _pages() -> dict[int, str]:
    (item,) = expand_inputs([str(MANUAL)]).items
    return {p.number or 0: p.text for p in parse(item, 10_000_000).pages}


def test_a_manuals_summary_holds_no_contents_or_index_line() -> None:
    pages = _pages()
    chunks = [
        ChunkRecord(id=str(n), text=text, position=n, page=n, embedding=())
        for n, text in sorted(pages.items())
    ]
    summary = Summariser(default_text_embedder()).summarise("Nettle Manual", "pdf", chunks)
    assert summary is not None
    assert ". . ." not in summary and "_ctx" not in summary and "_digest" not in summary, summary
    assert "Nettle" in summary


def test_contents_and_index_lines_are_left_out_and_prose_is_kept() -> None:
    pages = _pages()
    contents = without_contents_lines(pages[3])
    assert ". . ." not in contents and "Hash functions" not in contents
    index = without_contents_lines(pages[max(pages)])
    assert ". . ." not in index
    intro = next(t for t in pages.values() if "Nettle is a cryptographic library" in t)
    assert without_contents_lines(intro) == intro


def test_what_x_is_is_answered_by_what_kind_of_thing_it_is() -> None:
    pages = _pages()
    copyright_page = next(t for t in pages.values() if "Nettle is dual licenced" in t)
    intro = next(t for t in pages.values() if "Nettle is a cryptographic library" in t)
    hits = [
        Hit(id="c", kind="chunk", score=0.02, text=copyright_page, title="Nettle Manual", page=7),
        Hit(id="i", kind="chunk", score=0.01, text=intro, title="Nettle Manual", page=6),
    ]
    chosen = select_sentences("What is Nettle?", hits, default_text_embedder())
    assert chosen[0][0].startswith("Nettle is a cryptographic library"), chosen
    assert defines("Nettle is dual licenced under the GNU GPL.", "nettle")
    assert not defines_kind("Nettle is dual licenced under the GNU GPL.", "nettle")
    assert defines_kind("jq - Command-line JSON processor", "jq")
