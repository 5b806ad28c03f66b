"""Nothing in the question path scans the whole corpus (issue 17), on both engines.

A content question, a listing question, a picture question, a summary question, a comparison
question and a question naming a file are asked through the real agent on
a small store; every statement the question path reads with (``GraphStore.read``: the executor's
steps, entity resolution, answer and memory lookups) is recorded with its parameters, then
explained by the engine (Neo4j ``EXPLAIN``, FalkorDB ``GRAPH.EXPLAIN``). A plan fails when it
scans every node, every relationship, or every node (or index entry) of a corpus label, so its
cost grows with the corpus instead of with what the question finds. A statement that must look
at every document by nature is listed in ``EXEMPT`` with the reason.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from functools import cache
from typing import Any

import pytest

pytest.importorskip("open_clip", reason="the image extra (open_clip_torch) is not installed")

from kgrag.agent.agent import KnowledgeAgent
from kgrag.config import Settings
from kgrag.demo.shapes import draw_shape
from kgrag.graph.store import GraphStore, PlanOperator
from kgrag.modalities import factory
from kgrag.modalities.base import TextEmbedder
from kgrag.modalities.clip import tiny_clip_embedder
from tests.support.engines import Engine

CORPUS_LABELS = ("Chunk", "Entity", "Document", "Image")
CONTENT = "Who maintains the Feed Pump FP-2?"
LISTING = "List the documents."
PICTURE = "Show me a picture of a red circle."
SUMMARY = "Summarise the document about the feed pump."
COMPARISON = "Compare Ada Okafor and Brian Keller."
NAMED_FILE = "What does pumps.md say about the bearing?"
TYPES = "What types of files do you have?"
QUESTIONS = (CONTENT, LISTING, PICTURE, SUMMARY, COMPARISON, NAMED_FILE, TYPES)

#: Statements allowed to scan a corpus label, with the reason.
EXEMPT: dict[str, str] = {
    "documents_by_metadata": "a listing filters every readable document by modality, tags and "
    "date and sorts them by date: O(documents) by nature (it returns at most $k)",
    "documents_by_type": "a breakdown of the collection by type counts every readable document "
    "(its own properties, no traversal): O(documents) by nature, like a listing",
    "templates/file_images": "as templates/file_chunks, for the pictures of a named file",
    "templates/named_images": "a picture question compares its words with every readable "
    "picture document's title (its own property, no traversal): O(picture documents), as "
    "templates/file_images, and planned only for picture questions that name something",
    "templates/recording_segments": "a question about the recording reads which readable "
    "documents are recordings (their own property, no traversal): O(documents), and planned "
    "only for questions about recordings",
    "templates/file_chunks": 'a question naming a file ("what does pumps.md say?") compares '
    "the name with every readable document's URI (its own property, no traversal): "
    "O(documents), and planned only when the question names a file",
    "documents_about": "a listing or summary about some words compares them with every readable "
    "document's title, tags, summary and path (its own properties, no traversal): O(documents) "
    "by nature, like a listing; the documents of named entities come from an index seek "
    "(documents_about_entities)",
}

#: The executor's other reads of a content or picture question (expansion, materialising hits,
#: entity and image templates, widening a vector search), which the small questions above need
#: not reach; explained with parameters of the right types.
MORE_STATEMENTS = (
    "document_passages_near",
    "chunk_passages_near",
    "documents_about_entities",
    "chunks_by_ids",
    "bridge_entities",
    "expand_entities_of_chunks",
    "expand_next_chunks",
    "expand_from_entities",
    "entity_by_ids",
    "entity_readable",
    "templates/entity_chunks",
    "templates/image_entities",
    "templates/chunk_images",
    "vector_index_size_chunks",
    "vector_index_size_images",
    "vector_index_size_entities",
)
PARAMS: dict[str, Any] = {
    "ids": ["x"],
    "entity_ids": ["x"],
    "document_ids": ["x"],
    "vector": [0.5, 0.5],
    "admin": False,
    "principals": ["*"],
    "question": "x",
    "k": 5,
    "fanout": 3,
}

# Neo4j: AllNodesScan, NodeByLabelScan, NodeIndexScan (every entry of an index), relationship
# scans; FalkorDB: All Node Scan, Node By Label Scan, Node By Index Scan without a filter.
_WHOLE_GRAPH = re.compile(r"^(AllNodesScan|All Node Scan|\w*AllRelationshipsScan)$")
_LABEL_SCAN = re.compile(
    r"^(NodeByLabelScan|Node By Label Scan|NodeIndexScan|\w*RelationshipTypeScan)$"
)


@cache
def _text_embedder() -> TextEmbedder:
    return factory.text_embedder(Settings())


def scans(plan: list[PlanOperator]) -> list[PlanOperator]:
    """The operators of ``plan`` that read every node, relationship or corpus-label node."""

    def corpus_label(op: PlanOperator) -> bool:
        return any(re.search(rf":{label}\b", op.details) for label in CORPUS_LABELS)

    return [
        op
        for op in plan
        if _WHOLE_GRAPH.match(op.name) or (_LABEL_SCAN.match(op.name) and corpus_label(op))
    ]


@pytest.fixture(scope="module")
def recorded(
    module_engine: Engine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[GraphStore, dict[str, dict[str, dict[str, Any]]]]]:
    """The store, and per question the statements its answer read, with their parameters."""
    folder = tmp_path_factory.mktemp("scan-corpus")
    (folder / "pumps.md").write_text(
        "The Feed Pump FP-2 at the Northfield Plant failed in March because of a worn bearing.\n",
        encoding="utf-8",
    )
    (folder / "people.md").write_text(
        "Ada Okafor maintains the Feed Pump FP-2 and reports to Brian Keller.\n", encoding="utf-8"
    )
    draw_shape("red", "circle", random.Random(3)).save(folder / "red_circle.png")
    store = module_engine.open()
    agent = KnowledgeAgent(store, _text_embedder(), image_embedder=cache(tiny_clip_embedder))
    assert agent.ingest([str(folder)]).failed == 0
    seen: dict[str, dict[str, dict[str, Any]]] = {}
    read = store.read

    def recording(name: str, params: Any = None) -> Any:
        seen[current].setdefault(name, dict(params or {}))
        return read(name, params)

    store.read = recording  # type: ignore[method-assign]
    try:
        for current in QUESTIONS:
            seen[current] = {}
            agent.ask(current)
    finally:
        store.read = read  # type: ignore[method-assign]
    yield store, seen
    store.close()


@pytest.mark.parametrize("question", QUESTIONS)
def test_question_path_statements_seek_instead_of_scanning(
    recorded: tuple[GraphStore, dict[str, dict[str, dict[str, Any]]]], question: str
) -> None:
    store, seen = recorded
    statements = seen[question]
    assert statements, f"{question!r} read nothing: the recording missed the question path"
    offending = {}
    for name, params in sorted(statements.items()):
        plan = store.explain(name, params)
        assert plan, f"{name}: the engine gave no plan"
        found = scans(plan)
        if found and name not in EXEMPT:
            offending[name] = [f"{op.name} {op.details}" for op in found]
    assert not offending, f"{question!r}: statements scanning the corpus: {offending}"


def test_the_document_tools_are_on_the_recorded_paths(
    recorded: tuple[GraphStore, dict[str, dict[str, dict[str, Any]]]],
) -> None:
    """The summary and comparison questions reach the document tools' reads, so the check above
    explains them (a change of routing would otherwise leave them unchecked)."""
    _store, seen = recorded
    assert {"documents_about", "fulltext_entities"} <= set(seen[SUMMARY]), sorted(seen[SUMMARY])
    assert (
        "document_passages_near" in seen[COMPARISON] or "chunk_passages_near" in seen[COMPARISON]
    ), sorted(seen[COMPARISON])
    assert "templates/file_chunks" in seen[NAMED_FILE], sorted(seen[NAMED_FILE])
    assert "documents_by_type" in seen[TYPES], sorted(seen[TYPES])


@pytest.mark.parametrize("name", MORE_STATEMENTS)
def test_the_executors_other_reads_seek_instead_of_scanning(
    recorded: tuple[GraphStore, dict[str, dict[str, dict[str, Any]]]], name: str
) -> None:
    store, _seen = recorded
    plan = store.explain(name, PARAMS)
    assert plan, f"{name}: the engine gave no plan"
    assert not scans(plan), f"{name} scans the corpus: {plan}"


def test_the_check_sees_a_scan(
    recorded: tuple[GraphStore, dict[str, dict[str, dict[str, Any]]]],
) -> None:
    """The detector itself: a statement that lists every document is a label scan."""
    store, _seen = recorded
    plan = store.explain("document_list", {"principals": [], "admin": True})
    assert [op.name for op in scans(plan)], plan
