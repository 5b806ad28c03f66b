"""The server applies the trace retention of its settings by itself (issue 22, item 3), on each
engine: with ``trace_retention_days`` set, its background prune removes the traces of old
questions (here: every one but the newest, ``trace_retention_keep_last=1``) while documents,
chunks and entities stay exactly as they were, at the duty cycle of ``trace_prune_duty``. Without
the setting nothing is pruned."""

from __future__ import annotations

import time

from fastapi.testclient import TestClient

from kgrag.agent.agent import KnowledgeAgent
from kgrag.core import OPERATOR
from kgrag.executor.trace import read_trace
from kgrag.graph.store import GraphStore
from kgrag.modalities.text import default_text_embedder
from kgrag.server.app import create_app
from kgrag.server.state import server_state_of
from tests.support.engines import Engine

#: Trace labels; everything else (documents, chunks, entities...) is evidence or bookkeeping.
TRACE_LABELS = {"Query", "Plan", "Step", "Answer", "Session"}
QUESTIONS = (
    "Who wrote the first program?",
    "Who built the first compiler?",
    "What did Ada Lovelace write?",
)
#: A Host the server answers for.
LOCAL = "http://127.0.0.1"
#: Bound on the wait for the background prune (it runs every 0.2 s here).
WAIT_S = 60.0


def _ask(client: TestClient, question: str) -> str:
    r = client.post("/ask", json={"question": question})
    assert r.status_code == 200, r.text
    return str(r.json()["query_id"])


def _nodes(store: GraphStore) -> dict[str, int]:
    return {r["label"]: int(r["n"]) for r in store.read("stats_labels") if int(r["n"])}


def _evidence(store: GraphStore) -> dict[str, int]:
    """Node counts per label, traces left out."""
    return {k: v for k, v in _nodes(store).items() if k not in TRACE_LABELS}


def test_the_server_prunes_old_traces_in_the_background_and_keeps_the_evidence(
    engine: Engine,
) -> None:
    root = engine.folder / "docs"
    root.mkdir()
    (root / "ada.md").write_text(
        "# Ada Lovelace\n\nAda Lovelace wrote the first program for Charles Babbage's "
        "Analytical Engine in 1843.\n",
        encoding="utf-8",
    )
    (root / "grace.md").write_text(
        "# Grace Hopper\n\nGrace Hopper built the first compiler, the A-0 System, in 1952.\n",
        encoding="utf-8",
    )
    store = engine.open()
    with KnowledgeAgent(store, default_text_embedder()) as agent:
        assert agent.ingest([str(root)]).ingested == 2
        evidence = _evidence(store)

        # without a policy the server keeps every trace
        with TestClient(create_app(engine.settings(), agent=agent), base_url=LOCAL) as c:
            assert server_state_of(c.app.state).retention is None  # type: ignore[attr-defined]
            kept = _ask(c, QUESTIONS[0])
        assert read_trace(store, kept, OPERATOR)

        settings = engine.settings(
            trace_retention_days=0,
            trace_retention_keep_last=1,
            trace_retention_interval_s=0.2,
            trace_prune_duty=0.5,
        )
        with TestClient(create_app(settings, agent=agent), base_url=LOCAL) as c:
            asked = [_ask(c, q) for q in QUESTIONS]
            task = server_state_of(c.app.state).retention  # type: ignore[attr-defined]
            assert task is not None
            rounds = task.rounds
            deadline = time.monotonic() + WAIT_S
            while task.rounds < rounds + 1 or _nodes(store).get("Query") != 1:
                assert time.monotonic() < deadline, f"no prune: {_nodes(store)}"
                time.sleep(0.1)
            assert task.last is not None and task.last.duty == 0.5  # the setting's duty cycle
            assert [r["id"] for r in store.read_freeform("MATCH (q:Query) RETURN q.id AS id")] == [
                asked[-1]
            ]
            assert c.get(f"/queries/{asked[-1]}/trace").status_code == 200
            for gone in [kept, *asked[:-1]]:
                assert c.get(f"/queries/{gone}/trace").status_code == 404
        assert _evidence(store) == evidence
