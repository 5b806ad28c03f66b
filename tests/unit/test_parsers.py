"""parse() over real files written in tmp_path: text, Markdown, PDFs, images, audio, and the
damaged ones it must refuse with a reason."""

from __future__ import annotations

import hashlib
import io
import wave
from pathlib import Path

import pytest
from PIL import Image

from kgrag.errors import IngestError
from kgrag.ingest.models import SourceItem
from kgrag.ingest.parsers import parse, strip_markdown
from kgrag.ingest.sources import FILE_TYPES, expand_inputs
from tests.support.pdfgen import figure, write_blank_pdf, write_pdf, write_truncated_pdf
from tests.support.valgrind_manual import manual_excerpt

LIMIT = 10_000_000


def item(path: Path, title: str | None = None) -> SourceItem:
    modality, mime = FILE_TYPES[path.suffix.lower()]
    return SourceItem(path=path, title=title, modality=modality, mime=mime)


def refused(path: Path, max_bytes: int = LIMIT) -> str:
    with pytest.raises(IngestError) as info:
        parse(item(path), max_bytes)
    assert info.value.path == str(path)
    return info.value.reason


# ---------------------------------------------------------------------------------------- text


def test_text_file_title_hash_and_line_endings(tmp_path: Path) -> None:
    raw = b"\n\n  Quarterly report  \r\nRevenue grew 5% in Q3.\r\nCosts fell.\n"
    path = tmp_path / "report.txt"
    path.write_bytes(raw)
    doc = parse(item(path), LIMIT)
    assert doc.title == "Quarterly report"
    assert doc.sha256 == hashlib.sha256(raw).hexdigest()
    assert doc.bytes == len(raw)
    assert doc.images == ()
    (page,) = doc.pages
    assert page.number is None
    assert "\r" not in page.text
    assert "Revenue grew 5% in Q3.\nCosts fell." in page.text


def test_markdown_is_stripped_minimally_and_titled_by_first_heading(tmp_path: Path) -> None:
    md = (
        "Intro line before any heading.\n\n"
        "## The **Graph** Store ##\n\n"
        "We use [FalkorDB](https://falkordb.com/docs(v4)) and *embedded* mode, see "
        "![diagram](img/d.png) and `MATCH (n)`.\n"
        "> Quoted __strong__ text with snake_case_names kept.\n\n"
        "---\n\n"
        "[ref]: https://example.com\n"
        "```\ncode *stays* as is\n```\n"
    )
    path = tmp_path / "guide.md"
    path.write_text(md, encoding="utf-8")
    doc = parse(item(path), LIMIT)
    text = doc.pages[0].text
    assert doc.title == "The Graph Store"
    assert text.splitlines()[2] == "The Graph Store"
    assert "We use FalkorDB and embedded mode, see diagram and MATCH (n)." in text
    assert "Quoted strong text with snake_case_names kept." in text
    assert "code *stays* as is" in text
    for gone in ("#", "**", "https://", "](", "---", "[ref]", "```", "> "):
        assert gone not in text, gone


