"""Regenerate the document fixtures of tests/data/formats with real tools (pandoc).

    python scripts/make_format_fixtures.py [--out tests/data/formats]

Needs pandoc (Debian: ``apt-get install pandoc``) and Pillow. Writes ``lighthouse.docx``,
``orchard.odt``, ``review.pptx`` (speaker notes, a table, a picture), ``clockmaker.epub``
(three chapters) from Markdown written here, and ``ferry.html`` (a page with navigation, header
and footer around its article) by hand. With LibreOffice (``apt-get install
libreoffice-writer-nogui libreoffice-impress-nogui``) it also writes LibreOffice's own versions:
``lighthouse_lo.odt`` and ``orchard_lo.docx`` (Writer converting pandoc's files) and
``review_lo.pptx`` (Impress saving pandoc's deck as .odp, then as .pptx). The generated files
are committed, so the tests need neither tool; rerun this only to change them (keep each under
100 KB).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image, ImageDraw

ROOT = Path(__file__).resolve().parent.parent

LIGHTHOUSE = """---
title: Lighthouse Keeping Manual
---

# Lamp Room

The lamp room of the Gullrock lighthouse is cleaned every Tuesday by the duty keeper.
Soot on the lens reduces the range of the beam by a tenth.

![Lens diagram of the Gullrock lamp](lens.png)

# Daily Checks

- Wind the clockwork rotation motor
- Trim the wick to a flat edge
  - Use the brass scissors kept in drawer B
- Log the barometer reading

1. Open the shutters at dusk
2. Light the lamp from the lower gallery

# Lamp Wattage

| Lamp | 2022 | 2023 |
|------|------|------|
| Main beacon | 1000 W | 1200 W |
| Fog signal lamp | 250 W | 300 W |

The wattage figures come from the harbour authority's annual audit.
"""

ORCHARD = """---
title: Orchard Survey of Pellworth Farm
---

# Apple Varieties

The Pellworth orchard grows heritage apples on a north-facing slope.

![Tree rows of the north slope](rows.png)

# Pruning Calendar

- Prune the Bramley trees in late January
- Thin the russets after the June drop

# Harvest Yields

| Variety | Trees | Tonnes in 2023 |
|---------|-------|----------------|
| Bramley | 40 | 12.5 |
| Egremont Russet | 25 | 6.75 |
"""

REVIEW = """---
title: Quarterly Review of the Ferry Service
---

## Service Overview

- Three ferries crossed the estuary daily
- Punctuality improved after the timetable change

::: notes
The Kestrel pump contract was renewed with Barrowdale Engineering for two years.
:::

## Crossings per Vessel

| Vessel | Q1 | Q2 |
|--------|----|----|
| Osprey | 410 | 455 |
| Heron | 380 | 402 |

## Dock Photograph

![Dock at Saltmarsh Quay](dock.png)

::: notes
The photograph was taken at Saltmarsh Quay before the repaint.
:::
"""

CLOCKMAKER = """---
title: The Clockmaker's Guide
lang: en
---

# Escapements

The anchor escapement was the first used in the workshop of Tobias Wren.
It releases the gear train one tooth at a time.

# Mainsprings

A mainspring should be wound no more than seven turns.
Over-winding cracks the spring at its inner coil.

| Movement | Mainspring turns |
|----------|------------------|
| Carriage clock | 7 |
| Mantel clock | 5 |

# Case Polishing

Walnut cases are polished with beeswax twice a year.

