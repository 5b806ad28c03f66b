"""A seeded fuzzer for file readers: real files of many formats, damaged the ways files get damaged
(cut short, bytes flipped or zeroed, two files spliced, a block repeated many times, structured
text nested deep, a file under another format's name), each read in a worker process with a time
budget.

The harness knows nothing of kgrag: :func:`run_cases` takes the module and function that read one
file (``module:function``, called in the worker as ``read(path) -> list[(path, reason)]`` of
the refusals, raising when the reader lets an exception escape). ``tests/unit`` runs a bounded
set, ``bench/fuzz_readers.py`` (``make bench-fuzz``) a long one with figures.

A case's outcome is one of ``ok`` (read, perhaps with refusals), ``escaped`` (an exception came
out of the reader: a crash of the job), ``hang`` (over the budget: the worker is killed and
replaced) and ``unnamed`` (a refusal whose path is not the file or one of its members,
``file!member``).
"""

from __future__ import annotations

import importlib
import math
import multiprocessing
import random
import shutil
import subprocess
import time
import traceback
import wave
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent.parent
DATA = REPO / "tests" / "data"

#: format -> real files of it in tests/data (or in the repository)
SEED_FILES: dict[str, tuple[str, ...]] = {
    "pdf": ("first_lines/deprecated utilities.pdf",),
    "docx": ("formats/lighthouse.docx", "formats/tides_lo.docx"),
    "odt": ("formats/orchard.odt",),
    "pptx": ("formats/review.pptx",),
    "epub": ("formats/clockmaker.epub",),
    "html": ("formats/ferry.html", "formats/go_mem_head.html"),
    "markdown": ("text/godebug-head.md", "markdown_tables/nnapi_supported_ops.md"),
    "rst": ("dataset_notes/diabetes.rst", "containers/good/turbine.rst"),
    "text": ("text/io-socket-ssl-changelog-excerpt.txt", "first_lines/nsswitch.conf"),
    "json": ("plain_text/iso_15924.json",),
    "csv": ("header_rows/debian.csv", "tables/zip_sums_head.csv"),
    "tsv": ("subject_only/zone1970.tab",),
    "yaml": ("../../mkdocs.yml",),
    "man": ("man/choom.1.gz", "pod2man/readelf.1.gz"),
    "gz": ("containers/good/notes.txt.gz", "containers/good/manuals.tar.gz"),
    "zip": ("containers/good/docs.zip",),
    "tar": ("containers/good/forms.tar",),
    "email": ("containers/good/inspection.eml", "containers/good/shift.mbox"),
    "svg": ("svg/dependencies.svg", "svg/libreoffice-basic.svgz"),
    "xpm": ("formats/python3.11.xpm",),
}
#: formats made here (their writers are the usual libraries and tools): name -> suffix
MADE = {
    "xlsx": ".xlsx",
    "png": ".png",
    "jpeg": ".jpg",
    "wav": ".wav",
    "flac": ".flac",
    "mp3": ".mp3",
}
#: formats whose text has brackets to nest (the deep-nesting mutation)
NESTABLE = {"json": ("[", "]"), "yaml": ("- ", ""), "html": ("<div>", "</div>"),
            "svg": ("<g>", "</g>"), "markdown": ("> ", ""), "rst": ("  ", "")}  # fmt: skip


@dataclass(frozen=True)
class Seed:
    format: str
    path: Path


def seeds(work: Path) -> list[Seed]:
    """Real files of every format: those of tests/data, and those made in ``work`` (a
    spreadsheet with openpyxl, pictures with Pillow, recordings with espeak-ng and ffmpeg when
    installed)."""
    out = [Seed(fmt, (DATA / rel).resolve()) for fmt, rels in SEED_FILES.items() for rel in rels]
    work.mkdir(parents=True, exist_ok=True)
    for fmt, suffix in MADE.items():
        path = work / f"seed-{fmt}{suffix}"
        if path.exists() or _make(fmt, path):
            out.append(Seed(fmt, path))
    return [s for s in out if s.path.is_file()]


