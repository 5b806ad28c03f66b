"""SVG drawings read as pictures (kgrag.ingest.formats.svg): drawn within bounds, their words kept,
links out of the file dropped, bad files refused naming what is wrong. Real files: a diagram from
this machine (tests/data/svg) and drawings written here."""

from __future__ import annotations

import gzip
import hashlib
import io
import time
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("resvg_py", reason="the image extra (resvg-py) is not installed")

from PIL import Image

from kgrag.errors import IngestError
from kgrag.ingest.containers.expand import parse_all
from kgrag.ingest.formats.svg import PROBE_SIDE, RASTER_SIDE, read_svg
from kgrag.ingest.models import ParsedInputs
from kgrag.ingest.sources import expand_inputs, file_type

REAL = Path(__file__).resolve().parents[1] / "data" / "svg" / "dependencies.svg"
SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}">{body}</svg>'


def _svg(tmp_path: Path, body: str, w: str = "40", h: str = "40", head: str = "") -> Path:
    path = tmp_path / "drawing.svg"
    path.write_text(head + SVG.format(w=w, h=h, body=body), "utf-8")
    return path


def test_an_svg_is_an_image_type() -> None:
    assert file_type(".svg") == ("image", "image/svg+xml")
    assert file_type(".SVG") == ("image", "image/svg+xml")


def test_a_real_diagram_is_drawn_fitted_and_its_labels_kept() -> None:
    drawing = read_svg(REAL, REAL.read_bytes())
    # 65 x 24 cm (2457 x 907 CSS pixels): fitted into the raster side, aspect kept
    assert drawing.width == RASTER_SIDE and abs(drawing.height - 378) <= 1
    assert "postgresql-client-common:all M-A:foreign" in drawing.words
    assert "libpq5:amd64 M-A:same" in drawing.words
    with Image.open(io.BytesIO(drawing.png)) as img:
        assert img.format == "PNG" and img.size == (drawing.width, drawing.height)


def test_title_desc_and_text_are_the_words_and_a_tooltip_is_not(tmp_path: Path) -> None:
    body = (
        "<title>Kestrel Harbour logo</title><desc>A red lighthouse.</desc>"
        "<g><title>tooltip of a group</title>"
        '<text x="2" y="20">Quayside <tspan>Marine</tspan></text>'
        '<text x="2" y="30">Quayside Marine</text></g>'
    )
    drawing = read_svg(tmp_path / "logo.svg", _svg(tmp_path, body).read_bytes())
    assert drawing.title == "Kestrel Harbour logo"
    assert drawing.words == ("Kestrel Harbour logo", "A red lighthouse.", "Quayside Marine")


def test_a_small_icon_is_drawn_large_on_white(tmp_path: Path) -> None:
    body = '<rect x="4" y="4" width="8" height="8" fill="#000"/>'
    drawing = read_svg(tmp_path / "icon.svg", _svg(tmp_path, body, "16", "16").read_bytes())
    assert (drawing.width, drawing.height) == (RASTER_SIDE, RASTER_SIDE)
    with Image.open(io.BytesIO(drawing.png)) as img:
        rgb = img.convert("RGB")
        assert rgb.getpixel((10, 10)) == (255, 255, 255)  # transparent: white, not black
        assert rgb.getpixel((512, 512)) == (0, 0, 0)


