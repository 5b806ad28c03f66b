"""The document formats (HTML, DOCX, ODT, PPTX, EPUB) parsed from the real files of
tests/data/formats (made by pandoc: scripts/make_format_fixtures.py), and the bad files each must
refuse by name within bounds: truncated, zip bombs, a million empty cells, an oversized page."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

import pytest

from kgrag.errors import EmptyInputError, IngestError
from kgrag.ingest import formats, sources
from kgrag.ingest.formats._common import MAX_TABLE_CELLS
from kgrag.ingest.formats._zipped import MAX_RATIO, MAX_UNPACKED_BYTES
from kgrag.ingest.formats.html import MAX_HTML_BYTES
from kgrag.ingest.formats.registry import ParsedContent
from kgrag.ingest.models import SourceItem
from kgrag.ingest.parsers import parse
from tests.support.documents_bad import (
    FORMATS,
    billion_laughs_docx,
    bomb_total,
    huge_html,
    million_cell_docx,
    million_cell_html,
    million_cell_odt,
    one_byte_bomb,
    truncated,
)

LIMIT = 100_000_000


def _item(path: Path) -> SourceItem:
    (found,) = sources.expand_inputs([str(path)]).items
    return found


def _content(path: Path) -> ParsedContent:
    fmt = formats.for_suffix(path.suffix)
    assert fmt is not None, path.suffix
    return fmt.parse(_item(path), path.read_bytes())


def _refused(path: Path) -> str:
    with pytest.raises(IngestError) as err:
        parse(_item(path), LIMIT)
    assert err.value.path == str(path)
    return err.value.reason


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------------------------------- html


def test_html_keeps_the_article_and_drops_navigation_and_boilerplate() -> None:
    content = _content(FORMATS / "ferry.html")
    assert content.title == "Estuary Ferry Timetable"
    (page,) = content.pages
    assert page.number is None
    text = page.text
    # headings stand alone between blank lines; source line breaks are spaces
    assert "\n\nDepartures\n\n" in text
    assert "every day except Christmas Day. Bicycles travel free of charge." in text
    assert "- Step-free boarding at both piers\n- Hearing loop in the passenger cabin" in text
    for boilerplate in ("All routes", "Sign in", "Home > Ferries", "Download our app"):
        assert boilerplate not in text
    assert "Cookie" not in text and "tracking-snippet" not in text and "font-family" not in text
    # the table is data, not also a stream of cells in the text
    assert "06:25" not in text
    (table,) = content.tables
    assert table.caption == "Weekday departures"
    assert table.header == ("Sailing", "Saltmarsh Quay", "Heron Point")
    assert table.rows == (("First", "06:00", "06:25"), ("Last", "22:30", "22:55"))


def test_html_without_main_uses_the_body_and_a_layout_table_is_text(tmp_path: Path) -> None:
    page = _write(
        tmp_path,
        "old.htm",
        "<html><body><div class='navbar'>Menu links</div>"
        "<table><tr><td><h2>Opening hours <a class='headerlink' href='#o'>¶</a></h2>"
        "<p>Open from nine.<br>Closed on Sundays.</p>"
        "<table><tr><td>inner</td></tr></table></td></tr></table>"
        "<div id='footer'>Footer text</div></body></html>",
    )
    content = _content(page)
    assert content.title == "Opening hours"  # no <title>: the first heading
    text = content.pages[0].text
    assert "Open from nine.\nClosed on Sundays." in text
    assert "inner" in text and content.tables == ()
    assert "Menu links" not in text and "Footer text" not in text


def test_html_in_a_declared_latin1_charset_is_read(tmp_path: Path) -> None:
    page = tmp_path / "cafe.html"
    page.write_bytes(
        b'<html><head><meta charset="iso-8859-1"><title>Caf\xe9</title></head>'
        b"<body><p>Cr\xe8me br\xfbl\xe9e.</p></body></html>"
    )
    content = _content(page)
    assert content.title == "Café"
    assert content.pages[0].text == "Crème brûlée."
    xhtml = tmp_path / "cafe.xhtml"
    xhtml.write_bytes(
        b'<?xml version="1.0" encoding="ISO-8859-1"?>\n'
        b"<html><body><p>D\xe9j\xe0 vu.</p></body></html>"
    )
    assert _content(xhtml).pages[0].text == "Déjà vu."


def test_html_not_utf8_and_without_charset_is_windows_1252(tmp_path: Path) -> None:
    page = tmp_path / "latin.html"
    page.write_bytes(b"<p>caf\xe9 \x80 5</p>")
    assert "café € 5" in _content(page).pages[0].text


def test_html_legible_in_no_encoding_names_the_byte(tmp_path: Path) -> None:
    page = tmp_path / "bad.html"
    page.write_bytes(b"<p>caf\xe9</p>" + bytes(range(1, 32)) * 8)
    assert "byte 0xe9 at offset 6" in _refused(page)


def test_html_with_no_text_is_refused_with_that_reason(tmp_path: Path) -> None:
    page = _write(
        tmp_path,
        "app.html",
        "<html><head><title>App</title><script>boot()</script></head>"
        "<body><nav>Home</nav><div id='root'></div></body></html>",
    )
    with pytest.raises(EmptyInputError) as err:  # skipped as "empty" in a folder, not failed
        parse(_item(page), LIMIT)
    assert err.value.reason.startswith("contains no text")


def test_deeply_nested_html_is_read_without_recursion(tmp_path: Path) -> None:
    page = _write(tmp_path, "deep.html", "<div>" * 3_000 + "Bottom line." + "</div>" * 3_000)
    assert "Bottom line." in _content(page).pages[0].text


# ---------------------------------------------------------------------------------------- docx


def test_docx_headings_lists_table_image_and_title() -> None:
    content = _content(FORMATS / "lighthouse.docx")
    assert content.title == "Lighthouse Keeping Manual"
    (page,) = content.pages
    assert page.number is None
    assert "\n\nDaily Checks\n\n" in page.text
    assert "cleaned every Tuesday by the duty keeper" in page.text
    assert (
        "- Trim the wick to a flat edge\n  - Use the brass scissors kept in drawer B" in page.text
    )
    assert "1200 W" not in page.text
    (table,) = content.tables
    assert (table.caption, table.page) == ("Lamp Wattage", None)
    assert table.header == ("Lamp", "2022", "2023")
    assert table.rows[0] == ("Main beacon", "1000 W", "1200 W")
    (image,) = content.images
    assert (image.width, image.height, image.page) == (96, 64, None)
    assert image.caption == "Lens diagram of the Gullrock lamp"
    assert image.data is not None and image.data.startswith(b"\x89PNG")


def test_odt_headings_lists_table_image_and_title() -> None:
    content = _content(FORMATS / "orchard.odt")
    assert content.title == "Orchard Survey of Pellworth Farm"
    text = content.pages[0].text
    assert "\n\nPruning Calendar\n\n- Prune the Bramley trees in late January\n" in text
    (table,) = content.tables
    assert table.caption == "Harvest Yields"
    assert table.header == ("Variety", "Trees", "Tonnes in 2023")
    assert table.rows == (("Bramley", "40", "12.5"), ("Egremont Russet", "25", "6.75"))
    (image,) = content.images
    assert (image.width, image.height) == (96, 64)


def test_pptx_slides_are_pages_with_notes_tables_and_pictures() -> None:
    content = _content(FORMATS / "review.pptx")
    assert content.title == "Quarterly Review of the Ferry Service"
    pages = {p.number: p.text for p in content.pages}
    assert sorted(pages) == [1, 2, 3, 4]
    assert pages[2].startswith("Service Overview\n\n- Three ferries crossed the estuary daily")
    assert (
        "Speaker notes: The Kestrel pump contract was renewed with Barrowdale Engineering"
        in pages[2]
    )
    assert "Saltmarsh Quay before the repaint" in pages[4]
    assert "Kestrel" not in pages[4]
    (table,) = content.tables
    assert (table.page, table.caption) == (3, "Crossings per Vessel")
    assert table.rows == (("Osprey", "410", "455"), ("Heron", "380", "402"))
    (image,) = content.images
    assert image.page == 4


def test_epub_chapters_are_pages_in_reading_order() -> None:
    content = _content(FORMATS / "clockmaker.epub")
    assert content.title == "The Clockmaker’s Guide"
    pages = {p.number: p.text for p in content.pages}
    # the title page is the first document of the reading order
    assert sorted(pages) == [1, 2, 3, 4]
    assert pages[2].startswith("Escapements\n\nThe anchor escapement")
    assert "seven turns" in pages[3]
    (table,) = content.tables
    assert (table.page, table.caption) == (3, "Mainsprings")
    assert table.rows == (("Carriage clock", "7"), ("Mantel clock", "5"))
    (image,) = content.images
    assert (image.page, image.caption) == (4, "Polished walnut case")


# ------------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize(
    "name", ["lighthouse.docx", "review.pptx", "orchard.odt", "clockmaker.epub"]
)
def test_a_truncated_container_is_refused_as_corrupt(tmp_path: Path, name: str) -> None:
    bad = truncated(FORMATS / name, tmp_path / name)
    kind = bad.suffix[1:].upper()
    assert _refused(bad).startswith(f"corrupt or unreadable {kind}: not a zip archive")


def test_a_docx_declaring_more_than_the_unpacked_limit_is_refused(tmp_path: Path) -> None:
    bomb = bomb_total(FORMATS / "lighthouse.docx", tmp_path / "bomb.docx")
    assert bomb.stat().st_size < 2_000_000
    reason = _refused(bomb)
    assert reason.startswith("DOCX unpacks to ")
    assert f"over the {MAX_UNPACKED_BYTES:,} byte limit (a zip bomb" in reason


def test_an_epub_chapter_of_one_repeated_byte_is_refused_as_a_zip_bomb(tmp_path: Path) -> None:
    bomb = one_byte_bomb(
        FORMATS / "clockmaker.epub", tmp_path / "bomb.epub", "EPUB/text/ch002.xhtml"
    )
    reason = _refused(bomb)
    assert reason.startswith("EPUB member 'EPUB/text/ch002.xhtml' inflates ")
    assert f"over the {MAX_RATIO}:1 limit (a zip bomb)" in reason


@pytest.mark.parametrize(
    "make", [million_cell_docx, million_cell_odt, million_cell_html], ids=["docx", "odt", "html"]
)
def test_a_table_of_a_million_empty_cells_is_refused(tmp_path: Path, make: object) -> None:
    assert callable(make)
    suffix = {"million_cell_docx": ".docx", "million_cell_odt": ".odt"}.get(make.__name__, ".html")
    bad = make(tmp_path / f"grid{suffix}")
    reason = _refused(bad)
    assert reason.startswith(f"too many table cells: more than {MAX_TABLE_CELLS:,}"), reason


def test_entity_expansion_in_a_docx_part_is_refused(tmp_path: Path) -> None:
    bad = billion_laughs_docx(tmp_path / "laughs.docx")
    reason = _refused(bad)
    assert reason.startswith("corrupt DOCX: part 'word/document.xml' is not valid XML"), reason
    assert "amplification" in reason


def test_a_50_mb_html_page_is_refused_before_parsing(tmp_path: Path) -> None:
    page = huge_html(tmp_path / "dump.html")
    reason = _refused(page)
    assert reason == (
        f"HTML page is {page.stat().st_size:,} bytes, over the {MAX_HTML_BYTES:,} byte limit "
        "for one page; split it"
    )


def test_a_docx_with_an_undecodable_picture_keeps_its_text(tmp_path: Path) -> None:
    from tests.support.documents_bad import rezip

    copy = tmp_path / "plain.docx"
    shutil.copy(FORMATS / "lighthouse.docx", copy)
    with __import__("zipfile").ZipFile(copy) as z:
        media = next(n for n in z.namelist() if n.startswith("word/media/"))
    broken = rezip(copy, tmp_path / "broken.docx", {media: b"not an image at all"})
    content = _content(broken)
    assert content.images == ()
    assert "Gullrock lighthouse" in content.pages[0].text


# ------------------------------------------------------------------ LibreOffice's own writers


def test_a_captioned_picture_in_a_frame_is_read_once(tmp_path: Path) -> None:
    """LibreOffice keeps a captioned picture as a frame holding a text box whose paragraph holds
    the picture's own frame (as in its idxexample.odt template); the picture was read twice."""
    source = FORMATS / "lighthouse_lo.odt"
    nested = tmp_path / "lighthouse_captioned.odt"
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(nested, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename == "content.xml":
                text = data.decode("utf-8")
                start = text.index('<draw:frame draw:style-name="fr1"')
                end = text.index("</draw:frame>", start) + len("</draw:frame>")
                text = (
                    text[:start]
                    + '<draw:frame draw:name="Caption"><draw:text-box><text:p>'
                    + text[start:end]
                    + "Figure 1: the lens</text:p></draw:text-box></draw:frame>"
                    + text[end:]
                )
                data = text.encode("utf-8")
            zout.writestr(info, data)
    odt = _content(nested)
    assert [i.caption for i in odt.images] == ["Lens diagram of the Gullrock lamp"]


def test_libreoffice_writer_files_read_like_pandocs() -> None:
    odt = _content(FORMATS / "lighthouse_lo.odt")
    assert odt.title == "Lighthouse Keeping Manual"
    assert "\n\nDaily Checks\n\n" in odt.pages[0].text
    assert "  - Use the brass scissors kept in drawer B" in odt.pages[0].text
    (table,) = odt.tables
    assert (table.caption, table.rows[0]) == ("Lamp Wattage", ("Main beacon", "1000 W", "1200 W"))
    assert [i.caption for i in odt.images] == ["Lens diagram of the Gullrock lamp"]
    docx = _content(FORMATS / "orchard_lo.docx")
    assert docx.title == "Orchard Survey of Pellworth Farm"
    assert "- Thin the russets after the June drop" in docx.pages[0].text
    (table,) = docx.tables
    assert table.rows == (("Bramley", "40", "12.5"), ("Egremont Russet", "25", "6.75"))
    assert len(docx.images) == 1


def test_a_deck_saved_by_libreoffice_impress_keeps_slides_notes_and_table() -> None:
    content = _content(FORMATS / "review_lo.pptx")
    pages = {p.number: p.text for p in content.pages}
    assert sorted(pages) == [1, 2, 3, 4]
    assert "Speaker notes: The Kestrel pump contract was renewed" in pages[2]
    (table,) = content.tables
    assert (table.page, table.header) == (3, ("Vessel", "Q1", "Q2"))
    assert [i.page for i in content.images] == [4]


def test_a_merged_cell_gives_its_text_to_every_row_it_spans(tmp_path: Path) -> None:
    expected = (
        ("Saltmarsh Quay", "North arm", "4.2"),
        ("Saltmarsh Quay", "South arm", "3.9"),
        ("Heron Point", "Pier head", "4.6"),
    )
    # Writer's DOCX (vMerge) of a page whose table spans rows
    (table,) = _content(FORMATS / "tides_lo.docx").tables
    assert table.header == ("Station", "Gauge", "High water")
    assert table.rows == expected
    page = _write(
        tmp_path,
        "tides.html",
        "<table><tr><th>Station</th><th colspan='2'>Reading</th></tr>"
        "<tr><td rowspan='2'>Saltmarsh Quay</td><td>North arm</td><td>4.2</td></tr>"
        "<tr><td>South arm</td><td>3.9</td></tr>"
        "<tr><td>Heron Point</td><td>Pier head</td><td>4.6</td></tr></table>",
    )
    (table,) = _content(page).tables
    assert table.header == ("Station", "Reading", "Reading")
    assert table.rows == expected


# ------------------------------------------------------------------------------------- notebooks


def test_notebook_cells_outputs_and_plot(tmp_path: Path) -> None:
    from tests.support.notebooks import write_notebook

    found = _content(write_notebook(tmp_path / "churn.ipynb"))
    assert found.title == "Churn model experiment"
    (page,) = found.pages
    text = page.text
    for part in (
        "We train on the March export.",  # a Markdown cell
        "learning_rate = 0.003",  # a code cell's source
        "learning rate 0.003",  # what it printed
        "NameError: name 'undefined_name' is not defined",  # what it raised
    ):
        assert part in text, part
    assert "Figure size" not in text and "iVBOR" not in text  # the plot is an image, not text
    (plot,) = found.images
    assert (plot.width, plot.height, plot.caption) == (200, 120, "Validation loss")
    assert plot.data is not None and plot.data.startswith(b"\x89PNG")


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ('{"cells": [', "not a Jupyter notebook: invalid JSON at line 1, column 12"),
        ('{"worksheets": [], "nbformat": 3}', "not a Jupyter notebook of nbformat 4"),
        ('{"cells": [1], "nbformat": 4}', "cell 1 is not an object"),
    ],
)
def test_a_broken_notebook_is_refused_naming_what_is_wrong(
    tmp_path: Path, content: str, reason: str
) -> None:
    path = _write(tmp_path, "broken.ipynb", content)
    assert reason in _refused(path)


