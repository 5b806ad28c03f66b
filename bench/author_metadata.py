"""How many real files on this machine name their authors in their own metadata, by format
(figures only, nothing asserted): ``python bench/author_metadata.py [LIST] [--json OUT]``.

LIST is a file of paths, one a line (default: every PDF, DOCX, XLSX, PPTX, ODT, ODS, ODP, EPUB,
HTML and Markdown file found under / by ``find``, this worktree's copies and virtual
environments left out). For each format it prints the files scanned, those whose metadata holds
an author value, those with an author kept (:func:`kgrag.ingest.file_authors.file_authors`), and
those whose only values are placeholders (:data:`~kgrag.ingest.file_authors.PLACEHOLDER_AUTHORS`,
dropped), with the values seen.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kgrag.ingest.file_authors import author_names, is_placeholder, raw_authors

SUFFIXES = (".pdf", ".docx", ".xlsx", ".pptx", ".odt", ".ods", ".odp", ".epub", ".html", ".htm")
SUFFIXES += (".md",)
#: Copies of the same files (worktrees, caches, virtual environments) are not counted twice.
SKIPPED = ("/proc/", "/sys/", "/work/wt-", "/work/.mirror/", "/.venv/", "/.cache/", "/.pyenv/")
SKIPPED += ("/site-packages/", tempfile.gettempdir() + "/")


def found_files() -> list[str]:
    names: list[str] = []
    for suffix in SUFFIXES:
        names += [*(["-o"] if names else []), "-iname", f"*{suffix}"]
    command = ["find", "/", "-xdev", "-type", "f", "(", *names, ")"]
    out = subprocess.run(command, capture_output=True, text=True, check=False).stdout
    return [p for p in out.splitlines() if not any(s in p for s in SKIPPED)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("list", type=Path, nargs="?", help="a file of paths, one a line")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()
    paths = args.list.read_text().splitlines() if args.list else found_files()
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    values: dict[str, Counter[str]] = defaultdict(Counter)
    for name in paths:
        path = Path(name)
        suffix = path.suffix.lower()
        suffix = ".html" if suffix == ".htm" else suffix
        try:
            data = path.read_bytes()
        except OSError:
            continue
        counts[suffix]["scanned"] += 1
        raw = [v for v in raw_authors(data, suffix=suffix, mime="") if v and v.strip()]
        if not raw:
            continue
        counts[suffix]["with_value"] += 1
        kept = author_names(raw)
        counts[suffix]["with_author" if kept else "placeholders_only"] += 1
        for value in raw:
            shown = " ".join(value.split())
            values[suffix][f"{shown} (placeholder)" if is_placeholder(shown) else shown] += 1
    print(f"{'format':8} {'scanned':>8} {'value':>6} {'author':>7} {'placeholder':>12}  values")
    for suffix in sorted(counts):
        c = counts[suffix]
        seen = "; ".join(f"{v} x{n}" for v, n in values[suffix].most_common(6))
        print(
            f"{suffix:8} {c['scanned']:8} {c['with_value']:6} {c['with_author']:7} "
            f"{c['placeholders_only']:12}  {seen}"
        )
    if args.json:
        figures = {
            s: {**counts[s], "values": dict(values[s].most_common(20))} for s in sorted(counts)
        }
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
