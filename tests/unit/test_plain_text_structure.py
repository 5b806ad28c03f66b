"""What plain text files lay out, read as structure: columns aligned with spaces as tables, a JSON
list of flat records as a table, underlined lines as section headings.

Found on the twelfth real folder (BENCHMARKS.md "Plain text structure"): PostgreSQL's
``errcodes.txt`` and iso-codes' ``iso_15924.json`` were read as flat text, so "What is the
PostgreSQL error code for a unique violation?" and "What is the ISO 15924 numeric code of the
Cyrillic script?" found chunks of other rows; a README's underlined headings were no sections."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from kgrag.ingest.models import ParsedDocument
from kgrag.ingest.parsers import markdown_text, parse
from kgrag.ingest.sources import expand_inputs

DATA = Path(__file__).parents[1] / "data" / "plain_text"


def _parse(path: Path) -> ParsedDocument:
    (found,) = expand_inputs([str(path)]).items
    return parse(found, 10_000_000)


def test_errcodes_rows_are_rows_of_a_table_per_class() -> None:
    doc = _parse(DATA / "errcodes.txt")
    by_caption = {t.caption: t for t in doc.tables}
    integrity = by_caption["Class 23 - Integrity Constraint Violation"]
    # the columns as the comment over them names them ("#      sqlstate    E/W/S    ...")
    assert integrity.header == ("sqlstate", "E/W/S", "errcode_macro_name", "spec_name")
    assert ("23505", "E", "ERRCODE_UNIQUE_VIOLATION", "unique_violation") in integrity.rows
    rollback = by_caption["Class 40 - Transaction Rollback"]
    assert ("40P01", "E", "ERRCODE_T_R_DEADLOCK_DETECTED", "deadlock_detected") in rollback.rows
    # a class of one code is a table too; a code without a spec name keeps its place
    assert by_caption["Class 03 - SQL Statement Not Yet Complete"].rows == (
        ("03000", "E", "ERRCODE_SQL_STATEMENT_NOT_YET_COMPLETE", "sql_statement_not_yet_complete"),
    )
    rows = [r for t in doc.tables for r in t.rows]
    assert ("22008", "E", "ERRCODE_DATETIME_VALUE_OUT_OF_RANGE", "") in rows
    source = (DATA / "errcodes.txt").read_text(encoding="utf-8")
    codes = [line for line in source.split("\n") if line[:1].isalnum() and "ERRCODE_" in line]
    assert len(rows) == len(codes) == 266
    # the comments and the class lines stay text; no row does
    (page,) = doc.pages
    assert "SQLSTATE codes for errors." in page.text
    assert "Section: Class 23 - Integrity Constraint Violation" in page.text
    assert "ERRCODE_UNIQUE_VIOLATION" not in page.text
    assert doc.title == "errcodes"


def test_a_psql_style_table_under_a_line_is_a_table_with_its_header() -> None:
    doc = _parse(DATA / "README.base-passwd")
    uids, gids = doc.tables
    assert (uids.caption, uids.header) == ("Reserved uids", ("uid", "name", "description"))
    assert ("64045", "ceph", "ceph object storage") in uids.rows
    assert gids.header[0] == "gid"
    (page,) = doc.pages
    assert "64045" not in page.text and "update-passwd" in page.text
    assert doc.title == "base-passwd for Debian"
    assert [(h.level, h.text) for h in page.headings] == [(1, "base-passwd for Debian")]


def test_prose_with_runs_of_spaces_is_not_a_table() -> None:
    """FreeType's README is justified with runs of spaces; its paragraphs stay text, and its
    list of mailing lists (addresses aligned at a column) is the only table (cut in two by its
    line whose address follows one space: that line stays text)."""
    doc = _parse(DATA / "README.freetype")
    (page,) = doc.pages
    assert "It  is  written  in  C,   designed  to  be  small" in page.text
    assert "Please   read  the   `docs/CHANGES`" in page.text
    rows = [r for t in doc.tables for r in t.rows]
    assert rows == [
        ("general use and discussion:", "freetype@nongnu.org"),
        ("announcements:", "freetype-announce@nongnu.org"),
        ("git repository tracker:", "freetype-commit@nongnu.org"),
    ]
    assert "engine internals, porting, etc.: freetype-devel@nongnu.org" in page.text


def test_underlined_lines_are_sections_and_their_rules_go() -> None:
    doc = _parse(DATA / "README.freetype")
    (page,) = doc.pages
    assert [(h.level, h.text) for h in page.headings] == [
        (1, "FreeType 2.12.1"),
        (2, "Mailing Lists"),
        (2, "Bugs"),
        (2, "Patches"),
    ]
    for h in page.headings:
        assert page.text[h.start :].startswith(h.text)
    assert "\n---\n" not in page.text and "===" not in page.text
    # a rule under a paragraph's last line, of another length, is no heading
    assert "----------------------------------------------------------------------" in page.text


def test_a_markdown_line_over_dashes_is_a_heading_not_a_rule() -> None:
    """CommonMark's setext heading: "Part" over "----" was read as text and a thematic break."""
    _text, title, headings = markdown_text("Title\n=====\n\nText.\n\nPart\n----\n\nMore.\n")
    assert title == "Title"
    assert [(h.level, h.text) for h in headings] == [(1, "Title"), (2, "Part")]
    # after a heading, a list item or a blank line, dashes are a rule still
    for text in ("# T\n---\nx", "- a\n---\nb", "a\n\n---\n\nb"):
        assert [h.text for h in markdown_text(text)[2]] == (["T"] if "#" in text else []), text