@pytest.mark.parametrize(
    ("name", "text", "title"),
    [
        # real first lines: libmpfr6's README and httplib2's README.md (Debian)
        (
            "mpfr-notes.txt",
            "Copyright 2000-2023 Free Software Foundation, Inc.\n\nMPFR.\n",
            "mpfr-notes",
        ),
        (
            "httplib2-README.md",
            "Introduction\n============\n\nhttplib2 is a client.\n",
            "httplib2-README",
        ),
        ("setup.md", "# Overview\n\nSteps.\n", "setup"),
        ("run.txt", "#!/bin/sh\necho hi\n", "run"),
        ("pumps.md", "# Feed pump service manual\n\nSteps.\n", "Feed pump service manual"),
        ("tools.md", "## Tools {#tools}\n\n### Go command {#go-command}\n", "Tools"),
    ],
)
def test_a_generic_heading_or_boilerplate_line_is_no_title(
    tmp_path: Path, name: str, text: str, title: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    assert parse(item(path), LIMIT).title == title


@pytest.mark.parametrize(
    ("folder", "name", "first_line", "title"),
    [  # Debian's /usr/share/doc: two packages' copyright files
        ("espeak-ng", "copyright", "This package was debianized by Luke Yelavich on", None),
        ("valgrind", "copyright", "Format: https://www.debian.org/doc/copyright-format/1.0/", None),
        ("valgrind", "AUTHORS", "Julian Seward <jseward@acm.org> was the original author.", None),
        ("pumps", "notes.txt", "Upstream-Name: pumpctl", "notes"),  # a header field, not generic
        ("valgrind", "README", "Release notes for Valgrind", "Release notes for Valgrind"),
        # git's contrib/subtree/README, Go's gophertool README.txt, IO::Socket::SSL's debugging
        ("subtree", "README", "Please read git-subtree.txt for documentation.", None),
        ("gophertool", "README", "To install:", None),
        # cscope's README: a hard-wrapped paragraph, its first line two sentences' words
        (
            "cscope",
            "README",
            "Cscope is a text screen based source browsing tool.  Although it is",
            None,
        ),
        (
            "dr",
            "notes.txt",
            "Dr. Strangelove and the U.S. Air Force",
            "Dr. Strangelove and the U.S. Air Force",
        ),
        (
            "ssl",
            "debugging",
            "- check that IO::Socket::SSL and Net::SSLeay are installed,",
            "debugging",
        ),
        # real first lines of Go's misc/chrome/gophertool/gopher.js and misc/cgo/gmp/pi.go
        (
            "gophertool",
            "gopher.js",
            "// Copyright 2011 The Go Authors. All rights reserved.",
            "gopher",
        ),
        ("gmp", "pi.py", "# (c) 2009 The Go Authors.", "pi"),
        ("git", "README.source", "Git sources for Debian", "Git sources for Debian"),
        # release logs, newest first: the first line heads one release, not the file
        ("valgrind", "NEWS", "Release 3.19.0 (11 Apr 2022)", None),
        (
            "valgrind",
            "changelog.Debian",
            "valgrind (1:3.19.0-1) unstable; urgency=medium",
            # its own extension, which is no file type, as "changelog.Debian.gz" keeps ".Debian"
            "changelog.Debian (valgrind)",
        ),
        ("pumpctl", "CHANGES.md", "# Version 2.1 (2024-05-02)", "CHANGES (pumpctl)"),
        (
            "espeak-ng",
            "changelog.Debian.gz.txt",
            "espeak-ng (1.51+dfsg-10) unstable; urgency=medium",
            "changelog.Debian.gz (espeak-ng)",
        ),
    ],
)
def test_a_first_line_that_is_no_title_gives_the_file_name_and_a_generic_one_its_folder(
    tmp_path: Path, folder: str, name: str, first_line: str, title: str | None
) -> None:
    path = tmp_path / folder / name
    path.parent.mkdir()
    path.write_text(first_line + "\nThe rest of the file.\n", encoding="utf-8")
    (found,) = expand_inputs([str(path)]).items  # plain text, with or without an extension
    assert parse(found, LIMIT).title == (title or f"{name} ({folder})")


DATA = Path(__file__).parents[1] / "data"


def test_markdown_front_matter_titles_the_document_and_heading_attributes_go() -> None:
    """The head of Go's doc/godebug.md: a YAML front matter title, then "## Introduction {#intro}"
    (it was titled "Introduction {#intro}")."""
    (found,) = expand_inputs([str(DATA / "text" / "godebug-head.md")]).items
    doc = parse(found, LIMIT)
    assert doc.title == "Go, Backwards Compatibility, and GODEBUG"
    text = doc.pages[0].text
    assert text.startswith("Go, Backwards Compatibility, and GODEBUG\n")
    assert "\nIntroduction\n" in text
    for gone in ("{#", "layout: article", "title:", "---"):
        assert gone not in text, gone
    _, toml = strip_markdown('+++\ntitle = "Pump notes"\ndate = 2024-01-01\n+++\n# Intro\n')
    assert toml == "Pump notes"
    body, heading = strip_markdown("---\nlayout: page\n---\n# Feed pumps\n")
    assert heading == "Feed pumps" and "layout" not in body


def test_a_generic_first_heading_of_an_html_page_is_no_title() -> None:
    """The head of Go's doc/go_mem.html: no <title>, its first heading "Introduction" (both Go
    manuals were titled "Introduction"); the file name titles it."""
    (found,) = expand_inputs([str(DATA / "formats" / "go_mem_head.html")]).items
    doc = parse(found, LIMIT)
    assert doc.title == "go mem head"
    assert doc.pages[0].text.startswith("Introduction\n")


def test_manifest_title_wins(tmp_path: Path) -> None:
    path = tmp_path / "a.md"
    path.write_text("# Heading\n\nBody.\n", encoding="utf-8")
    assert parse(item(path, title="From manifest"), LIMIT).title == "From manifest"


def test_setext_heading_and_first_line_titles(tmp_path: Path) -> None:
    _, heading = strip_markdown("Title Here\n==========\n\nText.")
    assert heading == "Title Here"
    path = tmp_path / "plain-notes.md"
    path.write_text("#\n\njust words, no heading\n", encoding="utf-8")
    assert parse(item(path), LIMIT).title == "just words, no heading"


def test_zero_byte_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    assert refused(path) == "file is empty (0 bytes)"


def test_latin1_text_is_read_as_windows_1252(tmp_path: Path) -> None:
    path = tmp_path / "latin.txt"
    path.write_bytes("Café au lait\nCosts € 5, “quoted”\n".encode("cp1252"))
    parsed = parse(item(path), LIMIT)
    assert parsed.title == "Café au lait"
    assert parsed.pages[0].text == "Café au lait\nCosts € 5, “quoted”\n"


def test_illegible_text_is_refused_with_the_byte_offset(tmp_path: Path) -> None:
    path = tmp_path / "garbled.txt"
    path.write_bytes(b"First line\n" + bytes(range(0x80, 0x100)) + bytes(range(1, 32)) * 8)
    reason = refused(path)
    assert reason.startswith("not valid UTF-8: byte 0x80 at offset 11 (line 2, column 1),")
    assert "not legible text in a legacy encoding either" in reason


def test_whitespace_or_markup_only_text_is_refused(tmp_path: Path) -> None:
    blank = tmp_path / "blank.txt"
    blank.write_text(" \n\t\n", encoding="utf-8")
    assert refused(blank) == "contains no text (only whitespace)"
    markup = tmp_path / "markup.md"
    markup.write_text("#\n\n---\n\n***\n", encoding="utf-8")
    assert refused(markup) == "contains no text (only whitespace and Markdown markup)"


def test_binary_posing_as_text_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "blob.txt"
    path.write_bytes(b"abc\x00def")
    assert "NUL character at offset 3" in refused(path)


def test_oversized_file_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    with path.open("wb") as f:
        f.truncate(12_300_000)  # sparse: no 12 MB written to disk
    reason = refused(path, max_bytes=10_000_000)
    assert reason.startswith("file is 12.3 MB, over the 10.0 MB limit (KGRAG_MAX_FILE_BYTES)")


def test_file_just_over_limit_shows_bytes(tmp_path: Path) -> None:
    path = tmp_path / "edge.txt"
    path.write_bytes(b"a" * 1001)
    assert refused(path, max_bytes=1000).startswith(
        "file is 1,001 bytes, over the 1,000 byte limit"
    )


def test_missing_file_is_refused(tmp_path: Path) -> None:
    assert refused(tmp_path / "gone.txt").startswith("cannot read file:")


# ----------------------------------------------------------------------------------------- pdf


def test_pdf_text_per_page_images_and_metadata_title(tmp_path: Path) -> None:
    path = write_pdf(
        tmp_path / "paper.pdf",
        [
            "Knowledge graphs. Page one talks about (nodes) and edges.",
            "Page two shows a red circle in Figure 1.",
            "Page three has no picture.",
        ],
        [(2, figure(160, 120, "red")), (2, figure(64, 48, "blue"))],
        title="A Paper on Graphs",
    )
    doc = parse(item(path), LIMIT)
    assert doc.title == "A Paper on Graphs"
    assert [p.number for p in doc.pages] == [1, 2, 3]
    assert "Page one talks about (nodes) and edges." in doc.pages[0].text
    assert "red circle in Figure 1." in doc.pages[1].text
    assert [(i.page, i.width, i.height) for i in doc.images] == [(2, 160, 120), (2, 64, 48)]
    first = doc.images[0]
    assert first.path is None and first.data is not None
    with Image.open(io.BytesIO(first.data)) as decoded:
        assert decoded.size == (160, 120)
        assert decoded.convert("RGB").getpixel((80, 60)) == (255, 0, 0)
    assert doc.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_pdf_running_headers_and_page_numbers_are_left_out(tmp_path: Path) -> None:
    """A manual's running header (its chapter's title atop every page) ran into the page's
    first sentence, and the footer (the page number) became a word of its last sentence: both
    are left out of the page's text."""
    body = [
        "The pump is primed before it starts.",
        "Bearings are greased every month.",
        "Seals are replaced every year.",
        "A worn impeller is replaced, not repaired.",
    ]
    pages = [f"Pump maintenance guide\n\n{text}\n\nPage {n} of 4" for n, text in enumerate(body, 1)]
    path = write_pdf(tmp_path / "guide.pdf", pages, title="Pump maintenance")
    doc = parse(item(path), LIMIT)
    assert [" ".join(p.text.split()) for p in doc.pages] == body
    # fewer pages than a running line needs, or a line that differs from page to page: as is
    two = parse(item(write_pdf(tmp_path / "two.pdf", pages[:2])), LIMIT)
    assert "Pump maintenance guide" in two.pages[0].text and "Page 1 of 4" in two.pages[0].text
    mixed = [f"Section {w}\n\n{text}\n\n}}" for w, text in zip("ABCD", body, strict=True)]
    kept = parse(item(write_pdf(tmp_path / "mixed.pdf", mixed)), LIMIT)
    assert [p.text.split()[:2] for p in kept.pages] == [["Section", w] for w in "ABCD"]
    assert all(p.text.rstrip().endswith("}") for p in kept.pages)  # a code block's brace


def test_valgrind_manual_running_header_is_left_out(tmp_path: Path) -> None:
    """The real manual (this machine's /usr/share/doc): page 87 began "Memcheck: a memory error
    detector The last part of any suppression ..." and ended in its page number, "75". Parsed
    from pages 85-89 of the manual as they are (the whole manual's 397 pages took 30 s): five
    pages of the Memcheck chapter, each with that header and its page number."""
    doc = parse(item(manual_excerpt(tmp_path, range(85, 90))), 50_000_000)
    page = next(p for p in doc.pages if "Details of Memcheck's checking machinery\nRead" in p.text)
    lines = page.text.strip().split("\n")
    assert lines[0].startswith("The last part of any suppression"), lines[:2]
    assert lines[-1] != "75" and "Memcheck: a memory error detector" not in lines, lines[-2:]
    assert doc.title == "Valgrind Documentation"


def test_pdf_title_from_first_line_without_metadata(tmp_path: Path) -> None:
    path = write_pdf(tmp_path / "untitled.pdf", ["Annual Summary\n\nSome text follows here."])
    assert parse(item(path), LIMIT).title == "Annual Summary"


def test_pdf_with_only_an_image_is_kept(tmp_path: Path) -> None:
    path = write_pdf(tmp_path / "scan.pdf", [""], [(1, figure())])
    doc = parse(item(path), LIMIT)
    assert doc.pages == ()
    assert len(doc.images) == 1
    assert doc.title == "scan"


def test_truncated_pdf_is_refused(tmp_path: Path) -> None:
    path = write_truncated_pdf(tmp_path / "cut.pdf", ["Some text on a page."])
    assert refused(path).startswith("corrupt or unreadable PDF")


def test_not_a_pdf_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "fake.pdf"
    path.write_text("this is plain text with a .pdf name", encoding="utf-8")
    assert refused(path) == "not a PDF (no %PDF- header)"


def test_pdf_without_text_or_images_is_refused(tmp_path: Path) -> None:
    path = write_blank_pdf(tmp_path / "blank.pdf", page_count=2)
    reason = refused(path)
    assert reason.startswith("PDF has no extractable text and no images on its 2 page(s)")


# --------------------------------------------------------------------------------------- image


def test_image_dimensions_and_caption_from_manifest(tmp_path: Path) -> None:
    path = tmp_path / "shape.png"
    figure(96, 64).save(path)
    doc = parse(item(path, title="a red circle"), LIMIT)
    assert doc.pages == ()
    (image,) = doc.images
    assert (image.path, image.width, image.height, image.data) == (path, 96, 64, None)
    assert image.caption == "a red circle"
    assert doc.title == "a red circle"
    assert parse(item(path), LIMIT).title == "shape"


@pytest.mark.parametrize("suffix", [".jpg", ".webp", ".gif", ".bmp", ".tiff"])
def test_other_image_formats(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"img{suffix}"
    figure(40, 30).save(path)
    (image,) = parse(item(path), LIMIT).images
    assert (image.width, image.height) == (40, 30)


def test_an_icon_file_is_a_picture_of_its_largest_size(tmp_path: Path) -> None:
    """Prometheus' favicon.ico (16, 32 and 48 pixels) was skipped as "not text"."""
    path = tmp_path / "favicon.ico"
    figure(64, 64).save(path, sizes=[(16, 16), (32, 32), (48, 48)])
    (found,) = expand_inputs([str(path)]).items
    assert found.modality == "image"
    (image,) = parse(found, LIMIT).images
    assert (image.width, image.height) == (48, 48)


def test_truncated_png_is_refused(tmp_path: Path) -> None:
    buf = io.BytesIO()
    Image.effect_noise((128, 128), 64).convert("RGB").save(buf, format="PNG")
    data = buf.getvalue()
    path = tmp_path / "cut.png"
    path.write_bytes(data[: len(data) // 2])
    assert refused(path).startswith("corrupt image:")


def test_garbage_image_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "noise.jpg"
    path.write_bytes(b"definitely not a jpeg" * 10)
    assert refused(path) == "not a readable image (unknown or damaged format)"


def test_degenerate_image_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "line.png"
    Image.new("RGB", (300, 2), "black").save(path)
    assert refused(path) == "image is 300x2 pixels; images need at least 16 pixels on each side"


# --------------------------------------------------------------------------------------- audio


def test_wav_is_hashed_not_decoded(tmp_path: Path) -> None:
    path = tmp_path / "tone.wav"
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(b"\x00\x01" * 1600)
    doc = parse(item(path, title="A tone"), LIMIT)
    assert (doc.title, doc.pages, doc.images) == ("A tone", (), ())
    assert doc.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert doc.source.modality == "audio"


def test_text_posing_as_audio_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "speech.mp3"
    path.write_text("not audio at all", encoding="utf-8")
    assert refused(path) == (
        "does not look like a .mp3 file (expected an ID3 tag or an MPEG frame header)"
    )
    empty = tmp_path / "silence.flac"
    empty.write_bytes(b"")
    assert refused(empty) == "file is empty (0 bytes)"


def test_other_names_of_known_types(tmp_path: Path) -> None:
    """.markdown is Markdown, .tsv a table, .tif a TIFF picture."""
    notes = tmp_path / "notes.markdown"
    notes.write_text("# Site notes\n\nThe **gate** is locked at six.\n", encoding="utf-8")
    parsed = parse(item(notes), LIMIT)
    assert parsed.title == "Site notes" and "The gate is locked at six." in parsed.pages[0].text
    rows = tmp_path / "rota.tsv"
    rows.write_text("name\tday\nAda\tMonday\nBrian\tWednesday\n", encoding="utf-8")
    (table,) = parse(item(rows), LIMIT).tables
    assert table.header == ("name", "day") and table.rows == (
        ("Ada", "Monday"),
        ("Brian", "Wednesday"),
    )
    scan = tmp_path / "scan.tif"
    Image.new("RGB", (64, 48), "white").save(scan, format="TIFF")
    assert [(i.width, i.height) for i in parse(item(scan), LIMIT).images] == [(64, 48)]


def test_an_xpm_icon_is_a_picture_not_c_text() -> None:
    """Debian's /usr/share/pixmaps/python3.11.xpm (an X PixMap: a C array of pixels) was a text
    document titled "/* XPM */" whose passages were rows of pixel characters."""
    path = DATA / "formats" / "python3.11.xpm"
    (found,) = expand_inputs([str(path)]).items
    assert (found.modality, found.mime) == ("image", "image/x-xpixmap")
    if not _pillow_reads(path):
        # Pillow reads XPM files of two characters per pixel from 13.0 on; an older one (the
        # lowest pyproject.toml allows) fails the picture by name, never reads it as text
        with pytest.raises(IngestError, match=r"python3\.11\.xpm"):
            parse(found, LIMIT)
        return
    doc = parse(found, LIMIT)
    assert doc.title == "python3.11" and doc.pages == ()
    (image,) = doc.images
    assert (image.width, image.height) == (32, 32)


def _pillow_reads(path: Path) -> bool:
    from PIL import Image

    try:
        with Image.open(path) as img:
            img.load()
    except (OSError, ValueError, SyntaxError, KeyError):  # KeyError: Pillow 11.3 to 12
        return False
    return True
