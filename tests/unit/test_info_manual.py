"""A GNU Info manual (``/usr/share/info/*.info.gz``) is read as its nodes' text.

Found on a folder of real files (BENCHMARKS.md, "A tenth folder"): ``diffutils.info.gz`` and
``gzip.info.gz`` failed as "contains a NUL character ...; is it a binary file?": the marker of
an Info index node is ``\\0\\b[index\\0\\b]``."""

from __future__ import annotations

import gzip
from pathlib import Path

from kgrag.ingest.info import info_text, is_info
from kgrag.ingest.parsers import parse
from kgrag.ingest.sources import expand_inputs

MANUAL = Path(__file__).parents[1] / "data" / "info_manual" / "gzip.info.gz"
LIMIT = 10_000_000


def test_an_info_manual_is_ingested_as_its_nodes_text(tmp_path: Path) -> None:
    path = tmp_path / "gzip.info"  # as a member of gzip.info.gz is read
    path.write_bytes(gzip.decompress(MANUAL.read_bytes()))
    (found,) = expand_inputs([str(path)]).items
    doc = parse(found, LIMIT)
    text = "\n".join(p.text for p in doc.pages)
    assert doc.title == "GNU Gzip: General file (de)compression"
    assert "‘gzip’ reduces the size of the named files using Lempel–Ziv coding (LZ77)" in " ".join(
        text.split()
    )
    assert "\x00" not in text and "\x1f" not in text
    assert "File: gzip.info,  Node:" not in text  # navigation lines
    assert "Tag Table" not in text and "(line 6)" not in text  # the tag table, the index node
    # each node's underlined title is a heading, at its rule's depth (chunks know their section)
    headings = [(h.level, h.text) for p in doc.pages for h in p.headings]
    assert (1, "GNU Gzip: General file (de)compression") in headings
    assert (1, "1 Overview") in headings and (1, "3 Invoking ‘gzip’") in headings


def test_the_info_reader_keeps_every_node_and_nothing_else() -> None:
    data = gzip.decompress(MANUAL.read_bytes())
    assert is_info(data)
    text = info_text(data).decode("utf-8")
    nodes = data.count(b"\x1f\nFile: ")
    # every node but the concept index keeps its title
    for title in ("Overview", "Sample", "Invoking gzip", "Advanced usage", "Environment"):
        assert f"\n{title}\n" in f"\n{text}" or title in text
    assert text.count("\n\n") >= nodes - 1
    assert not is_info(b"This is a README.\n\x1f\nFile: x")  # no makeinfo line