def test_a_json_list_of_flat_records_is_a_table(tmp_path: Path) -> None:
    doc = _parse(DATA / "iso_15924.json")
    (table,) = doc.tables
    assert (table.caption, table.header) == ("15924", ("alpha_4", "name", "numeric"))
    assert ("Cyrl", "Cyrillic", "220") in table.rows
    records = json.loads((DATA / "iso_15924.json").read_text(encoding="utf-8"))["15924"]
    assert len(table.rows) == len(records)
    assert not doc.pages
    assert doc.title == "iso 15924"
    # a bare list of records, with a missing key and a number: a table too
    path = tmp_path / "scripts.json"
    path.write_text(json.dumps([records[0], {"alpha_4": "Cyrl", "numeric": 220}]), "utf-8")
    (table,) = _parse(path).tables
    assert table.rows == (("Adlm", "Adlam", "166"), ("Cyrl", "", "220"))


def test_json_that_is_not_flat_records_stays_text(tmp_path: Path) -> None:
    nested = tmp_path / "kernel.json"
    nested.write_text(
        json.dumps({"argv": ["python3", "-m", "ipykernel"], "display_name": "Python 3"}), "utf-8"
    )
    assert not _parse(nested).tables and _parse(nested).pages
    deep = tmp_path / "deep.json"
    shutil.copy(DATA / "iso_15924.json", deep)
    text = deep.read_text(encoding="utf-8").replace('"numeric": "220"', '"numeric": ["220"]')
    deep.write_text(text, "utf-8")
    assert not _parse(deep).tables


def test_a_release_log_is_not_read_for_tables(tmp_path: Path) -> None:
    """A change log's diff statistics and "* file:  what" lines line up, but are not tables."""
    path = tmp_path / "changelog"
    path.write_text(
        "commit 1\n\n    Fix typos in orth files.\n\n"
        " fc-lang/ab.orth     |  2 +-\n fc-lang/ber_ma.orth | 46 ++++\n"
        " fc-lang/kab.orth    | 42 +++\n",
        "utf-8",
    )
    assert not _parse(path).tables


def test_a_less_indented_row_above_is_its_tables_caption(tmp_path: Path) -> None:
    """pci.ids (lines 9599-9604 of the copy in /tmp/rf9): a vendor, then its devices indented by
    a tab; the vendor's line is the devices' caption and stays text."""
    path = tmp_path / "pci.ids"
    path.write_text(
        "10de  NVIDIA Corporation\n\t0008  NV1 [STG2000X-B Series]\n\t0009  NV1 [NV1 Series]\n"
        "\t0018  NV3 [Riva 128]\n\t0019  NV3 [Riva 128ZX]\n\t0020  NV4 [Riva TNT]\n",
        "utf-8",
    )
    doc = _parse(path)
    (table,) = doc.tables
    assert (table.caption, table.header) == ("10de NVIDIA Corporation", ())  # "0008" no name
    assert table.rows[0] == ("0008", "NV1 [STG2000X-B Series]")
    assert "10de  NVIDIA Corporation" in doc.pages[0].text


def test_aligned_code_with_comments_is_not_a_table(tmp_path: Path) -> None:
    """alsa-lib's asoundrc.txt (/usr/share/doc/libasound2/examples, lines 107-118): settings
    aligned with tabs before their comments are configuration, not rows."""
    path = tmp_path / "asoundrc.txt"
    path.write_text(
        "  type hooks \t\t# PCM with hooks\n  slave STR\t\t# Slave name (see pcm_slave)\n"
        "  # or\n  slave {\t\t# Slave definition\n    pcm STR\t\t# Slave PCM name\n    # or\n"
        "    pcm { }\t\t# Slave PCM definition\n  }\n  hooks {\n"
        "    ID STR\t\t# Hook name (see pcm_hook)\n    # or\n"
        "    ID { }\t\t# Hook definition (see pcm_hook)\n",
        "utf-8",
    )
    assert not _parse(path).tables


def test_json_nested_deeper_than_the_parser_recurses_is_read_as_text(tmp_path: Path) -> None:
    # one "[" per line (no line is long enough to make the file "minified"): json.loads raised
    # RecursionError, which stopped the whole ingestion job instead of this file alone
    deep = tmp_path / "nested.json"
    deep.write_text("[\n" * 100_000 + "]\n" * 100_000, "utf-8")
    parsed = _parse(deep)
    assert not parsed.tables and parsed.pages


def test_a_list_of_o_bullets_is_not_a_table(tmp_path: Path) -> None:
    """mhash's README lists its features as "   o  Reentrancy support" (the seventeenth folder):
    read as a table of two columns, "o" and the feature, "Which lesser-known hash algorithm
    does mhash support?" quoted the row "column 1: o; column 2: Support for known strong
    algorithms", not the line naming GOST."""
    path = tmp_path / "libmhash2" / "README"
    path.parent.mkdir()
    shutil.copy(Path(__file__).parents[1] / "data" / "first_lines" / "mhash-README", path)
    doc = _parse(path)
    assert not doc.tables
    assert "o  Support for less-known algorithms such as GOST" in doc.pages[0].text