def test_a_drawing_huge_in_its_own_units_is_drawn_within_bounds(tmp_path: Path) -> None:
    body = '<rect width="100%" height="100%" fill="#36c"/>'
    path = _svg(tmp_path, body, "100000", "50000")
    drawing = read_svg(path, path.read_bytes())
    assert (drawing.width, drawing.height) == (RASTER_SIDE, RASTER_SIDE // 2)


def test_a_link_out_of_the_file_is_not_followed(tmp_path: Path) -> None:
    black = tmp_path / "black.png"
    Image.new("RGB", (40, 40), (0, 0, 0)).save(black)
    body = f'<image href="{black}" width="40" height="40"/>'
    body += f'<image xlink:href="file://{black}" width="40" height="40"/>'
    path = _svg(tmp_path, body)
    path.write_text(
        path.read_text().replace("<svg ", '<svg xmlns:xlink="http://www.w3.org/1999/xlink" '),
        "utf-8",
    )
    drawing = read_svg(path, path.read_bytes())
    with Image.open(io.BytesIO(drawing.png)) as img:
        assert img.convert("RGB").getpixel((512, 512)) == (255, 255, 255)


def test_an_external_entity_is_not_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("launch code 0000", "utf-8")
    head = f'<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x SYSTEM "file://{secret}">]>'
    path = _svg(tmp_path, "<text>&x;</text><title>Plan</title>", head=head)
    with pytest.raises(IngestError, match="not valid XML") as raised:
        read_svg(path, path.read_bytes())
    assert "launch" not in raised.value.reason


def test_entities_that_expand_a_billion_times_are_refused(tmp_path: Path) -> None:
    laughs = "".join(
        f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">' for i in range(8)
    )
    head = f'<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa">{laughs}]>'
    path = _svg(tmp_path, "<text>&i;</text>", head=head)
    with pytest.raises(IngestError, match="amplification"):
        read_svg(path, path.read_bytes())


def test_internal_entities_as_illustrator_writes_them_are_expanded(tmp_path: Path) -> None:
    head = '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY company "Kestrel Harbour">]>'
    path = _svg(tmp_path, "<title>&company; logo</title>", head=head)
    assert read_svg(path, path.read_bytes()).title == "Kestrel Harbour logo"


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (REAL.read_bytes()[:5000], "corrupt SVG: not valid XML"),
        (b"These are meeting notes, not a drawing.\n", "corrupt SVG: not valid XML"),
        (b"\x89PNG\r\n\x1a\n" + bytes(64), "not an SVG drawing: the file is a PNG image"),
        (b"\x1f\x8b\x08\x00" + bytes(32), "gzip-compressed"),
        (b"<html><body><p>A page.</p></body></html>", "its root element is <html>, not <svg>"),
        (SVG.format(w="1000", h="1", body="").encode(), "pictures need at least 16 pixels"),
    ],
)
def test_a_bad_svg_is_refused_naming_the_file_and_what_is_wrong(
    tmp_path: Path, data: bytes, reason: str
) -> None:
    path = tmp_path / "bad.svg"
    with pytest.raises(IngestError) as raised:
        read_svg(path, data)
    assert raised.value.path == str(path)
    assert reason in raised.value.reason


SLOW = Path("/usr/share/icons/Adwaita/scalable/legacy/preferences-desktop-appearance-symbolic.svg")


@pytest.mark.skipif(not SLOW.is_file(), reason="Debian's adwaita-icon-theme is not installed")
def test_a_drawing_too_slow_to_draw_large_is_kept_small() -> None:
    """Nine masks and a filter over embedded 1024x800 photographs: 72 s to draw at 1,024 pixels
    here, 4.5 s at 256 (the time grows with the pixels)."""
    t0 = time.perf_counter()
    drawing = read_svg(SLOW, SLOW.read_bytes())
    assert time.perf_counter() - t0 < 30
    assert max(drawing.width, drawing.height) in (PROBE_SIDE, RASTER_SIDE)


SVGZ = REAL.parent / "libreoffice-basic.svgz"


def _parsed(path: Path) -> ParsedInputs:
    (item,) = expand_inputs([str(path)]).items
    return parse_all(item, 10_000_000)


def test_a_gzipped_drawing_is_read_as_its_svg(tmp_path: Path) -> None:
    """An .svgz (LibreOffice Basic's icon, gzipped as icon themes ship them): before, skipped as
    an unsupported type."""
    assert file_type(".svgz") is not None
    path = tmp_path / SVGZ.name
    path.write_bytes(SVGZ.read_bytes())
    (doc,) = _parsed(path).documents
    assert (doc.source.modality, doc.source.mime) == ("image", "image/svg+xml")
    assert doc.title == "libreoffice-basic" and len(doc.images) == 1
    assert doc.images[0].width == doc.images[0].height == RASTER_SIDE
    assert doc.sha256 == hashlib.sha256(gzip.decompress(SVGZ.read_bytes())).hexdigest()


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        # 20 MB of spaces in 19 KB: stopped after a megabyte, not inflated
        ("bomb.svgz", lambda: gzip.compress(b" " * 20_000_000, 9), "a gzip bomb?"),
        ("cut.svgz", lambda: SVGZ.read_bytes()[:1000], "gzip data ends early (truncated?)"),
        ("noise.svgz", lambda: bytes(range(256)), "not gzip data (no gzip header)"),
        ("notes.svgz", lambda: gzip.compress(b"Meeting notes.\n"), "corrupt SVG: not valid XML"),
    ],
)
def test_a_bad_svgz_fails_alone_naming_the_file(
    tmp_path: Path, name: str, content: Callable[[], bytes], reason: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content())
    parsed = _parsed(path)
    assert parsed.documents == ()
    (failure,) = parsed.refused
    assert failure.path == str(path) and reason in failure.reason
