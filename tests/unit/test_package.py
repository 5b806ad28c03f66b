"""What a user of the installed package relies on: the version, the typed marker, ``python -m``,
and install advice that works on the user's Python."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

import kgrag
from kgrag.errors import DependencyMissingError
from kgrag.graph.falkordb_store import falkordblite_install_command


def test_the_version_is_the_installed_distribution_s() -> None:
    assert kgrag.__version__ == metadata.version("kgrag")


def test_the_package_is_marked_typed() -> None:
    assert (Path(kgrag.__file__).parent / "py.typed").is_file()


def test_python_dash_m_runs_the_cli() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kgrag", "--help"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "ingest" in done.stdout and "ask" in done.stdout


def test_embedded_engine_advice_works_on_each_python() -> None:
    # kgrag[all] skips falkordblite below 3.12 (its sdist declares >= 3.12): advice for 3.11
    # must not send the user back to kgrag[all]
    on_311 = falkordblite_install_command((3, 11))
    assert "kgrag[all]" not in on_311
    assert "--ignore-requires-python" in on_311 and "falkordblite==" in on_311
    assert falkordblite_install_command((3, 12)) == "pip install 'kgrag[all]'"
    err = DependencyMissingError("falkordblite", "all", command=on_311)
    assert str(err).endswith(on_311)
    assert str(DependencyMissingError("neo4j", "neo4j")).endswith("pip install 'kgrag[neo4j]'")