def test_a_notebook_of_empty_cells_is_empty(tmp_path: Path) -> None:
    path = _write(
        tmp_path, "blank.ipynb", '{"cells": [{"cell_type": "code", "source": []}], "nbformat": 4}'
    )
    with pytest.raises(EmptyInputError):
        parse(_item(path), LIMIT)


# ------------------------------------------------------------------------------------------- rtf


def test_rtf_saved_by_libreoffice_is_its_text(tmp_path: Path) -> None:
    """orchard_lo.rtf: orchard.odt saved as RTF by LibreOffice 7 (soffice --convert-to rtf)."""
    content = _content(FORMATS / "orchard_lo.rtf")
    assert content.title == "Orchard Survey of Pellworth Farm"
    (page,) = content.pages
    assert "The Pellworth orchard grows heritage apples on a north-facing slope." in page.text
    assert "Egremont Russet|25|6.75|" in page.text  # a table row
    assert "fonttbl" not in page.text and "Times New Roman" not in page.text


def test_rtf_escapes_follow_the_declared_code_page(tmp_path: Path) -> None:
    path = tmp_path / "note.rtf"
    path.write_bytes(
        rb"{\rtf1\ansi\ansicpg1251 {\fonttbl{\f0 Arial;}}\f0 "
        rb"\'cf\'f0\'e8\'e2\'e5\'f2 caf\u233? \par}"
    )
    assert _content(path).pages[0].text == "Привет café"


