"""Loads Cypher statements by name from the ``cypher/`` corpus.

Every statement kgrag runs lives in ``cypher/NAME.cypher`` in the Neo4j 5 dialect. A dialect may
overlay a statement with ``cypher/<dialect>/NAME.cypher``; only statements that must differ are
overlaid. In a wheel the corpus ships as ``kgrag/cypher``; in a source checkout it is the top-level
``cypher/`` folder.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from kgrag.errors import QueryRefusedError

_NAME = re.compile(r"^[a-z][a-z0-9_]*(/[a-z][a-z0-9_]*)?$")


@cache
def corpus_root() -> Traversable:
    """The folder holding the ``.cypher`` files."""
    packaged = resources.files("kgrag") / "cypher"
    if packaged.is_dir():
        return packaged
    source_tree = Path(__file__).resolve().parents[2] / "cypher"
    if source_tree.is_dir():
        return source_tree
    raise FileNotFoundError(
        "the Cypher corpus is missing: neither kgrag/cypher nor ./cypher exists"
    )


@cache
def load(name: str, overlays: tuple[str, ...] = ()) -> str:
    """The text of statement ``name``, taken from the first overlay that has it, else the base."""
    if not _NAME.match(name):
        raise QueryRefusedError(f"invalid Cypher statement name {name!r}")
    root = corpus_root()
    for overlay in (*overlays, ""):
        node = root / overlay / f"{name}.cypher" if overlay else root / f"{name}.cypher"
        if node.is_file():
            return _strip_comments(node.read_text(encoding="utf-8"))
    raise QueryRefusedError(f"unknown Cypher statement {name!r}: no file cypher/{name}.cypher")


def exists(name: str) -> bool:
    """Whether a base statement ``name`` exists (used to validate plan templates)."""
    return bool(_NAME.match(name)) and (corpus_root() / f"{name}.cypher").is_file()


def names(folder: str = "") -> Sequence[str]:
    """Names of the base statements in the corpus (or in one sub-folder)."""
    root = corpus_root() / folder if folder else corpus_root()
    prefix = f"{folder}/" if folder else ""
    return sorted(
        prefix + p.name.removesuffix(".cypher")
        for p in root.iterdir()
        if p.is_file() and p.name.endswith(".cypher")
    )


def _strip_comments(text: str) -> str:
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("//")]
    return "\n".join(lines).strip()
