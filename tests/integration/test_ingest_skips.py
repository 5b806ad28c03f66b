"""No file is skipped in silence (issue 24, item 4): every file of a folder that is not ingested
is in the JSON report with its reason (``skips``) and in the end-of-run summary, with counts per
reason; ``--include`` / ``--exclude`` narrow a folder and say which glob did it. A real folder of
mixed files: a Markdown note, a text file, a binary of an unsupported type, a DjVu scan (also
unsupported), a JSONL file that is not named (so not a manifest), a dangling symlink, and, on a
second run, unchanged files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgrag.cli import app
from tests.support.engines import Engine


def _folder(root: Path) -> Path:
    folder = root / "inbox"
    (folder / "notes").mkdir(parents=True)
    (folder / "notes" / "pump.md").write_text("# Pump\n\nThe Feed Pump FP-2 was repaired.\n")
    (folder / "roster.txt").write_text("Grace Hopper keeps the spare seals.\n")
    (folder / "logo.xcf").write_bytes(os.urandom(256))
    (folder / "scan.djvu").write_bytes(b"AT&TFORM" + os.urandom(248))
    (folder / "rows.jsonl").write_text('{"path": "roster.txt"}\n')
    (folder / "gone.txt").symlink_to(folder / "nowhere.txt")
    return folder


def _ingest(runner: CliRunner, *args: str) -> dict:
    done = runner.invoke(app, ["ingest", *args, "--json"])
    assert done.exit_code == 0, done.output
    return json.loads(done.stdout)


def test_every_skipped_file_is_listed_with_its_reason(engine: Engine, tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    runner = CliRunner(env=engine.env())
    store = ["--store", engine.uri]
    first = _ingest(runner, str(folder), *store)
    assert first["ingested"] == 2 and first["failed"] == 0
    kinds = {Path(s["path"]).name: s["kind"] for s in first["skips"]}
    assert kinds == {
        "logo.xcf": "unsupported_type",
        "scan.djvu": "unsupported_type",
        "rows.jsonl": "manifest_not_named",
        "gone.txt": "unreadable",
    }
    assert first["skipped"] == 4 and all(s["detail"] for s in first["skips"])

    again = _ingest(runner, str(folder), *store)  # nothing changed: two unchanged files too
    assert again["ingested"] == 0 and again["skipped"] == 6
    unchanged = {Path(s["path"]).name for s in again["skips"] if s["kind"] == "unchanged"}
    assert unchanged == {"pump.md", "roster.txt"}

    # the summary says the same in words, with the count of each reason
    shown = runner.invoke(app, ["ingest", str(folder), *store])
    assert shown.exit_code == 0, shown.output
    assert "skipped: unchanged 2, unsupported type 2, manifest not named 1, unreadable 1" in (
        shown.stderr
    ), shown.stderr
    for name in ("logo.xcf", "scan.djvu", "rows.jsonl", "gone.txt", "pump.md", "roster.txt"):
        assert name in shown.stderr, name


def test_include_and_exclude_narrow_a_folder_and_say_why(engine: Engine, tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    runner = CliRunner(env=engine.env())
    store = ["--store", engine.uri]
    only_md = _ingest(runner, str(folder), "--include", "*.md", *store)
    assert only_md["ingested"] == 1
    skipped = {Path(s["path"]).name: s for s in only_md["skips"]}
    assert skipped["roster.txt"]["kind"] == "not_included"
    no_notes = _ingest(runner, str(folder), "--exclude", "notes/*", *store)
    assert no_notes["ingested"] == 1  # roster.txt; pump.md is excluded
    excluded = {Path(s["path"]).name: s for s in no_notes["skips"] if s["kind"] == "excluded"}
    assert "'notes/*'" in excluded["pump.md"]["detail"]


@pytest.mark.parametrize("glob", ["", "   ", "*\x01.md", "*" * 1025])
def test_a_glob_that_selects_nothing_is_a_usage_error(glob: str, tmp_path: Path) -> None:
    """Exit 2 naming the option, before any store is opened (the store path is never created)."""
    store = tmp_path / "never" / "kg.db"
    done = CliRunner().invoke(
        app, ["ingest", str(tmp_path), "--exclude", glob, "--store", f"falkordb-lite:///{store}"]
    )
    assert done.exit_code == 2, done.output
    assert "--exclude" in done.output
    assert not store.parent.exists()
