"""Access control for every step type, on both engines (embedded FalkorDB, Neo4j): each plan below
would reach alice's private document (a text naming the Zephyr Turbine ZT-9 and a red-circle
drawing) if its reads were not filtered. Run as bob, no result, no statement parameter and no trace
node of any step holds anything of it; run as alice, the same plan does reach it, so every check
here can fail."""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterator, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")
pytest.importorskip("open_clip", reason="the image extra (open_clip_torch) is not installed")

from kgrag.agent.agent import KnowledgeAgent
from kgrag.agent.attachments import check_attachments
from kgrag.config import Settings
from kgrag.core import AccessContext, Hit
from kgrag.demo.shapes import draw_shape
from kgrag.executor.attachments import AttachmentInputs
from kgrag.executor.base import ExecutionEnv, StepOutcome
from kgrag.executor.scheduler import Executor
from kgrag.graph.store import GraphStore
from kgrag.modalities import factory
from kgrag.modalities.clip import tiny_clip_embedder
from kgrag.planner.models import Plan
from kgrag.tools import ToolContext, default_registry
from tests.support.across import (  # noqa: F401 (a fixture)
    compared_across_engines,
    outcomes_digest,
    same_on_both_engines,
)
from tests.support.engines import Engine

#: Plans run and answers given must be the same on both engines (tests/support/across.py).
pytestmark = pytest.mark.usefixtures("compared_across_engines")

PUBLIC = "The Feed Pump FP-2 is maintained by Grace Hopper. It moves water to the filters.\n"
PRIVATE = (
    "Project Heliotrope: the Zephyr Turbine ZT-9 is maintained by Hedy Lamarr. "
    "The Zephyr Turbine ZT-9 will replace the Feed Pump FP-2 next spring. "
    "Its badge is a Red Circle.\n"
)
SECRETS = ("heliotrope", "hedy", "zephyr", "zt9", "zt-9", "lamarr")
TURBINE = "zephyr turbine zt9"
PUMP = "feed pump fp2"
QUESTION = "Who maintains the Zephyr Turbine ZT-9?"

_V = {"step_id": 1, "type": "vector_search", "parameters": {"query": QUESTION, "k": 5}}
_E = {
    "step_id": 1,
    "type": "graph_query",
    "parameters": {"template": "entity_chunks", "params": {"entity_ids": [PUMP, TURBINE]}},
}


def _then(step: dict[str, Any]) -> list[dict[str, Any]]:
    return [_V, {"step_id": 2, "dependencies": [1], **step}]


