"""Loads Cypher statements by name from the ``cypher/`` corpus.

Every statement kgrag runs lives in ``cypher/NAME.cypher`` in the Neo4j 5 dialect. A dialect may
overlay a statement with ``cypher/<dialect>/NAME.cypher``; only statements that must differ are
overlaid. In a wheel the corpus ships as ``kgrag/cypher``; in a source checkout it is the top-level
``cypher/`` folder.

Schema statements (``cypher/schema/``) must name labels, property keys and indexes, which Cypher
cannot take as parameters. They write each as a placeholder between backticks (``{{label}}``
quoted as an identifier), which keeps the file valid Cypher for the linter; :func:`render`
replaces it, backticks included, with an identifier that
:func:`kgrag.graph.schema.check_identifier` allows for that slot. Values are never substituted:
they stay ``$parameters``.

Each file's header comment declares whether running the statement twice leaves the graph as
running it once, as the line ``// idempotent: yes`` (or ``no``): :func:`idempotent` reads it, and
the stores repeat a write after a transient error only when it says yes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

from kgrag.errors import QueryRefusedError
from kgrag.graph.schema import check_identifier

_NAME = re.compile(r"^[a-z][a-z0-9_]*(/[a-z][a-z0-9_]*)?$")
#: An identifier placeholder: `{{slot}}`, backticks included.
_SLOT = re.compile(r"`\{\{([a-z_]+)\}\}`")
#: The header line declaring whether a statement may run twice (:func:`idempotent`).
_IDEMPOTENT = re.compile(r"^\s*//\s*idempotent:\s*(yes|no)\s*$")


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
    return _strip_comments(_source(name, overlays))


@cache
def idempotent(name: str, overlays: tuple[str, ...] = ()) -> bool:
    """Whether the file :func:`load` reads for ``name`` declares ``// idempotent: yes`` in its
    header comment: running it twice leaves the graph as running it once (a read, or a write of
    MERGEs and plain SETs), so a store may repeat it after a transient error. No declaration, or
    ``no``: never repeated."""
    declared = []
    for line in _source(name, overlays).splitlines():
        if not line.lstrip().startswith("//"):
            break  # the header is the comment lines before the statement
        found = _IDEMPOTENT.match(line)
        if found:
            declared.append(found.group(1))
    return declared == ["yes"]


def _source(name: str, overlays: tuple[str, ...]) -> str:
    """The file of statement ``name`` as written, comments included."""
    if not _NAME.match(name):
        raise QueryRefusedError(f"invalid Cypher statement name {name!r}")
    root = corpus_root()
    for overlay in (*overlays, ""):
        node = root / overlay / f"{name}.cypher" if overlay else root / f"{name}.cypher"
        if node.is_file():
            return node.read_text(encoding="utf-8")
    raise QueryRefusedError(f"unknown Cypher statement {name!r}: no file cypher/{name}.cypher")


def render(statement: str, overlays: tuple[str, ...] = (), /, **identifiers: str) -> str:
    """Statement ``statement`` (as :func:`load`) with each `{{slot}}` placeholder replaced by
    ``identifiers[slot]``. Every identifier given must be allowed for its slot
    (:func:`kgrag.graph.schema.check_identifier`); one the statement does not use is still
    checked, so a caller can pass the same identifiers to every dialect. A placeholder without an
    identifier, or a malformed one, is refused."""
    for slot, value in identifiers.items():
        check_identifier(slot, value)
    text = load(statement, overlays)

    def fill(match: re.Match[str]) -> str:
        slot = match.group(1)
        if slot not in identifiers:
            raise QueryRefusedError(
                f"Cypher statement {statement!r} needs an identifier for {slot!r}"
            )
        return identifiers[slot]

    out = _SLOT.sub(fill, text)
    if "{{" in out:
        raise QueryRefusedError(
            f"Cypher statement {statement!r} has a placeholder not written as `{{{{slot}}}}`"
        )
    return out


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
