"""Bad input, each a real bad file: reported by path with a reason, the job goes on with the
good files, `kgrag ingest` exits 2 printing the failures with --json, and nothing already stored
changes (a stored file later replaced by a corrupt version keeps its stored version). On both
engines."""

from __future__ import annotations

import json
import os
import subprocess
import wave
from pathlib import Path

import pytest

from tests.integration.ingest_media import (
    KGRAG,
    REPO,
    drawing,
    needs_media_tools,
    orphans,
    rows,
    snapshot,
    speech,
)
from tests.support.engines import Engine

pytestmark = needs_media_tools
LIMIT = 20_000  # KGRAG_MAX_FILE_BYTES for these jobs


def run(engine: Engine, *paths: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        **engine.env(),
        "KGRAG_MAX_FILE_BYTES": str(LIMIT),
        "OMP_NUM_THREADS": "1",
    }
    return subprocess.run(
        [*KGRAG, "ingest", *map(str, paths), "--json"],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )


def bad_files(folder: Path) -> dict[str, tuple[Path, str]]:
    """name -> (file, a word its reason must contain)."""
    folder.mkdir()
    png = drawing(folder / "source.png", "red", "circle").read_bytes()
    (folder / "source.png").unlink()
    corrupt = folder / "corrupt.png"
    corrupt.write_bytes(png[: len(png) // 3])
    flac = speech(folder / "source.flac", "this recording will be cut short")
    truncated = folder / "truncated.flac"
    truncated.write_bytes(flac.read_bytes()[:2048])
    flac.unlink()
    unsupported = folder / "data.xyz"
    unsupported.write_bytes(bytes.fromhex("1f8b08") + bytes(range(256)))  # binary
    big = folder / "big.txt"
    big.write_text("Large file. " * (LIMIT // 10), "utf-8")
    garbled = folder / "garbled.txt"  # not UTF-8, and control bytes in any legacy encoding
    garbled.write_bytes(bytes(range(0x80, 0x100)) + bytes(range(1, 32)) * 8)
    silent = folder / "no-samples.wav"
    with wave.open(str(silent), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(b"")
    return {
        "corrupt image": (corrupt, "image"),
        "truncated audio": (truncated, "truncated"),
        "unsupported type": (unsupported, "unsupported"),
        "over the size limit": (big, "limit"),
        "not text in any encoding": (garbled, "not legible"),
        "zero-length audio": (silent, "zero length"),
    }


def test_bad_files_fail_alone_and_change_nothing(engine: Engine) -> None:
    tmp_path = engine.folder
    good = tmp_path / "good"
    good.mkdir()
    note = good / "note.txt"
    note.write_text("Grace Hopper wrote the first compiler at Remington Rand.", "utf-8")
    picture = drawing(good / "picture.png", "blue", "square")
    first = run(engine, note, picture)
    assert first.returncode == 0, first.stderr[-3000:]
    with engine.open() as store:
        before = snapshot(store)
        stored_ids = {d for d, _ in before["documents"]}

    bad = bad_files(tmp_path / "bad")
    empty = tmp_path / "bad" / "empty.txt"  # nothing to ingest: a skip, not a failure
    empty.write_bytes(b"")
    picture.write_bytes(picture.read_bytes()[:200])  # the stored picture, now corrupt
    extra = good / "extra.md"
    extra.write_text("# Extra\n\nAlan Turing visited Manchester.\n", "utf-8")
    done = run(engine, *(p for p, _ in bad.values()), empty, picture, extra)
    assert done.returncode == 2, (done.stdout, done.stderr[-3000:])
    report = json.loads(done.stdout)
    assert report["ingested"] == 1  # extra.md: the job went on
    assert [(s["path"], s["kind"]) for s in report["skips"]] == [(str(empty), "empty")]
    reasons = {f["path"]: f["reason"] for f in report["failures"]}
    assert report["failed"] == len(reasons) == len(bad) + 1, reasons
    for label, (path, word) in bad.items():
        shown = [p for p in reasons if Path(p).name == path.name]
        assert shown, (label, reasons)
        assert word.lower() in reasons[shown[0]].lower(), (label, reasons[shown[0]])
    assert any(Path(p).name == "picture.png" for p in reasons)

    with engine.open() as store:
        after = snapshot(store)
        new = {d for d, _ in after["documents"]} - stored_ids
        assert stored_ids <= {d for d, _ in after["documents"]}  # nothing stored was removed
        assert len(new) == 1  # only extra.md
        (new_id,) = new
        added = rows(
            store,
            "MATCH (x)-[:PART_OF]->(:Document {id: $id}) RETURN count(x) AS n",
            id=new_id,
        )[0]["n"]
        assert after["labels"]["Document"] == before["labels"]["Document"] + 1
        assert after["labels"]["Chunk"] == before["labels"]["Chunk"] + added
        assert after["labels"]["Image"] == before["labels"]["Image"]  # the stored picture kept
        assert set(before["entities"]) <= set(after["entities"])
        assert orphans(store)["unfinished"] == 0

    # a job of bad files only: exit 2, and the graph is exactly as it was
    with engine.open() as store:
        before = snapshot(store)
    again = run(engine, *(p for p, _ in bad.values()))
    assert again.returncode == 2
    assert json.loads(again.stdout)["failed"] == len(bad)
    with engine.open() as store:
        assert snapshot(store) == before


LEGACY_TEXT = "Café Müller in Köln, façade rénovée, 5 € “net”."


@pytest.mark.parametrize(
    ("name", "data", "expected"),
    [
        ("latin1.txt", LEGACY_TEXT.replace("€ “net”", "EUR").encode("latin-1"), "Café Müller"),
        ("README", LEGACY_TEXT.encode("cp1252"), "5 € “net”"),  # no extension: sniffed
        ("prices.csv", f"item,price\n{LEGACY_TEXT},5\n".encode("cp1252"), "façade rénovée"),
        ("page.html", f"<p>{LEGACY_TEXT}</p>".encode("cp1252"), "Köln"),  # no charset declared
        (
            "declared.html",
            f'<meta charset="utf-8"><p>{LEGACY_TEXT}</p>'.encode("cp1252"),  # and wrong
            "Köln",
        ),
        ("notes.txt", LEGACY_TEXT.encode("utf-16"), "5 € “net”"),  # a byte-order mark
        ("moscow.txt", ("Москва — столица России. " * 4).encode("cp1251"), "столица России"),
        ("tokyo.txt", ("東京は日本の首都です。" * 4).encode("shift_jis"), "日本の首都"),
    ],
)
def test_legacy_encodings_are_read(tmp_path: Path, name: str, data: bytes, expected: str) -> None:
    """Real folders hold text that is not UTF-8: old changelogs, spreadsheets' CSV exports,
    Windows notes. Mostly-ASCII text is Windows-1252 (what browsers read Latin-1 as); text in
    another script is read in the encoding detected for it (kgrag.ingest.decoding)."""
    from kgrag.ingest.parsers import parse
    from kgrag.ingest.sources import expand_inputs

    path = tmp_path / name
    path.write_bytes(data)
    (item,) = expand_inputs([str(path)]).items
    parsed = parse(item, LIMIT)
    text = "\n".join(p.text for p in parsed.pages) + "\n".join(
        c for t in parsed.tables for row in t.rows for c in row
    )
    assert expected in text, text[:300]