def _make(fmt: str, path: Path) -> bool:
    if fmt == "xlsx":
        import openpyxl

        book = openpyxl.Workbook()
        sheet = book.active
        assert sheet is not None
        sheet.append(["Harbour", "Ships in 2023", "Berths"])
        for row in (("Gullrock", 412, 6), ("Pellworth", 88, 2), ("Tarnmouth", 1203, 14)):
            sheet.append(list(row))
        book.save(path)
        return True
    if fmt in ("png", "jpeg"):
        from PIL import Image, ImageDraw

        image = Image.new("RGB", (96, 64), "white")
        ImageDraw.Draw(image).ellipse((20, 10, 76, 54), fill="red")
        image.save(path, format="PNG" if fmt == "png" else "JPEG", quality=80)
        return True
    if fmt == "wav":
        with wave.open(str(path), "wb") as w:  # a second of a 440 Hz tone
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(8000)
            w.writeframes(
                b"".join(
                    int(8000 * math.sin(2 * math.pi * 440 * n / 8000)).to_bytes(
                        2, "little", signed=True
                    )
                    for n in range(8000)
                )
            )
        return True
    ffmpeg = shutil.which("ffmpeg")
    source = path.with_name("seed-wav.wav")
    if ffmpeg is None or not (source.exists() or _make("wav", source)):
        return False
    done = subprocess.run(
        [ffmpeg, "-nostdin", "-loglevel", "error", "-y", "-i", str(source), str(path)],
        capture_output=True,
        timeout=60,
        check=False,
    )
    return done.returncode == 0 and path.exists()


# ---------------------------------------------------------------------------------- mutations

Mutation = Callable[[random.Random, bytes, Sequence[bytes], str], bytes]


def truncate(rng: random.Random, data: bytes, _others: Sequence[bytes], _fmt: str) -> bytes:
    """Cut at a random offset (a partial download)."""
    return data[: rng.randrange(1, max(2, len(data)))]


def flip(rng: random.Random, data: bytes, _others: Sequence[bytes], _fmt: str) -> bytes:
    """Flip a few random bits."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
    return bytes(out)


def zero(rng: random.Random, data: bytes, _others: Sequence[bytes], _fmt: str) -> bytes:
    """Zero a random run of bytes."""
    at = rng.randrange(len(data))
    n = rng.randint(1, max(1, min(256, len(data) - at)))
    return data[:at] + bytes(n) + data[at + n :]


def splice(rng: random.Random, data: bytes, others: Sequence[bytes], _fmt: str) -> bytes:
    """The head of this file and the tail of another."""
    other = rng.choice(others) if others else data
    return data[: rng.randrange(len(data))] + other[rng.randrange(len(other)) :]


def repeat(rng: random.Random, data: bytes, _others: Sequence[bytes], _fmt: str) -> bytes:
    """A block of the file repeated many times in place (up to ~2 MB)."""
    at = rng.randrange(len(data))
    block = data[at : at + rng.randint(1, 64)]
    times = rng.choice((100, 1000, 10_000, 2_000_000 // max(1, len(block))))
    return data[:at] + block * times + data[at:]


def nest(rng: random.Random, data: bytes, _others: Sequence[bytes], fmt: str) -> bytes:
    """Structured text nested deep (a thousand to a hundred thousand levels) at a random line."""
    opening, closing = NESTABLE.get(fmt, ("(", ")"))
    depth = rng.choice((1000, 10_000, 100_000))
    at = rng.randrange(len(data))
    if fmt in ("yaml", "markdown", "rst"):  # nesting by indentation or markers, line by line
        deep = "".join(opening * n + "x\n" for n in range(0, depth, max(1, depth // 500)))
        return data[:at] + b"\n" + deep.encode() + data[at:]
    return data[:at] + (opening * depth + closing * depth).encode() + data[at:]


def control(rng: random.Random, data: bytes, _others: Sequence[bytes], _fmt: str) -> bytes:
    """Control characters, NULs, lone UTF-8 bytes and surrogates' encodings in the text."""
    junk = (b"\x00", b"\x1b[2J", b"\xff\xfe", b"\xed\xa0\x80", b"\r", b"\x0c", b"\xe2\x80\xae")
    out = bytearray(data)
    for _ in range(rng.randint(1, 20)):
        at = rng.randrange(len(out) + 1)
        out[at:at] = rng.choice(junk)
    return bytes(out)


MUTATIONS: dict[str, Mutation] = {
    "truncate": truncate,
    "flip": flip,
    "zero": zero,
    "splice": splice,
    "repeat": repeat,
    "nest": nest,
    "control": control,
}
#: suffixes a file is renamed to by the wrong-extension case
WRONG_SUFFIXES = (
    *(".pdf", ".docx", ".xlsx", ".pptx", ".odt", ".html", ".json", ".csv", ".md"),
    *(".png", ".jpg", ".svg", ".zip", ".tar", ".gz", ".eml", ".wav", ".txt"),
)


@dataclass(frozen=True)
class Case:
    """One damaged file: its format, how it was made, the name it is read under."""

    number: int
    format: str
    mutation: str
    name: str
    data: bytes