#: One plan per step type (and per template of graph_query), the step under test last.
PLANS: dict[str, list[dict[str, Any]]] = {
    "vector_search text": [_V],
    "vector_search image": [
        {
            **_V,
            "modality": "image",
            "parameters": {"query": "a red circle", "index": "image_embedding"},
        }
    ],
    "vector_search entity_clip": [
        {**_V, "modality": "image", "parameters": {"query": "a red circle", "index": "entity_clip"}}
    ],
    "graph_query entity_chunks": [_E],
    "graph_query entity_images": [
        {
            **_E,
            "modality": "image",
            "parameters": {
                "template": "entity_images",
                "params": {"entity_ids": [TURBINE, "red circle"]},
            },
        }
    ],
    "graph_query entity_paths": [
        {
            **_E,
            "parameters": {
                "template": "entity_paths",
                "params": {"source": PUMP, "target": TURBINE},
            },
        }
    ],
    "graph_query chunks_fulltext": [
        {
            **_E,
            "parameters": {"template": "chunks_fulltext", "params": {"query": "turbine | pump"}},
        }
    ],
    "graph_query chunk_images": _then(
        {"type": "graph_query", "parameters": {"template": "chunk_images", "inputs": {"ids": 1}}}
    ),
    "multi_hop bridge": _then({"type": "multi_hop", "parameters": {"seeds_from": [1], "k": 5}}),
    "multi_hop pagerank": [
        _E,
        {
            "step_id": 2,
            "type": "multi_hop",
            "dependencies": [1],
            "parameters": {"seeds_from": [1], "hops": 3, "k": 5},
        },
    ],
    "filter": _then({"type": "filter", "parameters": {"source": 1}}),
    "rerank": _then({"type": "rerank", "parameters": {"sources": [1], "query": QUESTION}}),
    "aggregate": _then({"type": "aggregate", "parameters": {"sources": [1]}}),
    "llm_call": _then({"type": "llm_call", "parameters": {"prompt": "Summarise.", "sources": [1]}}),
    "tool_call cypher_template": [
        {
            "step_id": 1,
            "type": "tool_call",
            "parameters": {
                "tool": "cypher_template",
                "arguments": {
                    "template": "entity_chunks",
                    "params": {"entity_ids": [TURBINE, PUMP]},
                },
            },
        }
    ],
    "list_documents": [
        {"step_id": 1, "type": "list_documents", "parameters": {"about": ["turbine", "pump"]}}
    ],
    "document_summary": [
        {"step_id": 1, "type": "document_summary", "parameters": {"target": "zephyr turbine"}}
    ],
    "metadata_search": [
        {"step_id": 1, "type": "metadata_search", "parameters": {"modalities": ["text", "image"]}}
    ],
    "document_types": [{"step_id": 1, "type": "document_types", "parameters": {}}],
    "document_dates": [
        {"step_id": 1, "type": "document_dates", "parameters": {"target": "zephyr turbine"}}
    ],
    "document_authors": [
        {"step_id": 1, "type": "document_authors", "parameters": {"target": "zephyr turbine"}}
    ],
    "compare": [
        {
            "step_id": 1,
            "type": "compare",
            "parameters": {"sides": ["Zephyr Turbine ZT-9", "Feed Pump FP-2"]},
        }
    ],
    "image_embedding (query by example)": [
        {"step_id": 1, "type": "image_embedding", "modality": "image", "parameters": {"k": 5}}
    ],
    "demote": _then({"type": "demote", "parameters": {"source": 1, "document_ids": ["none"]}}),
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("acl-matrix")
    (root / "public.md").write_text(PUBLIC, encoding="utf-8")
    (root / "zephyr-turbine.md").write_text(PRIVATE, encoding="utf-8")
    rng = random.Random(3)
    draw_shape("red", "circle", rng).save(root / "secret_circle.png")
    draw_shape("blue", "square", rng).save(root / "blue_square.png")
    draw_shape("red", "circle", random.Random(8)).save(root / "query_circle.png")
    return root


@pytest.fixture(scope="module")
def store(folder: Path, module_engine: Engine) -> Iterator[GraphStore]:
    s = module_engine.open()
    agent = KnowledgeAgent(
        s, factory.text_embedder(Settings()), image_embedder=cache(tiny_clip_embedder)
    )
    assert agent.ingest([str(folder / "public.md"), str(folder / "blue_square.png")]).failed == 0
    private = [str(folder / "zephyr-turbine.md"), str(folder / "secret_circle.png")]
    assert agent.ingest(private, acl=["user:alice"]).failed == 0
    yield s
    s.close()


@pytest.fixture(scope="module")
def private_ids(store: GraphStore) -> set[str]:
    """Alice's document ids and the ids of every node of them and of entities only they name."""
    rows = store.read_freeform(
        "MATCH (d:Document) WHERE 'user:alice' IN d.acl "
        "OPTIONAL MATCH (x)-[:PART_OF]->(d) RETURN d.id AS d, collect(x.id) AS parts"
    )
    ids = {r["d"] for r in rows} | {p for r in rows for p in r["parts"]}
    assert len(rows) == 2 and len(ids) >= 4
    return ids


def _run(
    store: GraphStore, folder: Path, name: str, access: AccessContext
) -> dict[int, StepOutcome]:
    heard: list[Sequence[Hit]] = []

    def llm(prompt: str, evidence: Sequence[Hit], max_tokens: int) -> str:
        heard.append(evidence)  # what an LLM would be shown
        return " ".join(h.text or "" for h in evidence)

    embedder = factory.text_embedder(Settings())
    ctx = ToolContext(store=store, access=access, llm=None)
    env = ExecutionEnv(
        store=store,
        text_embedder=embedder,
        access=access,
        image_embedder=cache(tiny_clip_embedder),
        tools=default_registry().bind(ctx),
        llm=llm,
        attachments=AttachmentInputs(check_attachments([folder / "query_circle.png"], 10**7)),
    )
    return Executor(env).run(Plan.parse({"plan": PLANS[name]}))


def _dump(value: Any) -> str:
    return json.dumps(value, default=str).lower()


def _results(outcomes: dict[int, StepOutcome]) -> str:
    """Every step's hits, as one lower-case text."""
    return _dump([[h.model_dump() for h in o.result] for o in outcomes.values()])


def _parameters(outcomes: dict[int, StepOutcome]) -> str:
    """Every statement parameter the steps ran with and their trace details (what the trace
    stores beside the hits; they echo the plan's own words)."""
    return _dump([([params for _, params in o.statements], o.details) for o in outcomes.values()])


#: Words of alice's document that bob's plans never name themselves (they do name the turbine:
#: asking about something is not learning about it).
UNASKED = ("heliotrope", "hedy", "lamarr")


@pytest.mark.parametrize("name", sorted(PLANS))
def test_bob_gets_nothing_of_alices_document_from_any_step_type(
    store: GraphStore,
    folder: Path,
    private_ids: set[str],
    name: str,
    request: pytest.FixtureRequest,
) -> None:
    outcomes = _run(store, folder, name, AccessContext(user="bob"))
    same_on_both_engines(request, "outcomes", outcomes_digest(store, outcomes))
    last = outcomes[max(outcomes)]
    assert last.status == "ok", last.error
    ids = [i.lower() for i in private_ids]
    results, parameters = _results(outcomes), _parameters(outcomes)
    leaked = [s for s in (*SECRETS, *ids) if s in results]
    leaked += [s for s in (*UNASKED, *ids) if s in parameters]
    assert not leaked, (name, leaked)


@pytest.mark.parametrize("name", sorted(PLANS))
def test_the_same_plans_reach_it_for_alice(
    store: GraphStore,
    folder: Path,
    private_ids: set[str],
    name: str,
    request: pytest.FixtureRequest,
) -> None:
    outcomes = _run(store, folder, name, AccessContext(user="alice"))
    same_on_both_engines(request, "outcomes", outcomes_digest(store, outcomes))
    last = outcomes[max(outcomes)]
    assert last.status == "ok", last.error
    hits = [h for o in outcomes.values() for h in o.result]
    reached = {h.id for h in hits} | {h.document_id for h in hits if h.document_id}
    assert reached & private_ids or any(s in _results(outcomes) for s in SECRETS), name


def test_every_step_type_is_covered() -> None:
    from typing import get_args

    from kgrag.planner.params import StepType

    covered = {name.split()[0] for name in PLANS}
    assert set(get_args(StepType)) - covered == {"audio_transcription"}, covered
