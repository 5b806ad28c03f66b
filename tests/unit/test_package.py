"""What a user of the installed package relies on: the version, the typed marker, ``python -m``,
and install advice that works on the user's Python."""

from __future__ import annotations

import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import kgrag
from kgrag.errors import DependencyMissingError
from kgrag.graph.falkordb_store import falkordblite_install_command, falkordblite_missing_note

ROOT = Path(__file__).resolve().parents[2]


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
    assert "(" not in on_311  # nothing but the command: CI runs it as printed
    assert falkordblite_install_command((3, 12)) == "pip install 'falkordblite==0.11.0'"
    err = DependencyMissingError(
        "falkordblite", "all", command=on_311, note=falkordblite_missing_note((3, 11))
    )
    assert str(err).endswith(f"install it with: {on_311}") and "C compiler" in str(err)
    assert falkordblite_missing_note((3, 13)) is None
    assert str(DependencyMissingError("neo4j", "neo4j")).endswith("pip install 'kgrag[neo4j]'")


def _extras() -> tuple[set[str], dict[str, set[str]]]:
    """pyproject.toml's core requirement names and each extra's, self-references expanded."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

    def name(requirement: str) -> str:
        return re.split(r"[\[<>=;! ]", requirement, maxsplit=1)[0].lower().replace("_", "-")

    raw: dict[str, list[str]] = project["optional-dependencies"]

    def expand(extra: str) -> set[str]:
        names: set[str] = set()
        for requirement in raw[extra]:
            nested = re.fullmatch(r"kgrag\[(.*)\]", requirement)
            if nested:
                for inner in nested.group(1).split(","):
                    names |= expand(inner.strip())
            else:
                names.add(name(requirement))
        return names

    return {name(r) for r in project["dependencies"]}, {e: expand(e) for e in raw}


def test_every_missing_package_error_names_an_extra_that_installs_that_package() -> None:
    import ast

    core, extras = _extras()
    checked = 0
    for path in sorted((ROOT / "kgrag").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", None) == "DependencyMissingError"
            ):
                continue
            if any(k.arg == "command" for k in node.keywords):
                continue  # a command of its own (falkordblite on 3.11, torch to export ONNX)
            args = [a.value for a in node.args if isinstance(a, ast.Constant)]
            args += [k.value.value for k in node.keywords if isinstance(k.value, ast.Constant)]
            if len(args) < 2 or not all(isinstance(a, str) for a in args[:2]):
                continue  # the package or extra is computed (e.g. _require's parameters)
            package, extra = str(args[0]), str(args[1])
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            assert extra in extras, f"{where}: no extra {extra!r}"
            wanted = package.split("[")[0].lower().replace("_", "-")
            through = {("text", "torch")}  # sentence-transformers requires torch
            assert wanted in extras[extra] | core or (extra, wanted) in through, (
                f"{where}: kgrag[{extra}] lacks {package}"
            )
            checked += 1
    assert checked >= 15


def test_the_audio_extra_needs_no_torch() -> None:
    core, extras = _extras()
    assert "torch" not in extras["audio"] | extras["text-onnx"] | core
    assert "openai-whisper" in extras["whisper-torch"] and "whisper-torch" in str(
        DependencyMissingError("openai-whisper", "whisper-torch")
    )


def test_every_package_declares_its_public_names() -> None:
    missing = [
        str(init.relative_to(ROOT))
        for init in sorted((ROOT / "kgrag").rglob("__init__.py"))
        if "__all__" not in init.read_text(encoding="utf-8")
    ]
    assert missing == []


def test_the_reference_site_documents_every_public_name() -> None:
    pages = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs" / "api").glob("*.md"))
    documented = set(re.findall(r"^::: (kgrag[\w.]*)", pages, re.MULTILINE))
    assert {f"kgrag.{name}" for name in kgrag.__all__ if name != "KgragError"} <= documented
    assert "kgrag.errors" in documented  # KgragError and every subclass


def test_the_neo4j_extra_packs_bolt_messages_in_rust() -> None:
    # The pure-Python PackStream spent 12 of 16 s writing 10k chunks with 384-float embeddings
    # (bench/scale.py: 610 rows/s, 2,800 with the extension); the driver uses its Rust codec
    # only when neo4j-rust-ext of its own version is installed, silently falling back otherwise
    from neo4j._codec.packstream import v1

    _, extras = _extras()
    assert "neo4j-rust-ext" in extras["neo4j"]
    assert v1._rust_pack is not None, "neo4j-rust-ext is not installed for this driver"
    assert metadata.version("neo4j-rust-ext").startswith(metadata.version("neo4j"))
