"""What the reader fuzzer (tests/support/fuzz_readers.py) found, each on a real file damaged as it
damaged it, fixed in the reader:

- a zip archive whose members' start was cut away (its central directory points before the
  file's start): ``zipfile`` raised ``ValueError: negative seek value``, which no reader caught
  and which stopped the whole ingestion job; now each member is refused as corrupt;
- an e-mail whose ``Content-Disposition`` header was repeated to 2 MB: Python's header parser
  is quadratic (more than two minutes); now a header over 32,000 characters refuses the message;
- an HTML page nested 100,000 ``<div>`` deep: Lexbor's tree builder is quadratic in the depth
  (80 s); now a page nested deeper than ``MAX_HTML_DEPTH`` is read as text with its tags dropped.

And the Ray runner's parse task reads through the same boundary: a file that breaks its reader is
a refusal there too, never an exception that fails the Ray task."""

from __future__ import annotations

import pickle
import struct
from pathlib import Path

import numpy as np

from kgrag.ingest.containers.expand import parse_all
from kgrag.ingest.models import ParsedInputs, SourceItem
from kgrag.ingest.pipeline import IngestOptions
from kgrag.ingest.sources import expand_inputs

DATA = Path(__file__).resolve().parent.parent / "data"


def _item(path: Path) -> SourceItem:
    (item,) = expand_inputs([str(path)]).items
    return item


def cut_zip(target: Path) -> Path:
    data = (DATA / "containers" / "good" / "docs.zip").read_bytes()
    end = data.rfind(b"PK\x05\x06")
    (cd_offset,) = struct.unpack("<I", data[end + 16 : end + 20])
    target.write_bytes(b"PK" + data[cd_offset - 40 :])
    return target


def test_a_zip_whose_members_start_was_cut_refuses_each_member(tmp_path: Path) -> None:
    archive = cut_zip(tmp_path / "docs.zip")
    parsed = parse_all(_item(archive), 1_000_000)
    refused = {r.path.removeprefix(f"{archive}!"): r.reason for r in parsed.refused}
    assert set(refused) == {"guide/intro.md", "guide/NOTES", "data/levels.csv", "bin/tool.exe"}
    assert all(r.startswith("corrupt member: ValueError") for r in refused.values())


def test_an_email_with_a_header_too_long_to_parse_is_refused(tmp_path: Path) -> None:
    message = (DATA / "containers" / "good" / "inspection.eml").read_text("utf-8")
    damaged = tmp_path / "inspection.eml"
    header = "Content-Disposition: attachment; " + "fi;le=x;" * 5_000 + "\n"
    damaged.write_text(header + message, "utf-8")
    parsed = parse_all(_item(damaged), 1_000_000)
    assert parsed.documents == ()
    (refused,) = parsed.refused
    assert refused.path == str(damaged)
    assert refused.reason.startswith("its Content-Disposition header is 40,012 characters long")


def test_an_html_page_nested_too_deep_is_read_as_text(tmp_path: Path) -> None:
    from kgrag.ingest.formats.html import MAX_HTML_DEPTH, nesting_depth

    page = (DATA / "formats" / "ferry.html").read_text("utf-8")
    at = page.index("</body>")
    deep = "<div>" * 100_000 + "Deep inside the page" + "</div>" * 100_000
    damaged = tmp_path / "ferry.html"
    damaged.write_text(page[:at] + deep + page[at:], "utf-8")
    assert nesting_depth(damaged.read_text("utf-8")) == MAX_HTML_DEPTH
    (doc,) = parse_all(_item(damaged), 10_000_000).documents
    text = "\n".join(p.text for p in doc.pages)
    assert "Deep inside the page" in text and "<div>" not in text


def test_nesting_depth_counts_what_html_nests() -> None:
    from kgrag.ingest.formats.html import nesting_depth

    # <p> and <li> close themselves, void elements never open: a long real page is shallow
    assert nesting_depth("<html><body>" + "<p>text" * 10_000 + "<br><img src=x>" * 100) == 0
    assert nesting_depth("<ul>" + "<li>item" * 10_000 + "</ul>") == 1
    assert nesting_depth("<div><section><div/></section><span>x</span></div>") == 2


def test_the_ray_parse_task_refuses_a_file_that_breaks_its_reader(tmp_path: Path) -> None:
    from kgrag.ingest import ray_job

    archive = cut_zip(tmp_path / "docs.zip")
    batch = {"i": np.array([0]), "blob": ray_job._objects([pickle.dumps(_item(archive))])}
    out = ray_job._parse(batch, IngestOptions())
    result: ParsedInputs = pickle.loads(out["blob"][0])
    assert len(result.refused) == 4
    assert all(r.path.startswith(f"{archive}!") for r in result.refused)
