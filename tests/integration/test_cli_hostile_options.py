"""Hostile values of the newer CLI options (``--ray-address``, ``--metrics-file``, ``traces prune
--older-than`` / ``--keep-last``, ``forget --user``): each is a usage error that names the option
and says what is wrong, exits 2 through ``kgrag.cli.main`` (as a script sees it), and leaves the
store as it was, on both engines. The store holds one document and one answered question, so a
prune or an erasure that ran anyway would show."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgrag.cli import app, main
from tests.support.engines import Engine

#: (arguments after the store's, the option named, a phrase of the reason)
RAY_ADDRESSES = [
    ("garbage", "is not a Ray address"),
    ("", "an empty Ray address"),
    ("127.0.0.1:99999", "port 99999 is not 1 to 65535"),
]
AGES = [
    ("-1d", "is not a number of days"),
    ("abc", "is not a number of days"),
    ("99999999d", "is not a number of days"),
    ("", "is not a number of days"),
    ("99999999", "0 to 36,500 days"),
    ("inf", "0 to 36,500 days"),
    ("nan", "0 to 36,500 days"),
    ("-1", "0 to 36,500 days"),
]
KEEP_LAST = [
    ("-1", "0 to 1,000,000,000"),
    ("99999999999999999999999", "0 to 1,000,000,000"),
]
DUTIES = [
    ("0", "must be 0.01 to 1, not 0.0"),
    ("0.001", "must be 0.01 to 1"),
    ("1.5", "must be 0.01 to 1"),
    ("-1", "must be 0.01 to 1"),
    ("nan", "must be 0.01 to 1"),
    ("inf", "must be 0.01 to 1"),
    ("half", "unable to parse string as a number"),
]
USERS = [
    ("", "must be non-empty"),
    ("   ", "without surrounding spaces"),
    ("ada\x01lovelace", "control characters"),
    ("ada\nlovelace", "control characters"),
    ("x" * 5000, "at most 1,024 bytes; this one has 5,000"),
]


@pytest.fixture(scope="module")
def stored(module_engine: Engine) -> Engine:
    """A store with one document and one question that user ``ada`` asked."""
    doc = module_engine.folder / "roster.txt"
    doc.write_text("Maintenance roster.\n\nThe Feed Pump FP-2 is maintained by Grace Hopper.\n")
    runner = CliRunner(env=module_engine.env())
    uri = module_engine.uri
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(module_engine.folder)
        done = runner.invoke(app, ["ingest", str(doc), "--store", uri, "-q"])
        assert done.exit_code == 0, done.output
        done = runner.invoke(app, ["ask", "Who maintains FP-2?", "--user", "ada", "--store", uri])
        assert done.exit_code == 0, done.output
    return module_engine


def _contents(engine: Engine) -> dict[str, int]:
    """Nodes per label and relationships per type."""
    with engine.open() as store:
        nodes = {f"node {r['label']}": r["n"] for r in store.read("stats_labels")}
        rels = {f"rel {r['type']}": r["n"] for r in store.read("stats_relationships")}
    return nodes | rels


def _refused(
    engine: Engine,
    args: list[str],
    option: str,
    reason: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``kgrag ARGS`` exits 2 with click's usage error naming ``option`` and ``reason``, and the
    store holds what it held before."""
    before = _contents(engine)
    assert before.get("node Query") == 1 and before.get("node Document") == 1, before
    for name, value in engine.env().items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(engine.folder)
    monkeypatch.setattr(sys, "argv", ["kgrag", *args])
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        main()
    stderr = " ".join(capsys.readouterr().err.split())  # rich wraps the usage box
    assert exited.value.code == 2, stderr
    assert f"Invalid value for '{option}'" in stderr, stderr
    assert reason in stderr, stderr
    assert "Traceback" not in stderr
    assert _contents(engine) == before


@pytest.mark.parametrize(("address", "reason"), RAY_ADDRESSES)
def test_a_bad_ray_address_is_refused_before_anything_is_ingested(
    stored: Engine,
    address: str,
    reason: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    new = stored.folder / "new.txt"
    new.write_text("A document that must not be stored.\n")
    args = ["ingest", str(new), f"--ray-address={address}", "--store", stored.uri]
    _refused(stored, args, "--ray-address", reason, monkeypatch, capsys)


@pytest.mark.parametrize(
    ("target", "reason"),
    [
        ("folder", "is a folder; give a file in it"),
        ("below-a-file", "is not a folder, so"),
        ("/proc/kgrag.prom", "cannot be written"),
    ],
)
def test_a_metrics_file_that_cannot_be_written_is_refused_before_the_command_runs(
    stored: Engine,
    target: str,
    reason: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The command here prunes every trace: refused first, it prunes none."""
    if target == "folder":
        path = tmp_path
    elif target == "below-a-file":
        (tmp_path / "a-file").write_text("x")
        path = tmp_path / "a-file" / "kgrag.prom"
    else:
        path = Path(target)
    args = ["--metrics-file", str(path), "traces", "prune", "--older-than", "0"]
    _refused(stored, [*args, "--store", stored.uri], "--metrics-file", reason, monkeypatch, capsys)
    assert sorted(p.name for p in tmp_path.iterdir()) in ([], ["a-file"])  # nothing left


@pytest.mark.parametrize(("age", "reason"), AGES)
def test_a_bad_prune_age_is_refused_and_nothing_is_pruned(
    stored: Engine,
    age: str,
    reason: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["traces", "prune", f"--older-than={age}", "--store", stored.uri]
    _refused(stored, args, "--older-than", reason, monkeypatch, capsys)


@pytest.mark.parametrize(("count", "reason"), KEEP_LAST)
def test_a_bad_keep_last_is_refused_and_nothing_is_pruned(
    stored: Engine,
    count: str,
    reason: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["traces", "prune", "--older-than", "0", f"--keep-last={count}", "--store", stored.uri]
    _refused(stored, args, "--keep-last", reason, monkeypatch, capsys)


@pytest.mark.parametrize(("duty", "reason"), DUTIES)
def test_a_bad_prune_duty_is_refused_and_nothing_is_pruned(
    stored: Engine,
    duty: str,
    reason: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["traces", "prune", "--older-than", "0", f"--duty={duty}", "--store", stored.uri]
    _refused(stored, args, "--duty", reason, monkeypatch, capsys)


@pytest.mark.parametrize(("user", "reason"), USERS, ids=["empty", "spaces", "soh", "lf", "huge"])
def test_a_bad_user_to_forget_is_refused_and_nothing_is_erased(
    stored: Engine,
    user: str,
    reason: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["forget", f"--user={user}", "--store", stored.uri]
    _refused(stored, args, "--user", reason, monkeypatch, capsys)
