"""Issue 4's "done when" checks on both engines (embedded FalkorDB, Neo4j) with real MiniLM
embeddings and a small corpus ingested through the real Ingestor: a conditional fallback step is
taken only when the first search is empty; a cyclic plan is refused naming the step; injection
attempts (labels, template names, quotes and Cypher in parameters, ACL parameters) are refused or
are just values; an LLM plan's fallback reason reaches the stored trace; and ``kgrag ask --json``
then ``kgrag trace ID --json`` show the steps, their dependencies, their Cypher and their
evidence."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from kgrag.core import OPERATOR, AccessContext
from kgrag.errors import PlanError, QueryRefusedError
from kgrag.executor.base import ExecutionEnv, StepOutcome
from kgrag.executor.scheduler import Executor
from kgrag.executor.trace import TraceWriter, read_trace
from kgrag.graph import cypher
from kgrag.graph.spaces import EmbeddingSpace, ensure_space
from kgrag.graph.store import GraphStore
from kgrag.ingest.entities import RuleEntityExtractor
from kgrag.ingest.pipeline import IngestOptions, Ingestor
from kgrag.llm import LLMClient
from kgrag.modalities.base import TextEmbedder
from kgrag.modalities.text import default_text_embedder
from kgrag.planner.analysis import analyse
from kgrag.planner.llm import llm_plan
from kgrag.planner.models import Plan
from kgrag.planner.rule import rule_plan
from tests.support.across import compared_across_engines, same_on_both_engines, shared_folder  # noqa: F401 (a fixture)
from tests.support.engines import Engine
from tests.support.openai_server import LocalOpenAIServer

#: Plans run and answers given must be the same on both engines (tests/support/across.py).
pytestmark = pytest.mark.usefixtures("compared_across_engines")

CORPUS = {
    "pumps.txt": (
        "The Feed Pump FP-2 at the Northfield Plant failed in March because of a worn bearing. "
        "The maintenance meeting agreed to replace the Feed Pump FP-2 with a new unit."
    ),
    "people.txt": (
        "Ada Okafor maintains the Feed Pump FP-2 and the cooling loop. "
        "Ada Okafor reports to Brian Keller, the plant manager of the Northfield Plant."
    ),
    "weather.txt": (
        "Heavy rain flooded the car park of the Riverside Office in April. "
        "The office closed for two days while the drains were cleared."
    ),
}
SECRET = {
    "secret.txt": "The Zephyr Project budget is forty million and only the board knows it.",
}
INJECTION = "\"') MATCH (n) DETACH DELETE n //"


def _write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def embedder() -> TextEmbedder:
    return default_text_embedder()


@pytest.fixture(scope="module")
def store(
    module_engine: Engine, embedder: TextEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[GraphStore]:
    # the same paths for both engines (tests/support/across.py)
    root = shared_folder(tmp_path_factory, "test_executor_plans")
    s = module_engine.open()
    ensure_space(
        s, EmbeddingSpace(name="text", model=embedder.model_name, dimensions=embedder.dimensions)
    )
    options = IngestOptions(image_dir=module_engine.folder / "images")
    ingestor = Ingestor(s, embedder, RuleEntityExtractor(), options=options)
    public = ingestor.ingest_paths([str(_write(root / "corpus", CORPUS))])
    secret = ingestor.ingest_paths([str(_write(root / "secret", SECRET))], acl=["group:board"])
    assert public.ingested == 3 and public.failed == 0, public.failures
    assert secret.ingested == 1, secret.failures
    yield s
    s.close()


def _env(store: GraphStore, embedder: TextEmbedder, **access: Any) -> ExecutionEnv:
    return ExecutionEnv(store=store, text_embedder=embedder, access=AccessContext(**access))


def _step(
    sid: int,
    kind: str,
    params: dict[str, Any],
    deps: list[int] | None = None,
    condition: str | None = None,
) -> dict[str, Any]:
    return {
        "step_id": sid,
        "type": kind,
        "parameters": params,
        "dependencies": deps or [],
        "condition": condition,
        "trace": {"source": "test", "explanation": f"step {sid}"},
    }


def _counts(store: GraphStore) -> dict[str, int]:
    labels = {r["label"]: r["n"] for r in store.read("stats_labels")}
    rels = {r["type"]: r["n"] for r in store.read("stats_relationships")}
    return {**labels, **{f"rel:{k}": v for k, v in rels.items()}}


def _trace(store: GraphStore, query_id: str, plan: Plan, outcomes: dict[int, StepOutcome]) -> Any:
    writer = TraceWriter(store)
    writer.write_query(query_id, "test", user=None, groups=(), planner="test")
    writer.write_plan(query_id, f"{query_id}:plan", plan, outcomes, source="rule")
    return {s["step_id"]: s for s in read_trace(store, query_id, OPERATOR).to_json()["steps"]}


# --------------------------------------------------------------------- conditional fallback


def _fallback_plan(document_ids: list[str]) -> Plan:
    return Plan.parse(
        {
            "plan": [
                _step(1, "vector_search", {"query": "Why did the feed pump fail?", "k": 5}),
                _step(2, "filter", {"source": 1, "document_ids": document_ids}, [1]),
                _step(
                    3,
                    "vector_search",
                    {"query": "pump bearing failure replacement", "k": 10},
                    [2],
                    condition="len(step_2.result) == 0",
                ),
                _step(
                    4,
                    "rerank",
                    {"sources": [2], "query": "Why did the feed pump fail?", "k": 3},
                    [2],
                    condition="len(step_2.result) > 0",
                ),
                _step(
                    5,
                    "aggregate",
                    {"sources": [3, 4], "k": 5},
                    [3, 4],
                    condition="step_3.status == 'ok' or step_4.status == 'ok'",
                ),
            ]
        }
    )


def test_conditional_fallback_is_taken_when_the_first_search_is_empty(
    store: GraphStore, embedder: TextEmbedder
) -> None:
    plan = _fallback_plan(["doc_that_does_not_exist"])
    outcomes = Executor(_env(store, embedder)).run(plan)
    assert outcomes[1].status == "ok" and outcomes[1].count > 0
    assert outcomes[2].status == "ok" and outcomes[2].count == 0  # the filter removed all
    assert outcomes[3].status == "ok" and outcomes[3].count > 0  # the broader search ran
    assert outcomes[4].status == "skipped"
    assert outcomes[4].error == "condition is false: len(step_2.result) > 0"
    assert outcomes[5].status == "ok"
    assert [h.id for h in outcomes[5].result] == [h.id for h in outcomes[3].result][:5]
    assert "worn bearing" in (outcomes[5].result[0].text or "")

    steps = _trace(store, "q_fallback_taken", plan, outcomes)
    assert steps[3]["status"] == "ok" and steps[3]["condition"] == "len(step_2.result) == 0"
    assert steps[3]["dependencies"] == [2]
    assert "vector" in steps[3]["cypher"].lower()
    assert len(steps[3]["returned"]) == outcomes[3].count
    assert steps[4]["status"] == "skipped"
    assert steps[4]["error"] == "condition is false: len(step_2.result) > 0"
    assert steps[4]["cypher"] is None and steps[4]["returned"] == []
    assert steps[2]["result_count"] == 0


def test_conditional_fallback_is_skipped_when_the_first_search_finds_something(
    store: GraphStore, embedder: TextEmbedder
) -> None:
    env = _env(store, embedder)
    first = Executor(env).run(_fallback_plan(["doc_that_does_not_exist"]))[1]
    keep = sorted({h.document_id for h in first.result if h.document_id})
    outcomes = Executor(env).run(_fallback_plan(keep))
    assert outcomes[2].count > 0
    assert outcomes[3].status == "skipped"
    assert outcomes[3].error == "condition is false: len(step_2.result) == 0"
    assert outcomes[4].status == "ok" and outcomes[5].status == "ok"


# --------------------------------------------------------------------- refusals


def test_a_cyclic_plan_is_refused_naming_the_step(
    store: GraphStore, embedder: TextEmbedder
) -> None:
    before = _counts(store)
    plan = Plan.parse(
        {
            "plan": [
                _step(1, "vector_search", {"query": "pump", "k": 3}),
                _step(2, "filter", {"source": 1}, [1, 3]),
                _step(3, "aggregate", {"sources": [2]}, [2]),
            ]
        }
    )
    with pytest.raises(PlanError, match=r"step 2: the dependencies form a cycle: 2 -> 3 -> 2"):
        Executor(_env(store, embedder)).run(plan)
    assert _counts(store) == before  # nothing ran


@pytest.mark.parametrize(
    "params",
    [
        {"seeds_from": [1], "relationships": ["KNOWS"]},
        {"seeds_from": [1], "relationships": ["MENTIONS]->(n) DETACH DELETE n //"]},
        {"seeds_from": [1], "relationships": ["mentions"]},
    ],
)
def test_labels_outside_the_allow_list_are_refused(params: dict[str, Any]) -> None:
    raw = {
        "plan": [
            _step(1, "vector_search", {"query": "pump"}),
            _step(2, "multi_hop", params, [1]),
        ]
    }
    with pytest.raises(PlanError, match=r"step 2: .*relationships"):
        Plan.parse(raw)


def test_an_index_outside_the_allow_list_is_refused() -> None:
    raw = {"plan": [_step(1, "vector_search", {"query": "x", "index": "Chunk) DELETE (c"})]}
    with pytest.raises(PlanError, match=r"step 1: .*index"):
        Plan.parse(raw)


@pytest.mark.parametrize("template", ["../x", "x; DROP", "templates/../trace_query", "Entity"])
def test_malformed_template_names_are_refused(template: str) -> None:
    raw = {"plan": [_step(1, "graph_query", {"template": template})]}
    with pytest.raises(PlanError, match=r"step 1: .*template"):
        Plan.parse(raw)
    with pytest.raises(QueryRefusedError):
        cypher.load(template)


@pytest.mark.parametrize("template", ["document_delete_node", "trace_query", "no_such_template"])
def test_only_templates_from_cypher_templates_may_run(
    store: GraphStore, embedder: TextEmbedder, template: str
) -> None:
    before = _counts(store)
    plan = Plan.parse({"plan": [_step(1, "graph_query", {"template": template})]})
    with pytest.raises(PlanError, match=rf"step 1: unknown Cypher template '{template}'"):
        Executor(_env(store, embedder)).run(plan)
    assert _counts(store) == before


def test_quotes_and_cypher_in_parameters_are_just_strings(
    store: GraphStore, embedder: TextEmbedder
) -> None:
    before = _counts(store)
    assert before["Chunk"] >= 4 and before["Entity"] > 0
    plan = Plan.parse(
        {
            "plan": [
                _step(1, "vector_search", {"query": INJECTION, "k": 3}),
                _step(
                    2,
                    "graph_query",
                    {"template": "entity_chunks", "params": {"entity_ids": [INJECTION]}},
                ),
                _step(
                    3,
                    "graph_query",
                    {"template": "entity_paths", "params": {"source": INJECTION, "target": "x"}},
                ),
                _step(4, "rerank", {"sources": [1], "query": INJECTION, "k": 2}, [1]),
            ]
        }
    )
    outcomes = Executor(_env(store, embedder)).run(plan)
    assert outcomes[1].status == "ok" and outcomes[1].count == 3  # embedded like any text
    assert outcomes[2].status == "ok" and outcomes[2].count == 0  # no entity has that id
    assert outcomes[3].status == "ok" and outcomes[3].count == 0
    assert outcomes[4].status == "ok"
    # The value went to the database as a parameter, never into the statement text.
    text, params = outcomes[2].statements[0]
    assert INJECTION not in text and "DETACH" not in text
    assert params["entity_ids"] == [INJECTION]
    assert _counts(store) == before


def test_acl_parameters_in_a_plan_cannot_widen_access(
    store: GraphStore, embedder: TextEmbedder
) -> None:
    plan = Plan.parse(
        {
            "plan": [
                _step(1, "vector_search", {"query": "Zephyr Project budget", "k": 10}),
                _step(
                    2,
                    "graph_query",
                    {
                        "template": "chunks_fulltext",
                        "params": {"query": "zephyr", "admin": True, "principals": ["group:board"]},
                    },
                ),
            ]
        }
    )
    public = Executor(_env(store, embedder, user="eve")).run(plan)
    assert all("Zephyr" not in (h.text or "") for h in public[1].result)
    assert public[2].status == "ok" and public[2].count == 0
    assert public[2].statements[0][1]["admin"] is False
    board = Executor(_env(store, embedder, user="bob", groups=("board",))).run(plan)
    assert any("Zephyr" in (h.text or "") for h in board[1].result)
    assert board[2].count == 1  # the same plan, run by a board member, does see it


# --------------------------------------------------------------------- LLM fallback in the trace


def test_the_llm_fallback_reason_is_recorded_in_the_trace(
    store: GraphStore, embedder: TextEmbedder, openai_server: LocalOpenAIServer
) -> None:
    question = "Why did the Feed Pump FP-2 fail?"
    cyclic = {
        "plan": [
            _step(1, "vector_search", {"query_from": 2}, [2]),
            _step(2, "vector_search", {"query_from": 1}, [1]),
        ]
    }
    openai_server.add_chat_reply(json.dumps(cyclic))
    client = LLMClient("gpt-4o-mini", base_url=openai_server.base_url, max_retries=0)
    result = llm_plan(
        question, analyse(question), client, rule_fallback=lambda: rule_plan(question)
    )
    assert result.source == "rule"
    assert result.fallback_reason is not None and "cycle" in result.fallback_reason

    outcomes = Executor(_env(store, embedder)).run(result.plan)
    writer = TraceWriter(store)
    writer.write_query("q_llm_fallback", question, user=None, groups=(), planner="llm")
    writer.write_plan(
        "q_llm_fallback",
        "q_llm_fallback:plan",
        result.plan,
        outcomes,
        source=result.source,
        fallback_reason=result.fallback_reason,
    )
    stored = read_trace(store, "q_llm_fallback", OPERATOR).to_json()
    assert stored["plan"]["source"] == "rule"
    assert stored["plan"]["fallback_reason"] == result.fallback_reason
    assert "step 1: the dependencies form a cycle: 1 -> 2 -> 1" in stored["plan"]["fallback_reason"]
    assert len(stored["steps"]) == len(result.plan.plan)


# --------------------------------------------------------------------- the CLI, end to end


# On a store of its own: the `engine` fixture's tests run after the module's (pytest orders the
# tests of a module-scoped parameter first), so on Neo4j emptying the one database loses nothing.
def test_cli_ask_json_then_trace_json(engine: Engine) -> None:
    from kgrag.cli import app

    tmp_path = engine.folder
    runner = CliRunner(env={**engine.env(), "KGRAG_DATA_DIR": str(tmp_path)})
    uri = engine.uri
    corpus = _write(tmp_path / "corpus", CORPUS)
    ingested = runner.invoke(app, ["ingest", str(corpus), "--store", uri, "--json"])
    assert ingested.exit_code == 0, ingested.output
    assert json.loads(ingested.stdout)["ingested"] == 3

    asked = runner.invoke(
        app, ["ask", "Who maintains the Feed Pump FP-2?", "--store", uri, "--json"]
    )
    assert asked.exit_code == 0, asked.output
    answer = json.loads(asked.stdout)
    query_id = answer["query_id"]
    assert query_id.startswith("q_")
    assert answer["citations"]

    traced = runner.invoke(app, ["trace", query_id, "--store", uri, "--json"])
    assert traced.exit_code == 0, traced.output
    trace = json.loads(traced.stdout)
    assert trace["query"]["id"] == query_id
    steps = {s["step_id"]: s for s in trace["steps"]}
    assert len(steps) >= 3
    ran = [s for s in steps.values() if s["status"] == "ok"]
    assert len(ran) >= 3
    # Dependencies are recorded and point at steps of the same plan.
    dependants = [s for s in steps.values() if s["dependencies"]]
    assert dependants
    assert all(d in steps for s in dependants for d in s["dependencies"])
    # Every step that read the graph recorded its Cypher, and its evidence.
    searches = [s for s in ran if s["type"] in ("vector_search", "graph_query")]
    assert searches and all(s["cypher"] and "RETURN" in s["cypher"] for s in searches)
    hop = next(s for s in ran if s["type"] == "multi_hop")
    assert hop["cypher"] and hop["dependencies"]
    for s in ran:
        assert len(s["returned"]) == s["result_count"] or s["type"] == "multi_hop"
    assert any("Ada Okafor" in (r["text"] or "") for s in ran for r in s["returned"])
    cited = {c["node_id"] for c in answer["citations"]}
    returned = {r["id"] for s in ran for r in s["returned"]}
    assert cited <= returned  # every citation is evidence the trace returned


# ------------------------------------------------------------- full-text reads, one ranking


def test_full_text_reads_score_and_rank_the_same_on_both_engines(
    store: GraphStore, request: pytest.FixtureRequest
) -> None:
    """The engines' own full-text scores differ in kind (Lucene BM25, unbounded, on Neo4j;
    RediSearch TF-IDF on FalkorDB): the statements score by the share of the query's terms a text
    contains, a similarity in [0, 1] that the rule plan fuses with vector similarities."""
    public = {"principals": ["*"], "admin": False}
    rows = store.read(
        "templates/chunks_fulltext", {"query": "pump | bearing | okafor", "k": 10, **public}
    )
    texts = {r["title"]: r["text"] for r in rows}
    assert [r["score"] for r in rows] == pytest.approx([2 / 3, 2 / 3])
    assert [r["title"] for r in rows] == sorted(texts, key=lambda t: len(texts[t]))
    assert "Zephyr" not in str(rows)  # the board's document, although it names no term
    entities = store.read("fulltext_entities", {"query": "feed pump", "k": 5})
    assert entities[0]["name"] == "Feed Pump FP-2" and entities[0]["score"] == 1.0
    assert all(0 <= r["score"] <= 1 for r in entities)
    same_on_both_engines(request, "chunks", [(r["id"], r["score"]) for r in rows])
    same_on_both_engines(request, "entities", [(r["id"], r["score"]) for r in entities])