![Polished walnut case](case.png)
"""

FERRY_HTML = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Estuary Ferry Timetable</title>
<style>body { font-family: sans-serif; }</style>
<script>window.analytics = "tracking-snippet-should-not-appear";</script>
</head>
<body>
<header class="site-header"><a href="/">Estuary Transport Home</a> | Sign in</header>
<nav><ul><li><a href="/routes">All routes</a></li><li><a href="/fares">Fares</a></li></ul></nav>
<div class="breadcrumbs">Home &gt; Ferries &gt; Timetable</div>
<main>
<article>
<h1>Estuary Ferry Timetable</h1>
<p>The estuary ferry runs between Saltmarsh Quay and Heron Point every day except
Christmas Day. Bicycles travel free of charge.</p>
<h2>Departures</h2>
<p>Morning sailings leave on the hour; afternoon sailings leave at half past.</p>
<table>
<caption>Weekday departures</caption>
<thead><tr><th>Sailing</th><th>Saltmarsh Quay</th><th>Heron Point</th></tr></thead>
<tbody>
<tr><td>First</td><td>06:00</td><td>06:25</td></tr>
<tr><td>Last</td><td>22:30</td><td>22:55</td></tr>
</tbody>
</table>
<h2>Accessibility</h2>
<ul>
<li>Step-free boarding at both piers</li>
<li>Hearing loop in the passenger cabin</li>
</ul>
</article>
</main>
<aside class="sidebar">Download our app for live updates</aside>
<footer>Copyright Estuary Transport. Cookie settings.</footer>
</body>
</html>
"""


def _picture(path: Path, colour: tuple[int, int, int], label: str) -> None:
    img = Image.new("RGB", (96, 64), (245, 245, 240))
    draw = ImageDraw.Draw(img)
    draw.rectangle((8, 8, 88, 56), outline=colour, width=3)
    draw.ellipse((30, 18, 66, 46), fill=colour)
    draw.text((10, 50), label, fill=(20, 20, 20))
    img.save(path, format="PNG", optimize=True)


def _pandoc(source: Path, target: Path, *extra: str) -> None:
    subprocess.run(
        ["pandoc", str(source), "-o", str(target), *extra],
        check=True,
        cwd=source.parent,
    )


def _soffice(source: Path, target: Path, profile: Path) -> None:
    """LibreOffice (headless) converts ``source`` to ``target``'s type, in ``target``'s folder."""
    subprocess.run(
        [
            "soffice",
            f"-env:UserInstallation={profile.as_uri()}",
            "--headless",
            "--convert-to",
            target.suffix[1:],
            "--outdir",
            str(target.parent),
            str(source),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    made = target.parent / (source.stem + target.suffix)
    made.rename(target)


def _libreoffice(out: Path, work: Path) -> None:
    profile = work / "lo-profile"
    staging = work / "lo"
    staging.mkdir()
    _soffice(out / "lighthouse.docx", staging / "lighthouse_lo.odt", profile)
    _soffice(out / "orchard.odt", staging / "orchard_lo.docx", profile)
    _soffice(out / "review.pptx", staging / "review_lo.odp", profile)
    _soffice(staging / "review_lo.odp", staging / "review_lo.pptx", profile)
    for name in ("lighthouse_lo.odt", "orchard_lo.docx", "review_lo.pptx"):
        shutil.copy(staging / name, out / name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "tests" / "data" / "formats")
    args = parser.parse_args(argv)
    if shutil.which("pandoc") is None:
        print("pandoc is not installed (apt-get install pandoc)", file=sys.stderr)
        return 1
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        _picture(work / "lens.png", (200, 140, 20), "lens")
        _picture(work / "rows.png", (40, 140, 40), "rows")
        _picture(work / "dock.png", (30, 80, 160), "dock")
        _picture(work / "case.png", (120, 70, 30), "case")
        jobs = [
            (LIGHTHOUSE, "lighthouse.docx", ()),
            (ORCHARD, "orchard.odt", ()),
            (REVIEW, "review.pptx", ("--slide-level=2",)),
            (CLOCKMAKER, "clockmaker.epub", ("--epub-chapter-level=1",)),
        ]
        for text, name, extra in jobs:
            source = work / (Path(name).stem + ".md")
            source.write_text(text, encoding="utf-8")
            _pandoc(source, out / name, *extra)
        if shutil.which("soffice") is not None:
            _libreoffice(out, work)
        else:
            print("soffice not found: LibreOffice's versions are not remade", file=sys.stderr)
    (out / "ferry.html").write_text(FERRY_HTML, encoding="utf-8")
    for made in sorted(out.iterdir()):
        print(f"{made.name}: {made.stat().st_size:,} bytes")
        if made.stat().st_size > 100_000:
            print(f"{made.name} is over 100 KB; make it smaller", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
