"""Markdown's backslash escapes, badge lines and links wrapped onto a second line are read as a
reader of the rendered page sees them.

Found on the twelfth real folder (BENCHMARKS.md): the Prometheus node exporter's README (Debian's
``README.md.gz``, copied unchanged into ``tests/data/markdown_readmes``) was stored as "exposed
by \\*NIX kernels", "The node\\_exporter will use ..." and table rows named "meminfo\\_numa", so
"node_exporter" and "meminfo_numa" were not the words of the passages that hold them; its first
chunk opened on its badges' alt texts ("CircleCI Buildkite status Docker Repository on Quay
Docker Pulls Go Report Card") and kept a link's address ("[prometheus-dcgm" then
"](https://github.com/NVIDIA/dcgm-exporter)")."""

from __future__ import annotations

import gzip
from pathlib import Path

from kgrag.ingest.parsers import markdown_text, parse
from kgrag.ingest.sources import expand_inputs

DATA = Path(__file__).parents[1] / "data" / "markdown_readmes"


def _read(tmp_path: Path):  # type: ignore[no-untyped-def]
    path = tmp_path / "README.md"
    path.write_bytes(gzip.decompress((DATA / "node_exporter-README.md.gz").read_bytes()))
    (found,) = expand_inputs([str(path)]).items
    return parse(found, 10_000_000)


def test_escaped_characters_are_read_without_their_backslashes(tmp_path: Path) -> None:
    doc = _read(tmp_path)
    text = " ".join(p.text for p in doc.pages)
    assert "exposed by *NIX kernels, written in Go" in " ".join(text.split())
    assert "The node_exporter will use path.rootfs as prefix" in " ".join(text.split())
    assert "\\_" not in text and "\\*" not in text
    rows = [row for table in doc.tables for row in table.rows]
    assert ("meminfo_numa", "Exposes memory statistics from /proc/meminfo_numa.", "Linux") in rows
    assert not any("\\" in cell for row in rows for cell in row)


def test_badges_and_a_wrapped_link_leave_no_words_of_their_own(tmp_path: Path) -> None:
    doc = _read(tmp_path)
    text = " ".join(" ".join(p.text for p in doc.pages).split())
    assert doc.title == "Node exporter"
    for badge in ("CircleCI", "Buildkite status", "Docker Pulls", "Go Report Card"):
        assert badge not in text
    assert text.startswith("Node exporter Prometheus exporter for hardware and OS metrics")
    assert "metrics, prometheus-dcgm can be used." in text
    assert "For more information see man 2 perf_event_open." in text
    assert "](" not in text


def test_an_escape_is_no_markup_and_a_code_span_keeps_its_backslashes() -> None:
    text, _, _ = markdown_text(
        "Use \\*args and \\*\\*kwargs, not *these*; type `C:\\dir\\*.txt` or \\`tick\\`.\n"
        "[![Build](https://ci/x.svg)](https://ci/x) [![PyPI](https://p/y.svg)][pypi]\n"
        "A picture ![a cat](cat.png) and a [link](https://example.org).\n"
        " * a tag, per the [Cache Directory Tagging\n   Standard](http://www.brynosaurus.com/).\n"
    )
    lines = text.split("\n")
    assert lines[0] == "Use *args and **kwargs, not these; type C:\\dir\\*.txt or `tick`."
    assert lines[1] == "A picture a cat and a link."
    assert lines[2] == " * a tag, per the Cache Directory Tagging Standard."  # man-db's NEWS.md
