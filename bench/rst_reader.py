"""Time the reStructuredText reader on a real file repeated to growing sizes (figures only,
nothing asserted): ``python bench/rst_reader.py [FILE] [--sizes 340000 680000] [--json OUT]``.

For each size it reads the text once whole, as docutils parses a document in one go (the reader
before it cut long sources into pieces), and once through the reader (``parse_rst``), and
prints the CPU seconds of each and the lines docutils' state machine copied (its
``input_lines[offset:]`` slices: what made one parse quadratic in the length). Default file:
tests/data/dataset_notes/diabetes.rst (scikit-learn's dataset notes, a field list, a title).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kgrag.ingest.formats.rst import _read, parse_rst, rst_pieces
from kgrag.ingest.models import SourceItem
from tests.support.rst_copies import copied_lines

DEFAULT = Path(__file__).resolve().parent.parent / "tests/data/dataset_notes/diabetes.rst"


def measure(read: Callable[[], object]) -> tuple[float, int]:
    with copied_lines() as count:
        t0 = time.process_time()
        read()
        return time.process_time() - t0, count[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", type=Path, nargs="?", default=DEFAULT)
    parser.add_argument("--sizes", type=int, nargs="+", default=[340_000, 680_000])
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()
    source = args.file.read_text("utf-8")
    item = SourceItem(path=args.file, modality="text", mime="text/x-rst")
    rows = []
    for size in args.sizes:
        text = source * max(1, size // len(source))
        whole_s, whole_lines = measure(lambda text=text: _read(item, text))
        pieces_s, pieces_lines = measure(lambda text=text: parse_rst(item, text.encode()))
        row = {
            "chars": len(text),
            "lines": text.count("\n"),
            "pieces": len(rst_pieces(text)),
            "whole_s": round(whole_s, 2),
            "whole_copied_lines": whole_lines,
            "pieces_s": round(pieces_s, 2),
            "pieces_copied_lines": pieces_lines,
        }
        rows.append(row)
        print(
            f"{len(text) / 1000:.0f} KB ({row['lines']:,} lines, {row['pieces']} pieces): "
            f"whole {whole_s:.2f} s CPU, {whole_lines:,} lines copied; "
            f"reader {pieces_s:.2f} s CPU, {pieces_lines:,} lines copied"
        )
    if args.json:
        args.json.write_text(json.dumps({"file": str(args.file), "sizes": rows}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