def cases(seed_files: Sequence[Seed], count: int, seed: int) -> Iterator[Case]:
    """``count`` cases, the same for the same seed files and ``seed``: formats in turn, a
    random mutation of a random file of it (sometimes two), sometimes under a wrong name."""
    rng = random.Random(seed)
    by_format: dict[str, list[Seed]] = {}
    for s in seed_files:
        by_format.setdefault(s.format, []).append(s)
    formats = sorted(by_format)
    contents = {s.path: s.path.read_bytes() for s in seed_files}
    everything = list(contents.values())
    for n in range(count):
        fmt = formats[n % len(formats)]
        source = rng.choice(by_format[fmt])
        data = contents[source.path]
        names = [m for m in MUTATIONS if m != "nest" or fmt in NESTABLE]
        applied = [rng.choice(names) for _ in range(rng.choice((1, 1, 1, 2)))]
        for m in applied:
            data = MUTATIONS[m](rng, data, everything, fmt) or b"\x00"
        name = source.path.name
        if rng.random() < 0.12:
            applied.append("wrong_extension")
            name = f"{source.path.stem}{rng.choice(WRONG_SUFFIXES)}"
        yield Case(n, fmt, "+".join(applied), f"case{n:05d}-{name}", data)


# ------------------------------------------------------------------------------------- running


@dataclass(frozen=True)
class Outcome:
    case: Case
    kind: str  # ok | escaped | hang | unnamed
    seconds: float
    refusals: tuple[tuple[str, str], ...] = ()
    detail: str = ""


@dataclass
class Results:
    outcomes: list[Outcome] = field(default_factory=list)

    def bad(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.kind != "ok"]


def _worker(target: str, conn: Connection) -> None:
    module, _, function = target.partition(":")
    read = getattr(importlib.import_module(module), function)
    conn.send("ready")  # the imports are not the first case's time
    while True:
        path = conn.recv()
        if path is None:
            return
        t0 = time.perf_counter()
        try:
            refusals = read(Path(path))
            conn.send(("ok", time.perf_counter() - t0, tuple(refusals), ""))
        except BaseException as e:  # the harness must see everything that escapes
            detail = "".join(traceback.format_exception(e))[-4000:]
            conn.send(("escaped", time.perf_counter() - t0, (), detail))


class _Worker:
    def __init__(self, target: str) -> None:
        self.target = target
        self._start()

    def _start(self) -> None:
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_worker, args=(self.target, child), daemon=True)
        self.process.start()
        child.close()
        if not self.conn.poll(300) or self.conn.recv() != "ready":
            raise RuntimeError(f"the reader {self.target} did not start in 300 s")

    def read(self, path: Path, budget_s: float) -> tuple[str, float, tuple[Any, ...], str]:
        self.conn.send(str(path))
        t0 = time.perf_counter()
        if self.conn.poll(budget_s):
            try:
                result: tuple[str, float, tuple[Any, ...], str] = self.conn.recv()
                return result
            except EOFError:
                pass
        elapsed = time.perf_counter() - t0
        died = not self.process.is_alive()
        self.process.kill()
        self.process.join()
        self._start()
        if died:
            return ("escaped", elapsed, (), f"the worker died (exit {self.process.exitcode})")
        return ("hang", elapsed, (), f"no answer in {budget_s:g} s")

    def close(self) -> None:
        self.conn.send(None)
        self.process.join(timeout=10)
        if self.process.is_alive():
            self.process.kill()


def run_cases(
    target: str,
    all_cases: Iterable[Case],
    work: Path,
    budget_s: float,
    on_outcome: Callable[[Outcome], None] | None = None,
    keep: Path | None = None,
) -> Results:
    """Read each case (written to ``work``) with ``target`` in a worker process; a case that
    was not ``ok`` is copied into ``keep`` when given. Outcomes keep no case's bytes."""
    results = Results()
    worker = _Worker(target)
    try:
        for case in all_cases:
            path = work / case.name
            path.write_bytes(case.data)
            kind, seconds, refusals, detail = worker.read(path, budget_s)
            if kind == "ok":
                stray = [p for p, _ in refusals if p != str(path) and not p.startswith(f"{path}!")]
                if stray:
                    kind, detail = "unnamed", f"refusals name {stray[:3]}, not {path}"
            if kind != "ok" and keep is not None:
                keep.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, keep / case.name)
            outcome = Outcome(replace(case, data=b""), kind, seconds, tuple(refusals), detail)
            results.outcomes.append(outcome)
            if on_outcome is not None:
                on_outcome(outcome)
            path.unlink()
    finally:
        worker.close()
    return results
