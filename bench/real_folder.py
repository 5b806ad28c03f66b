"""A real folder nobody prepared for kgrag: what is ingested, skipped and failed, by file type.

The folder is assembled from files this machine's Debian packages and toolchains installed (the
documentation under ``/usr/share/doc``: HTML, gzip-compressed READMEs and changelogs, extension-
less ``README.Debian``/``copyright`` files, Markdown, reStructuredText, plain text, images, PDF
manuals; CSV data files shipped with scikit-learn and numpy; Go's ``archive/zip`` test archives,
several of them corrupt or hostile on purpose; the shared data set's ``jfk.flac``). Nothing is
made or edited by the project: files are copied as they are, a fixed sample per type (evenly
spaced over the sorted candidates, so the same machine gives the same folder).

Each file type lands in its own sub-folder and is ingested as its own job into one embedded
store, so that the time per type is that job's wall time (models load before the first job).
Then a few questions whose answers sit in known files are asked; each line says whether the
expected file is cited. Prints a table and writes ``bench/results/real_folder.json``::

    .venv/bin/python bench/real_folder.py [--per-type-cap N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import DATA, quiet_models, write_result

DOC = Path("/usr/share/doc")


@dataclass(frozen=True)
class Source:
    """Where the files of one type come from, and how many to take."""

    kind: str
    roots: tuple[Path, ...]
    pattern: str
    cap: int

    def candidates(self) -> list[Path]:
        found: set[Path] = set()
        for root in self.roots:
            if root.is_file():
                found.add(root)
            elif root.is_dir():
                found.update(p for p in root.rglob(self.pattern) if _wanted(p, self.kind))
        return sorted(found)


def _wanted(path: Path, kind: str) -> bool:
    if not path.is_file() or path.is_symlink():
        return False
    if kind == "(none)":
        return "." not in path.name
    return True


SOURCES = (
    Source("html", (DOC,), "*.html", 80),
    Source("gz", (DOC,), "*.gz", 100),
    Source("(none)", (DOC,), "*", 80),
    Source("txt", (DOC,), "*.txt", 50),
    Source("md", (DOC,), "*.md", 40),
    Source("rst", (DOC,), "*.rst", 20),
    Source("png", (DOC,), "*.png", 20),
    Source("gif", (DOC,), "*.gif", 5),
    Source("pdf", (DOC,), "*.pdf", 5),
    Source("c", (DOC,), "*.c", 10),
    Source(
        "csv",
        tuple(Path(sys.prefix).glob("lib/python3*/site-packages/sklearn/datasets/data")),
        "*.csv",
        10,
    ),
    Source("zip", (Path("/usr/local/go/src/archive/zip/testdata"),), "*.zip", 15),
    Source("odt", (Path("/usr/share"),), "*.odt", 2),
    Source("flac", (DATA / "jfk.flac",), "*.flac", 1),
)

# Questions whose answers are in a known file of the folder: (question, a part of that file's
# path). A question is asked only when its file was sampled.
QUESTIONS = (
    ("What does the asn1_der_decoding function do?", "libtasn1.pdf"),
    ("What kinds of errors does Memcheck detect?", "valgrind/html/mc-manual.html"),
    ("What did the president ask his fellow Americans?", "jfk.flac"),
    ("Which MIME type database does shared-mime-info describe?", "shared-mime-info-spec"),
    ("How are voices and languages added to eSpeak NG?", "espeak-ng"),
    # a question about "the recording", and one naming a file (2026-11-26)
    ("What is said in the recording?", "jfk.flac"),
    ("What is in jfk.flac?", "jfk.flac"),
)


def _spaced(items: list[Path], cap: int, must: tuple[str, ...]) -> list[Path]:
    """``cap`` items evenly spaced over ``items``, plus any item a question needs."""
    if len(items) <= cap:
        return items
    step = len(items) / cap
    chosen = {items[int(i * step)] for i in range(cap)}
    chosen.update(p for p in items if any(m in str(p) for m in must))
    return sorted(chosen)


def build_folder(dest: Path, cap_scale: float) -> dict[str, list[str]]:
    """Copy the sample into ``dest/<type>/<original path>``; returns origins by type."""
    must = tuple(m for _, m in QUESTIONS)
    origins: dict[str, list[str]] = {}
    for source in SOURCES:
        picked = _spaced(source.candidates(), max(1, round(source.cap * cap_scale)), must)
        for src in picked:
            # dot-folders (a venv's ``.venv``) are hidden from folder walks: drop the dot
            parts = [part.lstrip(".") or "_" for part in src.parts[1:]]
            target = dest.joinpath(_slug(source.kind), *parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, target)
        origins[source.kind] = [str(p) for p in picked]
    return origins


def _slug(kind: str) -> str:
    return "no-extension" if kind == "(none)" else kind


def run(folder: Path, work: Path, origins: dict[str, list[str]]) -> dict[str, Any]:
    from kgrag.agent.agent import KnowledgeAgent
    from kgrag.config import Settings
    from kgrag.ingest.pipeline import IngestOptions

    settings = Settings(store=f"falkordb-lite:///{work / 'kg.db'}")
    agent = KnowledgeAgent.open(settings)
    agent.ingest_options = IngestOptions(image_dir=work / "images")
    warm = work / "warm"
    warm.mkdir()
    (warm / "warm.txt").write_text("Warm-up text so that model loading is not timed.\n")
    agent.ingest([str(warm)])
    rows: list[dict[str, Any]] = []
    with agent:
        for kind in origins:
            sub = folder / _slug(kind)
            if not sub.exists():
                continue
            t0 = time.perf_counter()
            report = agent.ingest([str(sub)])
            wall = time.perf_counter() - t0
            rows.append(
                {
                    "type": kind,
                    "files": len(origins[kind]),
                    "ingested": report.ingested,
                    "skipped": report.skipped,
                    "failed": report.failed,
                    "skipped_by_kind": report.skipped_by_kind(),
                    "failures": [
                        {"path": f.path.replace(str(folder), ""), "reason": f.reason}
                        for f in report.failures
                    ][:10],
                    "wall_s": round(wall, 2),
                    "s_per_file": round(wall / max(1, len(origins[kind])), 3),
                }
            )
            print(_row(rows[-1]), flush=True)
        answers = [_ask(agent, q, expect, origins) for q, expect in QUESTIONS]
    return {"types": rows, "questions": [a for a in answers if a is not None]}


def _ask(
    agent: Any, question: str, expect: str, origins: dict[str, list[str]]
) -> dict[str, Any] | None:
    if not any(expect in p for paths in origins.values() for p in paths):
        return None
    t0 = time.perf_counter()
    answer = agent.ask(question, admin=True)
    cited = [c.uri or "" for c in answer.citations]
    hit = any(expect in uri for uri in cited)
    print(f"  {'CITED' if hit else 'MISSED'}  {question}  -> {answer.answer[:160]!r}")
    return {
        "question": question,
        "expected_file": expect,
        "expected_cited": hit,
        "exit_reason": answer.exit_reason,
        "answer": answer.answer[:500],
        "cited": [u.split("/usr/share/doc/")[-1] for u in cited][:5],
        "latency_s": round(time.perf_counter() - t0, 2),
    }


def _row(r: dict[str, Any]) -> str:
    return (
        f"{r['type']:>13} files {r['files']:4d}  ingested {r['ingested']:4d}  "
        f"skipped {r['skipped']:4d}  failed {r['failed']:3d}  {r['wall_s']:7.1f} s  "
        f"{dict(r['skipped_by_kind'])}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-type-cap", type=float, default=1.0, help="scale every type's cap")
    parser.add_argument("--keep", type=Path, help="build the folder here and keep it")
    parser.add_argument("--label", default="", help="a name for this run in the results file")
    args = parser.parse_args()
    quiet_models()
    with tempfile.TemporaryDirectory(prefix="kgrag-real-folder-") as tmp:
        folder = args.keep or Path(tmp) / "folder"
        folder.mkdir(parents=True, exist_ok=True)
        origins = build_folder(folder, args.per_type_cap)
        total = sum(len(v) for v in origins.values())
        counts = Counter({k: len(v) for k, v in origins.items()})
        print(f"folder: {total} real files, {dict(counts)}")
        work = Path(tmp) / "work"
        work.mkdir()
        t0 = time.perf_counter()
        result = run(folder, work, origins)
        wall = time.perf_counter() - t0
    keys = ("files", "ingested", "skipped", "failed")
    totals = {key: sum(r[key] for r in result["types"]) for key in keys}
    print(
        f"total: {totals['files']} files, ingested {totals['ingested']}, skipped "
        f"{totals['skipped']}, failed {totals['failed']} in {wall:.0f} s (incl. questions)"
    )
    write_result(
        f"real_folder{'_' + args.label if args.label else ''}",
        {"label": args.label, "totals": totals, "wall_s": round(wall, 1), **result},
    )


if __name__ == "__main__":
    main()
