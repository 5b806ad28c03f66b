"""An editor's mode line is not a plain-text file's first line.

Found on the twelfth real folder (BENCHMARKS.md): dictionaries-common's ``README.problems``
opens with ``# -*- readme-debian -*-`` (how Emacs should show it), which is no title, so the
document was titled by its generic file name, "README (dictionaries-common)", not by its first
heading "Debugging hints (Known problems below)". wget's README (``-*- text -*-`` alone on
the first line, then "GNU Wget") was likewise "README (wget)". Both files are copied unchanged
from Debian's ``/usr/share/doc``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kgrag.ingest.parsers import parse
from kgrag.ingest.sources import expand_inputs

DATA = Path(__file__).parents[1] / "data" / "mode_lines"


@pytest.mark.parametrize(
    ("source", "folder", "name", "title"),
    [
        (
            "README.problems",
            "dictionaries-common",
            "README.problems",
            "Debugging hints (Known problems below)",
        ),
        ("wget-README", "wget", "README", "GNU Wget"),
    ],
)
def test_a_mode_line_is_passed_over_for_the_title(
    source: str, folder: str, name: str, title: str, tmp_path: Path
) -> None:
    path = tmp_path / folder / name
    path.parent.mkdir()
    shutil.copy(DATA / source, path)
    (found,) = expand_inputs([str(path)]).items
    doc = parse(found, 10_000_000)
    assert doc.title == title
    assert "-*-" in doc.pages[0].text  # the text keeps every line


def test_a_mode_line_after_a_title_leaves_the_title(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("GNU gzip NEWS                                    -*- outline -*-\n\nItems.\n")
    (found,) = expand_inputs([str(path)]).items
    assert parse(found, 10_000_000).title == "GNU gzip NEWS"


def test_data_without_a_mode_line_is_still_no_title(tmp_path: Path) -> None:
    path = tmp_path / "codes.json"
    path.write_text('{\n  "15924": [\n    {"alpha_4": "Adlm"}\n  ]\n}\n')
    (found,) = expand_inputs([str(path)]).items
    assert parse(found, 10_000_000).title == "codes"
