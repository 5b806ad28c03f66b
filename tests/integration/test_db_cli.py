"""``kgrag db migrate`` / ``db status`` / ``db stats --json`` as scripts run them: the real entry
point in a subprocess, on both engines (an embedded store ``falkordb-lite:///TMP/kg.db``, and
the Neo4j server of the tests, emptied first).

Migrations are recorded as ``Migration`` nodes (kgrag/graph/migrations.py): the first ``migrate``
applies every one, a second applies none and leaves the nodes and their ``applied_at`` alone;
``status`` lists each one as applied; ``stats --json`` prints one JSON object whose counts follow
an ingest."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kgrag.graph.schema import MIGRATIONS
from tests.support.engines import Engine

KGRAG = Path(sys.executable).parent / "kgrag"
NAMES = [m.name for m in MIGRATIONS]


def _kgrag(*args: str, cwd: Path, engine: Engine) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [str(KGRAG), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **engine.env(), "OMP_NUM_THREADS": "1"},
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, f"kgrag {' '.join(args)}: {proc.stderr}"
    return proc


def _one_json_object(stdout: str) -> dict[str, Any]:
    lines = stdout.splitlines()
    assert len(lines) == 1, f"expected exactly one line of JSON, got {stdout!r}"
    obj = json.loads(lines[0])
    assert isinstance(obj, dict)
    return obj


def _stats_shape(obj: dict[str, Any]) -> None:
    assert set(obj) == {"nodes", "relationships"}
    for counts in obj.values():
        assert isinstance(counts, dict)
        for name, n in counts.items():
            assert isinstance(name, str) and name
            assert isinstance(n, int) and not isinstance(n, bool) and n > 0


@pytest.fixture(scope="module")
def run(module_engine: Engine) -> dict[str, Any]:
    """One store taken through status -> migrate -> migrate -> ingest, every output kept."""
    root = module_engine.folder
    store = ("--store", module_engine.uri)
    r: dict[str, Any] = {}

    def kgrag(*args: str) -> subprocess.CompletedProcess[str]:
        return _kgrag(*args, cwd=root, engine=module_engine)

    r["status_fresh"] = _one_json_object(kgrag("db", "status", *store, "--json").stdout)
    r["migrate1"] = kgrag("db", "migrate", *store)
    r["status1"] = kgrag("db", "status", *store).stdout
    r["status1_json"] = _one_json_object(kgrag("db", "status", *store, "--json").stdout)
    r["stats1"] = _one_json_object(kgrag("db", "stats", *store, "--json").stdout)
    r["migrate2"] = kgrag("db", "migrate", *store)
    r["status2_json"] = _one_json_object(kgrag("db", "status", *store, "--json").stdout)
    r["stats2"] = _one_json_object(kgrag("db", "stats", *store, "--json").stdout)
    doc = root / "pump.txt"
    doc.write_text(
        "Pump notes.\n\nThe Feed Pump FP-2 is maintained by Grace Hopper in Building 4.\n",
        encoding="utf-8",
    )
    r["ingest"] = _one_json_object(kgrag("ingest", str(doc), *store, "--json").stdout)
    r["stats3"] = _one_json_object(kgrag("db", "stats", *store, "--json").stdout)
    r["status3_json"] = _one_json_object(kgrag("db", "status", *store, "--json").stdout)
    return r


def test_a_fresh_store_has_every_migration_pending(run: dict[str, Any]) -> None:
    fresh = run["status_fresh"]["migrations"]
    assert [m["name"] for m in fresh] == NAMES
    assert all(m["applied_at"] is None for m in fresh)


def test_migrate_applies_all_then_none(run: dict[str, Any]) -> None:
    assert run["migrate1"].stdout == ""
    assert f"applied {len(NAMES)} migrations; {len(NAMES)} known" in run["migrate1"].stderr
    assert f"applied 0 migrations; {len(NAMES)} known" in run["migrate2"].stderr
    # one Migration node per migration, not one more after the second run
    assert run["stats1"]["nodes"].get("Migration") == len(NAMES)
    assert run["stats2"]["nodes"].get("Migration") == len(NAMES)
    # the second run rewrote nothing: same names, same applied_at
    assert run["status2_json"] == run["status1_json"]


def test_status_lists_each_migration_as_applied(run: dict[str, Any]) -> None:
    lines = run["status1"].splitlines()
    assert lines[0].startswith("server: ")
    listed = {}
    for line in lines[1:]:
        m = re.fullmatch(r"\s+(\S+): (\S+)", line)
        assert m, line
        listed[m.group(1)] = m.group(2)
    assert list(listed) == NAMES
    for name, when in listed.items():
        assert when != "pending", name
        assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", when), (name, when)
    as_json = run["status1_json"]
    assert set(as_json) == {"server", "migrations"} and as_json["server"]
    assert [m["name"] for m in as_json["migrations"]] == NAMES
    assert all(m["applied_at"] for m in as_json["migrations"])


def test_stats_json_is_one_object_of_counts_that_follow_an_ingest(run: dict[str, Any]) -> None:
    for key in ("stats1", "stats2", "stats3"):
        _stats_shape(run[key])
    assert run["ingest"]["ingested"] == 1 and run["ingest"]["failed"] == 0
    before, after = run["stats2"], run["stats3"]
    assert before["nodes"] == {"Migration": len(NAMES)}
    assert before["relationships"] == {}
    assert after["nodes"]["Document"] == 1
    assert after["nodes"]["Chunk"] >= 1
    assert after["relationships"]["PART_OF"] >= after["nodes"]["Chunk"]
    assert after["nodes"]["Migration"] == len(NAMES)
    # ingesting neither re-applies nor re-records migrations
    assert run["status3_json"] == run["status1_json"]


def test_db_documents_lists_the_ids_delete_takes(engine: Engine) -> None:
    from typer.testing import CliRunner

    from kgrag.cli import app

    store = engine.uri
    note = engine.folder / "note.txt"
    note.write_text("The zeppelin hangar opens at dawn.", encoding="utf-8")
    runner = CliRunner(env=engine.env())
    assert runner.invoke(app, ["ingest", str(note), "--store", store, "-q"]).exit_code == 0
    listed = runner.invoke(app, ["db", "documents", "--store", store, "--json"])
    assert listed.exit_code == 0, listed.output
    [doc] = json.loads(listed.stdout)["documents"]
    assert doc["uri"] == str(note.resolve()) and doc["modality"] == "text"
    assert runner.invoke(app, ["delete", doc["id"], "--store", store]).exit_code == 0
    again = runner.invoke(app, ["db", "documents", "--store", store, "--json"])
    assert json.loads(again.stdout)["documents"] == []
    missing = runner.invoke(app, ["delete", doc["id"], "--store", store])
    assert missing.exit_code != 0
