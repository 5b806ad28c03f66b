"""Vector searches apply the ACL filter before the top k (issue 14, item 4): a reader's hits, their
count and their order, do not depend on documents they cannot read, even when a thousand private
vectors lie nearer the query than every readable one (more than the 200-wide first search). On
every engine (Neo4j 2026's SEARCH form too). Before the fix the reader got the public hits left
over in the first 200 (here: none)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kgrag.core import AccessContext
from kgrag.executor.base import ExecutionEnv
from kgrag.executor.nearest import BEAM, read_nearest
from kgrag.executor.scheduler import Executor
from kgrag.graph.spaces import EmbeddingSpace, ensure_space
from kgrag.graph.store import GraphStore
from kgrag.modalities.base import TextEmbedder
from kgrag.modalities.text import default_text_embedder
from kgrag.planner.models import Plan
from tests.security.principals import PUBLIC_ACL, user_acl
from tests.support.documents import begin_document
from tests.support.engines import CONTRACT_ENGINE_PARAMS, Engine, engine_for

K = 10
QUESTION = "When is the cooling pump serviced?"
PRIVATE = 1_000  # nearer the query than every public chunk, and more than BEAM


class _AsReader:
    """Reads as one reader, as the executor's recorder does (its access added to every read)."""

    def __init__(self, store: GraphStore, access: AccessContext) -> None:
        self.store, self.access, self.reads = store, access, 0

    def read(self, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        self.reads += 1
        return self.store.read(name, {**params, **self.access.params()})


@pytest.fixture(scope="module")
def embedder() -> TextEmbedder:
    return default_text_embedder()


@pytest.fixture(params=CONTRACT_ENGINE_PARAMS)
def store(
    request: pytest.FixtureRequest, tmp_path: Path, embedder: TextEmbedder
) -> Iterator[GraphStore]:
    engine: Engine = engine_for(request.param, tmp_path)
    engine.reset()
    s = engine.open()
    ensure_space(s, EmbeddingSpace.of("text", embedder))
    yield s
    s.close()


def _unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=-1, keepdims=True)


def _document(store: GraphStore, doc_id: str, acl: list[str], vectors: np.ndarray) -> None:
    begin_document(store, doc_id, acl)
    rows = [
        {"id": f"{doc_id}:c{i}", "text": f"chunk {i}", "position": i, "embedding": v.tolist()}
        for i, v in enumerate(vectors)
    ]
    for start in range(0, len(rows), 250):
        store.write_rows("chunk_upsert", rows[start : start + 250], params={"document_id": doc_id})
    store.write(
        "documents_complete", {"rows": [{"id": doc_id, "chunk_count": len(rows), "image_count": 0}]}
    )


def test_a_reader_gets_k_readable_hits_whatever_lies_nearer(
    store: GraphStore, embedder: TextEmbedder
) -> None:
    """Through the executor's vector_search step, with the real text embedder."""
    rng = np.random.default_rng(7)
    query = np.asarray(embedder.embed([QUESTION])[0], dtype=np.float32)
    dim = query.shape[0]
    public = _unit(rng.normal(size=(40, dim)).astype(np.float32))
    # the public chunks' exact order, as it is in a store without the private document
    expected = [f"pub:c{i}" for i in np.argsort(-(public @ query))[:K]]
    _document(store, "pub", PUBLIC_ACL, public)
    near = _unit(query + 0.01 * rng.normal(size=(PRIVATE, dim)).astype(np.float32))
    assert float((near @ query).min()) > float((public @ query).max())  # all nearer
    _document(store, "priv", user_acl("alice"), near)
    assert PRIVATE > BEAM
    plan = Plan.parse(
        {
            "plan": [
                {
                    "step_id": 1,
                    "type": "vector_search",
                    "parameters": {"query": QUESTION, "k": K},
                    "dependencies": [],
                }
            ]
        }
    )

    def run(access: AccessContext) -> list[str]:
        env = ExecutionEnv(store=store, text_embedder=embedder, access=access)
        outcome = Executor(env).run(plan)[1]
        assert outcome.status == "ok", outcome.error
        return (
            [h.document_id or "" for h in outcome.result]
            if access.user == "alice"
            else [h.id for h in outcome.result]
        )

    assert run(AccessContext(user="bob")) == expected
    # alice, who may read the private chunks, gets them first (so the filter is the difference)
    assert run(AccessContext(user="alice")) == ["priv"] * K


def test_fewer_readable_vectors_than_k_end_the_search(
    store: GraphStore, embedder: TextEmbedder
) -> None:
    rng = np.random.default_rng(3)
    vectors = _unit(rng.normal(size=(5, embedder.dimensions)).astype(np.float32))
    _document(store, "pub", PUBLIC_ACL, vectors)
    anyone = _AsReader(store, AccessContext())
    assert len(read_nearest(anyone, "vector_chunks", vectors[0].tolist(), K)) == 5
    assert anyone.reads == 2  # the search, then the index size: nothing more to widen to
