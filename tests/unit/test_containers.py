"""Containers without a store: the bounds of ContainerLimits on real archives (member count,
total size, per-file size), multi-member gzip, HTML-only and hostile-named e-mail attachments,
AsciiDoc's include lines, and the text sniffing of extension-less files."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import tarfile
import zipfile
from email.message import EmailMessage
from pathlib import Path

import pytest

from kgrag.ingest.containers.expand import ContainerLimits, parse_all
from kgrag.ingest.formats.asciidoc import asciidoc_text
from kgrag.ingest.models import ParsedInputs, SourceItem
from kgrag.ingest.sniff import looks_like_text
from kgrag.ingest.sources import expand_inputs

DATA = Path(__file__).resolve().parent.parent / "data" / "containers"


def _parse(path: Path, limits: ContainerLimits | None = None) -> ParsedInputs:
    (item,) = expand_inputs([str(path)]).items
    return parse_all(item, 10_000_000, limits=limits)


def _failures(result: ParsedInputs) -> dict[str, str]:
    return {Path(r.path).name: r.reason for r in result.refused if r.explicit}


def test_too_many_members_refuse_the_whole_archive() -> None:
    result = _parse(DATA / "good" / "docs.zip", ContainerLimits(max_members=3))
    assert result.documents == ()
    assert "over 3 members" in _failures(result)["docs.zip"]


def test_an_archive_expanding_past_the_total_is_refused_whole() -> None:
    result = _parse(DATA / "good" / "manuals.tar.gz", ContainerLimits(max_total_bytes=60))
    assert result.documents == ()
    assert "expands to over" in _failures(result)["manuals.tar.gz"]


def test_a_member_over_the_per_file_limit_fails_alone(tmp_path: Path) -> None:
    archive = tmp_path / "mixed.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("big.txt", "word " * 2000)
        z.writestr("small.txt", "Hoist H-3 is rated for 2 tonnes.\n")
    result = _parse(archive, ContainerLimits(max_member_bytes=1000))
    assert "per-file limit" in _failures(result)["mixed.zip!big.txt"]
    assert [Path(d.source.path).name for d in result.documents] == [
        "mixed.zip",
        "mixed.zip!small.txt",
    ]


def test_a_gzip_of_several_members_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "log.txt.gz"
    path.write_bytes(gzip.compress(b"first part, ") + gzip.compress(b"second part\n"))
    (doc,) = _parse(path).documents
    assert doc.pages[0].text == "first part, second part\n"
    assert str(doc.source.path) == str(path) and doc.parent is None


COMPRESSORS = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}


@pytest.mark.parametrize("suffix", [".bz2", ".xz"])
def test_a_bzip2_or_xz_file_of_several_streams_is_read_whole(tmp_path: Path, suffix: str) -> None:
    squeeze = COMPRESSORS[suffix]
    path = tmp_path / f"log.txt{suffix}"
    path.write_bytes(squeeze(b"first part, ") + squeeze(b"second part\n"))
    (doc,) = _parse(path).documents
    assert doc.pages[0].text == "first part, second part\n"
    assert str(doc.source.path) == str(path) and doc.parent is None


@pytest.mark.parametrize("suffix", [".tar.bz2", ".tar.xz", ".tbz2", ".txz"])
def test_a_tar_compressed_by_bzip2_or_xz_gives_its_members(tmp_path: Path, suffix: str) -> None:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        for name, text in [("guide/pump.md", "# Pump P-4\n\nRated 40 bar.\n"), ("a.txt", "A\n")]:
            info = tarfile.TarInfo(name)
            info.size = len(text.encode())
            tar.addfile(info, io.BytesIO(text.encode()))
    squeeze = COMPRESSORS[".bz2" if "bz" in suffix else ".xz"]
    path = tmp_path / f"kit{suffix}"
    path.write_bytes(squeeze(raw.getvalue()))
    result = _parse(path)
    names = [str(d.source.path).removeprefix(str(tmp_path) + "/") for d in result.documents]
    assert names == [f"kit{suffix}", f"kit{suffix}!guide/pump.md", f"kit{suffix}!a.txt"]
    assert "Rated 40 bar." in result.documents[1].pages[0].text


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz"])
def test_a_compressed_bomb_is_refused_before_it_is_inflated(tmp_path: Path, suffix: str) -> None:
    """64 MiB of zeros squeezed to a few KiB: refused at the 200:1 ratio, naming the format."""
    path = tmp_path / f"zeros.txt{suffix}"
    path.write_bytes(COMPRESSORS[suffix](bytes(64 << 20)))
    assert path.stat().st_size < 200_000
    result = _parse(path)
    assert result.documents == ()
    name = {".gz": "gzip", ".bz2": "bzip2", ".xz": "xz"}[suffix]
    assert f"(a {name} bomb?)" in _failures(result)[path.name]


@pytest.mark.parametrize(
    ("suffix", "reason"),
    [(".bz2", "bzip2 data ends early (truncated?)"), (".xz", "xz data ends early (truncated?)")],
)
def test_a_truncated_bzip2_or_xz_file_fails_by_name(
    tmp_path: Path, suffix: str, reason: str
) -> None:
    whole = COMPRESSORS[suffix](("Valve V-7 opens at 3 bar. " * 400).encode())
    path = tmp_path / f"notes.txt{suffix}"
    path.write_bytes(whole[: len(whole) // 2])
    assert _failures(_parse(path))[path.name] == reason


def test_a_file_named_xz_that_is_not_xz_fails_by_name(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt.xz"
    path.write_bytes(gzip.compress(b"not xz at all\n"))
    assert _failures(_parse(path))[path.name] == "not xz data (no xz header)"


def test_html_only_mail_and_attachment_names_with_folders(tmp_path: Path) -> None:
    msg = EmailMessage()
    msg["From"], msg["Subject"] = "ops@example.org", "Pump alarm"
    msg.set_content("<html><body><p>Pump <b>P-4</b> tripped at 03:00.</p></body></html>", "html")
    msg.add_attachment(b"Trip log of P-4.\n", "text", "plain", filename="../../etc/trip.txt")
    path = tmp_path / "alarm.eml"
    path.write_bytes(msg.as_bytes())
    message, attachment = _parse(path).documents
    assert "Pump P-4 tripped at 03:00." in message.pages[0].text
    assert message.title == "Pump alarm"
    assert str(attachment.source.path) == f"{path}!trip.txt"
    assert attachment.parent is not None and attachment.parent.relation == "ATTACHED_TO"


def test_asciidoc_include_lines_are_dropped_not_followed() -> None:
    text, title = asciidoc_text("= Guide\n\ninclude::/etc/passwd[]\n\nBody *text*.\n")
    assert title == "Guide"
    assert "passwd" not in text and "Body text." in text


@pytest.mark.parametrize(
    ("head", "text"),
    [
        (b"README for psmisc\n=====\n", True),
        ("naïve café".encode()[:-1], True),  # a character cut by the window
        (b"\x7fELF\x02\x01\x01\x00\x00", False),
        ("café au lait".encode("latin-1"), True),  # read as Windows-1252
        ("Привет, как дела? Это документ.".encode("cp1251"), True),
        ("naïve".encode("utf-16"), True),  # its byte-order mark says so, NULs and all
        (bytes(range(0x80, 0x100)) + bytes(range(1, 32)) * 8, False),  # legible in nothing
        (b"function f(a){return a+1};" * 200, False),  # minified: one line of 5,400 chars
        (b"function f(a) {\n  return a + 1;\n}\n" * 200, True),  # the same, as written
        (bytes(range(1, 32)) * 4, False),
        (b"", True),  # empty: text, then skipped as empty by the parser
        # PostScript: a program drawing pages ("(Valgrind) show" is not prose)
        (b"%!PS-Adobe-3.0\n%%Title: manual.dvi\n/Valgrind (User Manual) show\n", False),
        (b"{\\rtf1\\ansi\\deff0 {\\fonttbl {\\f0 Times;}} Hello}\n", False),  # RTF markup
    ],
)
def test_sniffing_text(head: bytes, text: bool) -> None:
    assert looks_like_text(head) is text


def test_an_extensionless_binary_is_an_unsupported_skip(tmp_path: Path) -> None:
    (tmp_path / "blob").write_bytes(b"\x00\x01\x02binary")
    (tmp_path / "NOTES").write_text("Plain notes.\n")
    found = expand_inputs([str(tmp_path)])
    assert [Path(i.path).name for i in found.items] == ["NOTES"]
    (refused,) = found.rejected
    assert refused.kind == "unsupported_type" and "not text" in refused.reason


def test_members_route_through_the_format_registry(tmp_path: Path) -> None:
    archive = tmp_path / "docs.zip"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        # (a heading "Title" alone is generic: it titles no document)
        z.writestr("guide.rst", "Valve guide\n===========\n\nThe valve V-9 is *closed*.\n")
        z.writestr("book.adoc", "= Book\n\nChapter text.\n")
    archive.write_bytes(buffer.getvalue())
    docs = {Path(d.source.path).name: d for d in _parse(archive).documents}
    assert docs["docs.zip!guide.rst"].source.mime == "text/x-rst"
    assert docs["docs.zip!guide.rst"].title == "Valve guide"
    assert "The valve V-9 is closed." in docs["docs.zip!guide.rst"].pages[0].text
    assert docs["docs.zip!book.adoc"].title == "Book"


def test_source_items_of_members_never_name_a_file(tmp_path: Path) -> None:
    result = _parse(DATA / "bad" / "traversal.zip")
    for doc in result.documents:
        assert isinstance(doc.source, SourceItem)
    assert not (DATA / "escape.txt").exists() and not Path("/etc/cron.d/evil").exists()


@pytest.mark.parametrize(
    ("name", "none"),
    [
        ("README", True),
        ("README.Debian", True),
        ("changelog.Debian.amd64", True),
        ("v2.13-ReleaseNotes", True),
        ("notes.txt", False),
        ("script.sh", False),
        ("data.xyz", False),
    ],
)
def test_names_without_an_extension(name: str, none: bool) -> None:
    from kgrag.ingest.sniff import has_no_extension

    assert has_no_extension(Path(name)) is none


@pytest.mark.parametrize(
    ("name", "sniffed"),
    [("main.c", True), ("app.js", True), ("README", True), ("site.css", False), ("a.svg", False)],
)
def test_style_sheets_and_drawings_are_not_read_as_text(name: str, sniffed: bool) -> None:
    from kgrag.ingest.sniff import may_be_text

    assert may_be_text(Path(name)) is sniffed


def test_a_postscript_file_plain_or_compressed_is_skipped_saying_how_to_read_it(
    tmp_path: Path,
) -> None:
    """valgrind_manual.ps.gz of Debian's valgrind docs was read as text: its passages were
    drawing commands, quoted as answers about Valgrind."""
    postscript = b"%!PS-Adobe-3.0\n%%Title: valgrind_manual.dvi\n(Valgrind User Manual) show\n"
    (tmp_path / "manual.ps").write_bytes(postscript)
    (tmp_path / "MANUAL").write_bytes(postscript)  # no extension: sniffed, and not text
    (tmp_path / "manual2.ps.gz").write_bytes(gzip.compress(postscript))
    expanded = expand_inputs([str(tmp_path)])
    reasons = {Path(r.path).name: r.reason for r in expanded.rejected}
    assert reasons["manual.ps"] == (
        "unsupported file type '.ps': a PostScript file: convert it to PDF (ps2pdf)"
    )
    assert reasons["MANUAL"].startswith("unsupported file type (no extension) and not text")
    (item,) = expanded.items  # a .gz is opened to see what it holds
    result = parse_all(item, 10_000_000)
    assert result.documents == ()
    (refused,) = result.refused
    assert (refused.kind, refused.reason) == (
        "unsupported_type",
        "a gzip-compressed unsupported file type '.ps': a PostScript file: convert it to PDF "
        "(ps2pdf)",
    )
