"""Entity lookup folds accents (kgrag.text.folding), on both engines: a question naming "Dvorak",
"Citroen" or "Zurich Insurance" resolves the entities "Antonín Dvořák", "André Citroën" and
"Zürich Insurance Group" the extractor found in real paragraphs, one naming "Øresund" the entity
written "Oresund Bridge"; the document tools' term lookup and multi-hop's bridges read the folded
names too. A store written before the folded names existed (its entities without them,
migration 0012_folded_names unrecorded) is folded when it is opened, and ingesting the names
again, accented or not, adds no entity."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.agent.entities import GraphEntityLookup
from kgrag.core import AccessContext
from kgrag.executor.document_reads import term_entity_ids
from kgrag.graph.store import GraphStore
from kgrag.modalities.text import default_text_embedder
from kgrag.planner.analysis import resolve_mentions
from kgrag.text.folding import fold
from tests.support.engines import Engine
from tests.support.raw import as_before, open_migrates

MIGRATION = "0012_folded_names"
READER = AccessContext(user="reader")
FILES = {
    "citroen.txt": (
        "Citroën is a French automobile brand. André Citroën founded the company in 1919 in "
        "Paris, after running a munitions factory during the war. The composer Antonín Dvořák "
        "had visited Paris in 1884.\n"
    ),
    "zurich.txt": (
        "Zürich is the largest city in Switzerland. The Zürich Insurance Group was founded "
        "there in 1872, and the Zürich Opera House stands on the lake shore.\n"
    ),
    "bridge.txt": "The Oresund Bridge links Copenhagen and Malmo across the strait.\n",
}


@pytest.fixture(scope="module")
def folder(module_engine: Engine, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The files, written anew for each engine (the last test changes them)."""
    path = tmp_path_factory.mktemp(f"accented_names_{module_engine.name}")
    for name, text in FILES.items():
        (path / name).write_text(text, encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def agent(module_engine: Engine, folder: Path) -> Iterator[KnowledgeAgent]:
    store = module_engine.open()
    with KnowledgeAgent(store, default_text_embedder()) as a:
        report = a.ingest([str(folder)])
        assert report.ingested == len(FILES), report.failures
        yield a


def _resolved(store: GraphStore, surface: str) -> set[str]:
    return {e.id for e in GraphEntityLookup(store, READER).resolve([surface])}


def _entities(store: GraphStore) -> dict[str, Any]:
    rows = store.read_freeform(
        "MATCH (e:Entity) RETURN e.id AS id, e.name AS name, e.name_folded AS folded"
    )
    return {r["id"]: (r["name"], r["folded"]) for r in rows}


@pytest.mark.parametrize(
    ("surface", "entity"),
    [
        # a part of the name, typed without its accents or with them
        ("Dvorak", "antonin dvorak"),
        ("Dvořák", "antonin dvorak"),
        ("Citroen", "andre citroen"),
        ("Zurich Insurance", "zurich insurance group"),
        ("Zürich Insurance", "zurich insurance group"),
        # typed with an accent, the name written without (ø has no decomposition: not the id)
        ("Øresund", "oresund bridge"),
    ],
)
def test_a_mention_finds_the_entity_whichever_way_its_accents_are_written(
    agent: KnowledgeAgent, surface: str, entity: str
) -> None:
    assert _resolved(agent.store, surface) == {entity}


def test_a_question_resolves_the_accented_entity_it_names_without_accents(
    agent: KnowledgeAgent,
) -> None:
    lookup = GraphEntityLookup(agent.store, READER)
    resolved = resolve_mentions("When did Dvorak visit Paris?", lookup)
    assert {e.id for e in resolved} == {"antonin dvorak", "paris"}
    assert "andre citroen" in {e.id for e in resolve_mentions("Who founded Citroen?", lookup)}


def test_the_document_tools_find_the_entity_by_a_folded_term(agent: KnowledgeAgent) -> None:
    assert term_entity_ids(agent.store, ["dvorak"]) == ["antonin dvorak"]
    assert term_entity_ids(agent.store, ["Citroën"]) == ["andre citroen"]


def test_an_entity_the_question_names_without_accents_is_no_bridge(agent: KnowledgeAgent) -> None:
    chunks = [
        r["id"] for r in agent.store.read_freeform("MATCH (c:Chunk) RETURN c.id AS id ORDER BY id")
    ]
    # the question as the multi-hop handler passes it: folded (kgrag.executor.handlers)
    params = {"ids": chunks, "k": 50, **READER.params()}
    bridges = agent.store.read(
        "bridge_entities", {**params, "question": fold("Who founded the Zurich Insurance Group?")}
    )
    names = {r["id"] for r in bridges}
    assert "zurich insurance group" not in names
    assert {"switzerland", "andre citroen"} <= names


def test_a_store_written_before_folded_names_is_folded_when_opened(
    agent: KnowledgeAgent, module_engine: Engine
) -> None:
    before = _entities(agent.store)
    assert before["antonin dvorak"] == ("Antonín Dvořák", "Antonin Dvorak")
    assert before["oresund bridge"] == ("Oresund Bridge", None)  # ASCII: no folded copy
    as_before(agent.store, MIGRATION, "MATCH (e:Entity) REMOVE e.name_folded")
    assert _resolved(agent.store, "Dvorak") == set()
    open_migrates(module_engine, MIGRATION)
    assert _entities(agent.store) == before
    assert _resolved(agent.store, "Dvorak") == {"antonin dvorak"}


def test_ingesting_the_names_again_adds_no_entity(agent: KnowledgeAgent, folder: Path) -> None:
    before = _entities(agent.store)
    # the same paragraph changed (re-ingested), and the names written without accents
    changed = folder / "citroen.txt"
    changed.write_text(FILES["citroen.txt"] + "Citroën built the Traction Avant.\n", "utf-8")
    plain = folder / "plain.txt"
    plain.write_text("Antonin Dvorak wrote music; Andre Citroen built cars in Zurich.\n", "utf-8")
    report = agent.ingest([str(changed), str(plain)])
    assert report.ingested == 2, report.failures
    after = _entities(agent.store)
    assert set(after) - set(before) <= {"traction avant"}, set(after) - set(before)
    for key in ("antonin dvorak", "andre citroen", "zurich"):
        assert sum(1 for k in after if fold(k) == key) == 1
        # the display name is the best form offered (the ASCII one sorts first at the same
        # rank): its folded copy goes with it, None when it has no accents
        name, folded = after[key]
        assert folded == (None if name.isascii() else fold(name))
    assert _resolved(agent.store, "Dvořák") == {"antonin dvorak"}
