"""Chunk boundaries keep a short paragraph whole (a man page's option, a README's one-line
paragraph) rather than cut it after its first sentence, on real man pages of this machine."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from kgrag.ingest.chunking import chunk_text
from kgrag.ingest.models import SourceItem
from kgrag.ingest.parsers import parse
from kgrag.modalities.text import default_text_embedder

MAN = Path("/usr/share/man")
PAGES = ["man8/modprobe.8.gz", "man1/zstd.1.gz", "man1/grep.1.gz", "man1/tar.1.gz"]


def words(text: str) -> int:
    return len(text.split())


def _man(tmp_path: Path, name: str) -> Path:
    source = MAN / name
    if not source.exists():
        pytest.skip(f"{source} is not on this machine")
    out = tmp_path / Path(name).stem
    out.write_bytes(gzip.decompress(source.read_bytes()))
    return out


@pytest.mark.parametrize("name", PAGES)
@pytest.mark.parametrize("max_tokens", [100, 150])
def test_every_short_paragraph_of_a_man_page_is_whole_in_some_chunk(
    tmp_path: Path, name: str, max_tokens: int
) -> None:
    """Before, 2-7 of each page's paragraphs of at most half a chunk were cut between two
    chunks (zstd.1 at 150 words: 7 of 177); now none is."""
    doc = parse(SourceItem(path=_man(tmp_path, name), modality="text", mime="text"), 10_000_000)
    chunks = chunk_text(doc.pages, words, max_tokens, 20)
    short = [
        p.strip()
        for page in doc.pages
        for p in re.split(r"\n\s*\n", page.text)
        if p.strip() and words(p) <= max_tokens // 2
    ]
    assert len(short) > 40
    cut = [p for p in short if not any(p in c.text for c in chunks)]
    assert cut == []


def test_modprobe_remove_option_starts_its_chunk_whole(tmp_path: Path) -> None:
    """With the embedder's tokens and the default overlap, the -r option's paragraph was cut
    after its first sentence (the chunk ending with it started with -n's description, the next
    with its second sentence); its chunk now starts with it, whole."""
    page = _man(tmp_path, "man8/modprobe.8.gz")
    doc = parse(SourceItem(path=page, modality="text", mime="text"), 10_000_000)
    emb = default_text_embedder()
    chunks = chunk_text(doc.pages, emb.count_tokens, emb.max_tokens - 2, 32)
    holding = [c for c in chunks if "causes modprobe to remove rather than insert" in c.text]
    assert any(
        c.text.startswith("-r, --remove") and "modprobe will try to remove them too" in c.text
        for c in holding
    ), [c.text[:80] for c in holding]
