"""Bad document files made from the good fixtures of tests/data/formats: a truncated download, zip
bombs (a huge declared total, a member of one repeated byte), tables of a million empty cells,
an oversized HTML page. Each is a real file of its format, damaged the way such files are."""

from __future__ import annotations

import zipfile
from pathlib import Path

FORMATS = Path(__file__).resolve().parent.parent / "data" / "formats"

__all__ = [
    "FORMATS",
    "bomb_total",
    "huge_html",
    "million_cell_docx",
    "million_cell_html",
    "million_cell_odt",
    "one_byte_bomb",
    "rezip",
    "truncated",
]


def rezip(source: Path, target: Path, replace: dict[str, bytes] | None = None) -> Path:
    """``source``'s members copied into ``target`` (deflated), with some contents replaced."""
    replace = replace or {}
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
        for info in zin.infolist():
            out.writestr(info.filename, replace.get(info.filename, zin.read(info.filename)))
    return target


def truncated(source: Path, target: Path) -> Path:
    """The first half of ``source``: a partial download, no central directory."""
    data = source.read_bytes()
    target.write_bytes(data[: len(data) // 2])
    return target


def _zero_member(out: zipfile.ZipFile, name: str, megabytes: int) -> None:
    chunk = bytes(1024 * 1024)
    info = zipfile.ZipInfo(name)
    info.compress_type = zipfile.ZIP_DEFLATED
    with out.open(info, "w", force_zip64=True) as f:
        for _ in range(megabytes):
            f.write(chunk)


def bomb_total(source: Path, target: Path, megabytes: int = 300) -> Path:
    """``source`` plus ``megabytes`` of zeros in members of 60 MB, each deflated ~1000:1: the
    directory declares more than the unpacked limit (a few hundred KB on disk)."""
    rezip(source, target)
    with zipfile.ZipFile(target, "a", zipfile.ZIP_DEFLATED) as out:
        for n in range(0, megabytes, 60):
            _zero_member(out, f"word/media/padding{n}.bin", min(60, megabytes - n))
    return target


def one_byte_bomb(source: Path, target: Path, member: str, megabytes: int = 8) -> Path:
    """``source`` with ``member`` replaced by ``megabytes`` of zeros (deflates ~1000:1)."""
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as out:
        for info in zin.infolist():
            if info.filename == member:
                _zero_member(out, member, megabytes)
            else:
                out.writestr(info.filename, zin.read(info.filename))
    return target


def million_cell_docx(target: Path) -> Path:
    """lighthouse.docx whose table is replaced by 1,000 rows of 1,000 empty cells."""
    source = FORMATS / "lighthouse.docx"
    with zipfile.ZipFile(source) as z:
        xml = z.read("word/document.xml").decode()
    start, end = xml.index("<w:tbl>"), xml.index("</w:tbl>") + len("</w:tbl>")
    row = "<w:tr>" + "<w:tc><w:p/></w:tc>" * 1000 + "</w:tr>"
    table = "<w:tbl>" + row * 1000 + "</w:tbl>"
    return rezip(source, target, {"word/document.xml": (xml[:start] + table + xml[end:]).encode()})


def million_cell_odt(target: Path) -> Path:
    """orchard.odt whose table gets 1,000 rows of 1,000 empty cells, written the way LibreOffice
    writes formatted empty cells: one element repeated (``number-columns-repeated``)."""
    source = FORMATS / "orchard.odt"
    with zipfile.ZipFile(source) as z:
        xml = z.read("content.xml").decode()
    end = xml.index("</table:table>")
    padding = (
        '<table:table-row table:number-rows-repeated="1000">'
        '<table:table-cell table:number-columns-repeated="1000"/></table:table-row>'
    )
    return rezip(source, target, {"content.xml": (xml[:end] + padding + xml[end:]).encode()})


def million_cell_html(target: Path) -> Path:
    """A page whose table has 1,000 rows of 1,000 empty cells (about 10 MB)."""
    row = "<tr>" + "<td></td>" * 1000 + "</tr>\n"
    target.write_text(
        "<html><head><title>Empty grid</title></head><body><p>A grid.</p><table>"
        + row * 1000
        + "</table></body></html>",
        encoding="utf-8",
    )
    return target


def huge_html(target: Path, megabytes: int = 50) -> Path:
    """A 50 MB page of paragraphs (a log dumped as HTML)."""
    para = "<p>" + "x" * 1000 + "</p>\n"
    with target.open("w", encoding="utf-8") as f:
        f.write("<html><head><title>Dump</title></head><body>\n")
        for _ in range(megabytes * 1024):
            f.write(para)
        f.write("</body></html>\n")
    return target
