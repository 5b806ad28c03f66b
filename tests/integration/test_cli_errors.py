"""The ``kgrag`` entry point as scripts see it: run as a subprocess so ``kgrag.cli.main`` turns
usage errors into click's usage message and exit 2, a KgragError into one stderr line and its
documented exit code (a traceback only with --debug), and ``kgrag trace`` shows each step's
status (the store it reads is built in-process, to load the models once), on both engines."""

from __future__ import annotations

import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgrag import errors
from kgrag.cli import app
from tests.support.engines import Engine

KGRAG = Path(sys.executable).parent / "kgrag"
README = Path(__file__).resolve().parents[2] / "README.md"


def _kgrag(*args: str, cwd: Path, engine: Engine | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(KGRAG), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, **(engine.env() if engine else {}), "OMP_NUM_THREADS": "1"},
        timeout=120,
        check=False,
    )


@pytest.fixture(scope="module")
def answered(module_engine: Engine) -> tuple[Engine, str, Path]:
    """A store (each engine in turn) with one small document and one answered question.

    Built in-process with CliRunner (one model load instead of one per subprocess), which also
    checks that ``-q`` is accepted after ``ingest`` and ``ask``."""
    root = module_engine.folder
    doc = root / "roster.txt"
    doc.write_text(
        "Maintenance roster.\n\nThe Feed Pump FP-2 is maintained by Grace Hopper, who also keeps "
        "the spare seals.\n"
    )
    uri = module_engine.uri
    runner = CliRunner(env=module_engine.env())
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        ingested = runner.invoke(app, ["ingest", str(doc), "--store", uri, "-q"])
        assert ingested.exit_code == 0, ingested.output
        assert ingested.stderr == ""  # no progress, no summary
        asked = runner.invoke(
            app, ["ask", "Who maintains the Feed Pump FP-2?", "--store", uri, "-q"]
        )
        assert asked.exit_code == 0, asked.output
    assert "plan" not in asked.stderr and "step " not in asked.stderr, asked.stderr
    found = re.search(r"kgrag trace (q_\w+)", asked.stdout)
    assert found, asked.stdout
    return module_engine, found.group(1), root


def test_the_binary_is_next_to_the_interpreter() -> None:
    assert KGRAG.exists(), f"{KGRAG} missing: install the project into this venv"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--nope"], "No such option: --nope"),
        (["ask", "x", "--nope"], "No such option: --nope"),
        (["serve", "--port", "99999"], "Invalid value for '--port'"),
    ],
)
def test_usage_errors_show_the_usage_and_exit_2(
    args: list[str], message: str, tmp_path: Path
) -> None:
    done = _kgrag(*args, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Usage: kgrag" in done.stderr
    assert "--help' for help" in done.stderr
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_a_missing_query_id_is_one_line_and_the_not_found_code(
    answered: tuple[Engine, str, Path],
) -> None:
    engine, _, root = answered
    done = _kgrag("trace", "q_doesnotexist", "--store", engine.uri, cwd=root, engine=engine)
    assert done.returncode == errors.NotFoundError.exit_code == 8, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: ") and "q_doesnotexist" in lines[0]
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


def test_debug_shows_the_traceback(answered: tuple[Engine, str, Path]) -> None:
    engine, _, root = answered
    done = _kgrag(
        "--debug", "trace", "q_doesnotexist", "--store", engine.uri, cwd=root, engine=engine
    )
    assert done.returncode != 0
    assert "Traceback" in done.stderr
    assert "NotFoundError" in done.stderr


def test_trace_tree_shows_each_steps_status(answered: tuple[Engine, str, Path]) -> None:
    engine, query_id, root = answered
    done = _kgrag("trace", query_id, "--store", engine.uri, cwd=root, engine=engine)
    assert done.returncode == 0, done.stderr
    assert query_id in done.stdout
    assert "[ok]" in done.stdout, done.stdout


def test_readme_lists_every_exit_code_of_the_error_tree() -> None:
    codes = {
        cls.exit_code
        for _, cls in inspect.getmembers(errors, inspect.isclass)
        if issubclass(cls, errors.KgragError)
    }
    table = {int(m) for m in re.findall(r"^\| (\d+) \|", README.read_text(), re.MULTILINE)}
    assert codes <= table, f"README's exit-code table lacks {sorted(codes - table)}"


def test_store_errors_are_one_line_and_the_store_code(engine: Engine) -> None:
    """An embedding-space mismatch (the store holds vectors of another model) on both engines,
    and on Neo4j a refused login: one line naming the cause, exit 4, no traceback."""
    from kgrag.graph.spaces import EmbeddingSpace, ensure_space

    with engine.open() as store:
        ensure_space(store, EmbeddingSpace(name="text", model="another-model", dimensions=16))
    note = engine.folder / "note.txt"
    note.write_text("The zeppelin hangar opens at dawn.", encoding="utf-8")
    done = _kgrag("ingest", str(note), "--store", engine.uri, cwd=engine.folder, engine=engine)
    assert done.returncode == errors.StoreError.exit_code == 4, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert "another-model" in lines[0], lines[0]
    if engine.is_neo4j:
        wrong = {**engine.env(), "KGRAG_NEO4J_PASSWORD": "not-the-password"}
        refused = subprocess.run(
            [str(KGRAG), "db", "stats", "--store", engine.uri],
            capture_output=True,
            text=True,
            cwd=engine.folder,
            env={**os.environ, **wrong},
            timeout=120,
            check=False,
        )
        assert refused.returncode == 4, refused.stderr
        assert len(refused.stderr.splitlines()) == 1, refused.stderr
        assert "KGRAG_NEO4J_PASSWORD" in refused.stderr
