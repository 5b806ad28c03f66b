"""JSON written on one line is read as JSON, not skipped as machine-made text.

Found on this machine: 26 of its 2,083 JSON files over 4 KB have a line over 4,096 characters
(kgrag.ingest.sniff.MAX_LINE_CHARS) and were skipped as "not text (binary, minified ...)".
A list of records on one line (iso-codes' script codes, minified) is now a table, an object of
objects (libjs-rickshaw's status.json, as shipped) text cut between its values; a file that
starts like JSON on a long line but is none (status.json cut short) is still skipped, with the
reason named. Real files: tests/data/minified_json/SOURCE.md."""

from __future__ import annotations

import shutil
from pathlib import Path

from kgrag.ingest.models import SourceItem
from kgrag.ingest.parsers import parse
from kgrag.ingest.sniff import MAX_LINE_CHARS, file_looks_like_text
from kgrag.ingest.sources import expand_inputs

DATA = Path(__file__).parents[1] / "data" / "minified_json"


def _read(path: Path):  # type: ignore[no-untyped-def]
    return parse(SourceItem(path=path, modality="text", mime="text/plain"), 10_000_000)


def test_one_line_json_files_of_this_machine_are_text() -> None:
    for name in ("status.json", "iso_15924.min.json"):
        data = (DATA / name).read_text(encoding="utf-8")
        assert len(data.splitlines()) == 1 and len(data) > MAX_LINE_CHARS
        assert file_looks_like_text(DATA / name), name


def test_records_on_one_line_are_a_table() -> None:
    doc = _read(DATA / "iso_15924.min.json")
    assert len(doc.tables) == 1 and len(doc.tables[0].rows) == 182
    assert ("Cyrl", "Cyrillic", "220") in doc.tables[0].rows


def test_an_object_on_one_line_is_text_cut_between_its_values() -> None:
    doc = _read(DATA / "status.json")
    text = "\n".join(p.text for p in doc.pages)
    assert '"1320630300": {' in text
    assert max(len(line) for line in text.splitlines()) < 100


def test_a_long_line_that_is_not_json_is_still_skipped_with_its_reason(tmp_path: Path) -> None:
    cut = tmp_path / "status.json"
    cut.write_bytes((DATA / "status.json").read_bytes()[:5000])  # cut inside a value
    shutil.copy(DATA / "iso_15924.min.json", tmp_path)
    found = expand_inputs([str(tmp_path)])
    assert [i.path.name for i in found.items] == ["iso_15924.min.json"]
    (refused,) = found.rejected
    assert refused.path.endswith("status.json")
    assert "a line over 4,096 characters that is not JSON" in refused.reason