def test_a_file_named_rtf_that_is_not_rtf_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, "fake.rtf", "Just words, no RTF header.")
    assert _refused(path) == "not an RTF document: it does not start with {\\rtf"


# ------------------------------------------------------------------- read through LibreOffice


def test_an_rtf_saved_under_a_doc_name_is_read_as_rtf(tmp_path: Path) -> None:
    """Word's "Save as RTF" keeps a .doc name; LibreOffice is not needed for it."""
    doc = tmp_path / "survey.doc"
    shutil.copy(FORMATS / "orchard_lo.rtf", doc)
    content = _content(doc)
    assert content.title == "Orchard Survey of Pellworth Farm"
    assert "The Pellworth orchard grows heritage apples" in content.pages[0].text


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        (
            "notes.doc",
            b"Minutes of the May meeting\n",
            "not a Word 97-2003 document: it is not an OLE",
        ),
        ("sheet.xls", b"<html><table><tr><td>1</td></tr></table></html>", "not an Excel 97-2003"),
        (
            "deck.odp",
            b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(600),
            "not an OpenDocument presentation: it is not a zip",
        ),
    ],
)
def test_a_file_that_is_not_the_format_its_name_says_is_refused_by_name(
    tmp_path: Path, name: str, data: bytes, reason: str
) -> None:
    path = tmp_path / name
    path.write_bytes(data)
    assert _refused(path).startswith(reason)
