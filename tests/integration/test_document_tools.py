"""Issue 9's document tools on both engines (embedded FalkorDB, Neo4j) with real MiniLM (and the
tiny CLIP for one image): summaries stored at ingestion; listing and summary questions answered from
document metadata with no vector search step (checked on the plan and on the stored trace); metadata
search by tag, type and date; comparison of two entities and of two documents; metadata-aware
reranking changing an order with every factor's contribution in the trace; and the ACL respected by
every new step (a private document is never listed, summarised or compared for an outsider)."""

from __future__ import annotations

import io
import json
import os
import random
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pypdf
import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.agent.loop import document_answer
from kgrag.core import OPERATOR, AccessContext, Hit
from kgrag.demo.shapes import draw_shape
from kgrag.errors import ConfigError
from kgrag.executor.base import ExecutionEnv, StepOutcome
from kgrag.executor.document_handlers import answer_text
from kgrag.executor.metadata_rerank import load_rule_book
from kgrag.executor.scheduler import Executor
from kgrag.executor.trace import TraceWriter, read_trace
from kgrag.graph.spaces import EmbeddingSpace, ensure_space
from kgrag.graph.store import GraphStore
from kgrag.ingest.entities import RuleEntityExtractor
from kgrag.ingest.pipeline import IngestOptions, Ingestor
from kgrag.ingest.records import ChunkRecord
from kgrag.ingest.summaries import MAX_CHARS, Summariser
from kgrag.modalities.base import TextEmbedder
from kgrag.modalities.clip import tiny_clip_embedder
from kgrag.modalities.text import default_text_embedder
from kgrag.planner.analysis import analyse
from kgrag.planner.document_plans import document_plan
from kgrag.planner.models import Plan
from kgrag.text import simple_sentences
from tests.support.across import compared_across_engines, shared_folder  # noqa: F401 (a fixture)
from tests.support.engines import Engine
from tests.support.openai_server import LocalOpenAIServer
from tests.support.pdfgen import pdf_bytes, write_pdf
from tests.support.raw import raw_write

#: Plans run and answers given must be the same on both engines (tests/support/across.py).
pytestmark = pytest.mark.usefixtures("compared_across_engines")

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "docs" / "examples" / "rerank_rules.toml"

MANUAL = (
    "Feed pump service manual for the Northfield Plant. "
    "This manual covers the Feed Pump FP-2 and its maintenance. "
    "The Feed Pump FP-2 must be inspected every month by a certified technician. "
    "Bearings of the Feed Pump FP-2 are replaced when vibration exceeds the limit. "
    "The lubrication schedule of the feed pump follows the table in section four. "
    "Spare parts are kept in store room B. "
    "The canteen menu changes on Fridays. "
    "Pump maintenance records are kept for ten years."
)
CORPUS: dict[str, tuple[str, dict[str, Any]]] = {
    "manuals/pump-manual.txt": (
        MANUAL,
        {"title": "Feed pump service manual", "tags": ["official-manual", "date:2021-01-10"]},
    ),
    "notes/pump-meeting.txt": (
        "Pump meeting notes. The team discussed the Feed Pump FP-2 maintenance backlog. "
        "Brian Keller agreed to order a new bearing for the feed pump.",
        {"title": "Pump meeting notes", "tags": ["meeting-notes", "date:2025-06-01"]},
    ),
    "roster.txt": (
        "Maintenance roster of the Northfield Plant. Ada Okafor services the cooling loop every "
        "Monday. Brian Keller inspects the boiler on Wednesdays.",
        {"title": "Maintenance roster", "tags": ["roster", "date:2024-03-01"]},
    ),
    "facilities/flood.txt": (
        "Heavy rain flooded the car park of the Riverside Office in April. "
        "The office closed for two days while the drains were cleared.",
        {"title": "Riverside flood report", "tags": ["facilities", "date:2023-04-02"]},
    ),
    "secret/zephyr.txt": (
        "The Zephyr pump budget is forty million. Only the board knows the Zephyr figures.",
        {"title": "Zephyr pump budget", "tags": ["official-manual"], "acl": ["group:board"]},
    ),
}
OUTSIDER = {"user": "eve"}
BOARD = {"user": "bob", "groups": ("board",)}


@pytest.fixture(scope="module")
def embedder() -> TextEmbedder:
    return default_text_embedder()


@pytest.fixture(scope="module")
def store(
    module_engine: Engine, embedder: TextEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[GraphStore]:
    # the same paths for both engines (tests/support/across.py)
    root = shared_folder(tmp_path_factory, "test_document_tools")
    lines = []
    for rel, (text, meta) in CORPUS.items():
        path = root / "corpus" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        lines.append({"path": str(path), **meta})
    pdf = write_pdf(
        root / "corpus" / "boiler.pdf",
        ["Boiler inspection report. The boiler pressure valves were tested and passed."],
    )
    lines.append(
        {"path": str(pdf), "title": "Boiler inspection", "tags": ["inspection", "date:2023-09-15"]}
    )
    image = root / "corpus" / "drawing.png"
    draw_shape("red", "circle", random.Random(1)).save(image)
    lines.append({"path": str(image), "title": "Red circle drawing", "tags": ["drawing"]})
    manifest = root / "manifest.jsonl"
    manifest.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")

    s = module_engine.open()
    clip = tiny_clip_embedder()
    for name, model in (("text", embedder), ("image", clip)):
        ensure_space(
            s, EmbeddingSpace(name=name, model=model.model_name, dimensions=model.dimensions)
        )
    ingestor = Ingestor(
        s,
        embedder,
        RuleEntityExtractor(),
        image_embedder=lambda: clip,
        options=IngestOptions(image_dir=module_engine.folder / "images"),
    )
    report = ingestor.ingest_paths([str(manifest)])
    assert report.ingested == 7 and report.failed == 0, report.failures
    yield s
    s.close()


def _env(store: GraphStore, embedder: TextEmbedder, access: dict[str, Any]) -> ExecutionEnv:
    return ExecutionEnv(
        store=store,
        text_embedder=embedder,
        access=AccessContext(**access),
        rerank_rules=load_rule_book(RULES),
    )


def _plan(question: str) -> Plan:
    plan = document_plan(question, analyse(question))
    assert plan is not None, question
    return plan


def _run(
    store: GraphStore, embedder: TextEmbedder, plan: Plan, access: dict[str, Any] = OUTSIDER
) -> dict[int, StepOutcome]:
    outcomes = Executor(_env(store, embedder, access)).run(plan)
    failed = {sid: o.error for sid, o in outcomes.items() if o.status != "ok"}
    assert failed == {}
    return outcomes


def _traced(store: GraphStore, plan: Plan, outcomes: dict[int, StepOutcome]) -> dict[str, Any]:
    query_id = f"q_{abs(hash(plan.to_json())):x}"
    writer = TraceWriter(store)
    writer.write_query(query_id, "test", user=None, groups=(), planner="rule")
    writer.write_plan(query_id, f"{query_id}:plan", plan, outcomes, source="rule")
    return read_trace(store, query_id, OPERATOR).to_json()


def _titles(hits: list[Hit]) -> list[str]:
    return [h.title or "" for h in hits]


def _documents(store: GraphStore) -> dict[str, dict[str, Any]]:
    return {r["title"]: r for r in store.read("document_list", {"principals": [], "admin": True})}


# --------------------------------------------------------------------------- summaries


def test_summaries_are_stored_on_every_document_and_bounded(store: GraphStore) -> None:
    docs = _documents(store)
    assert len(docs) == 7
    for title, row in docs.items():
        assert row["summary"], f"{title} has no summary"
        assert len(row["summary"]) <= MAX_CHARS
    # short documents: their lead sentences, whole
    assert docs["Maintenance roster"]["summary"].startswith("Maintenance roster of the Northfield")
    # a longer one: its central sentences, each taken from the text, the off-topic one left out
    manual = docs["Feed pump service manual"]["summary"]
    sentences = simple_sentences(manual.removesuffix(" …"))
    assert sentences and all(s in MANUAL for s in sentences)
    assert "canteen" not in manual
    assert docs["Red circle drawing"]["summary"].startswith("Image")


def test_audio_transcripts_are_summarised_extractively(embedder: TextEmbedder) -> None:
    segments = [
        "Good morning everyone.",
        "Today we review the Feed Pump FP-2 vibration readings.",
        "The Feed Pump FP-2 vibration exceeded the limit twice this week.",
        "Someone left a coffee cup in the control room.",
        "We will replace the Feed Pump FP-2 bearing on Thursday.",
        "The Feed Pump FP-2 bearing replacement needs two technicians.",
        "Vibration on the Feed Pump FP-2 will be measured again after the repair.",
        "Thanks, that is all.",
    ]
    chunks = [
        ChunkRecord(
            id=f"a:s{i}", text=t, position=i, start_s=i * 3.0, end_s=i * 3.0 + 3, embedding=(0.0,)
        )
        for i, t in enumerate(segments)
    ]
    summary = Summariser(embedder, max_chars=200).summarise("standup", "audio", chunks)
    assert summary is not None and summary.startswith("Recording:") and len(summary) <= 200
    assert "Feed Pump FP-2" in summary and "coffee" not in summary


def test_an_llm_writes_the_summary_when_configured(
    embedder: TextEmbedder, openai_server: LocalOpenAIServer
) -> None:
    from kgrag.llm import LLMClient

    openai_server.add_chat_reply("A service manual for the Feed Pump FP-2: monthly inspections.")
    client = LLMClient(model="gpt-4o-mini", base_url=openai_server.base_url, api_key="k")
    chunk = ChunkRecord(id="m:c0", text=MANUAL, position=0, embedding=(0.0,))
    summary = Summariser(embedder, client).summarise("Feed pump service manual", "text", [chunk])
    assert summary == "A service manual for the Feed Pump FP-2: monthly inspections."
    [request] = openai_server.requests_to("/v1/chat/completions")
    assert "Feed pump service manual" in request.body["messages"][1]["content"]


# --------------------------------------------------------------------------- listing


def test_listing_is_answered_from_metadata_without_a_vector_search(
    store: GraphStore, embedder: TextEmbedder
) -> None:
    plan = _plan("Which documents do you have about the feed pump?")
    assert [s.type for s in plan.plan] == ["list_documents"]
    outcomes = _run(store, embedder, plan)
    titles = _titles(outcomes[1].result)
    assert {"Feed pump service manual", "Pump meeting notes"} <= set(titles)
    assert "Riverside flood report" not in titles and "Zephyr pump budget" not in titles
    assert all(h.kind == "document" and h.text for h in outcomes[1].result)
    trace = _traced(store, plan, outcomes)
    assert [s["type"] for s in trace["steps"]] == ["list_documents"]
    step = trace["steps"][0]
    # no vector search: only the entity full-text index (names the terms match) and metadata
    assert ".vector." not in step["cypher"] and "(d:Document)" in step["cypher"]
    assert {r["kind"] for r in step["returned"]} == {"Document"}
    assert step["details"]["matched"], "the trace says what metadata matched"
    answer = answer_text("list_documents", outcomes[1].result)
    manual_marker = titles.index("Feed pump service manual") + 1
    assert f"- Feed pump service manual [{manual_marker}]: " in answer


def test_a_listing_that_fills_its_k_says_there_may_be_more(
    store: GraphStore, embedder: TextEmbedder
) -> None:
    """A folder of 75 documents was answered "50 documents, first 10:": the listing's k (50) was
    taken for the count. A listing that returns as many as it asked for says "at least"."""
    plan = _plan("Which documents do you have?")
    (step,) = plan.plan
    small = plan.model_copy(
        update={
            "plan": [
                step.model_copy(update={"parameters": step.parameters.model_copy(update={"k": 2})})
            ]
        }
    )
    found = document_answer(small, _run(store, embedder, small))
    assert found is not None and found.capped and len(found.hits) == 2
    answer = answer_text(found.step_type, found.hits, capped=found.capped)
    assert answer.startswith("at least 2 document(s):"), answer
    every = document_answer(plan, _run(store, embedder, plan))
    assert every is not None and not every.capped
    assert answer_text(every.step_type, every.hits).startswith(f"{len(every.hits)} document")


def test_listing_lists_a_private_document_only_to_its_readers(
    store: GraphStore, embedder: TextEmbedder
) -> None:
    plan = _plan("Which documents mention Zephyr?")
    assert _run(store, embedder, plan)[1].result == []
    board = _titles(_run(store, embedder, plan, BOARD)[1].result)
    assert board == ["Zephyr pump budget"]


# --------------------------------------------------------------------------- summary


def test_summary_question_returns_the_stored_summary(
    store: GraphStore, embedder: TextEmbedder
) -> None:
    plan = _plan("Summarise the maintenance roster")
    assert [s.type for s in plan.plan] == ["document_summary"]
    outcomes = _run(store, embedder, plan)
    [hit] = outcomes[1].result
    assert hit.title == "Maintenance roster"
    assert hit.text == _documents(store)["Maintenance roster"]["summary"]
    assert answer_text("document_summary", [hit]) == f"Maintenance roster [1]: {hit.text}"
    trace = _traced(store, plan, outcomes)
    assert [s["type"] for s in trace["steps"]] == ["document_summary"]
    assert "vector" not in (trace["steps"][0]["cypher"] or "")


def test_summary_of_a_private_document_is_refused_to_an_outsider(
    store: GraphStore, embedder: TextEmbedder
) -> None:
    plan = _plan("Summarise the Zephyr pump budget")
    outsider = _titles(_run(store, embedder, plan)[1].result)
    assert "Zephyr pump budget" not in outsider
    assert _titles(_run(store, embedder, plan, BOARD)[1].result) == ["Zephyr pump budget"]


# --------------------------------------------------------------------------- metadata search


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Which pdfs do you have?", {"Boiler inspection"}),
        ("Which images do you have?", {"Red circle drawing"}),
        ("List the documents tagged meeting-notes", {"Pump meeting notes"}),
        ("Show me the documents from 2023", {"Riverside flood report", "Boiler inspection"}),
        ("List all documents tagged official-manual", {"Feed pump service manual"}),
        # "photographs of X": images about X (it listed every image, whatever X was)
        ("Do you have any photographs of circles?", {"Red circle drawing"}),
        ("Which drawings of circles are stored?", {"Red circle drawing"}),
        ("Do you have any photographs of a giraffe?", set()),
        # "notes" names a type, the words beside it the topic (it listed every text document)
        ("Which boiler notes do you have?", {"Maintenance roster"}),
        ("Which Riverside notes do you have?", {"Riverside flood report"}),
        # a metadata question's type and its topic (issue 15: the topic was dropped, and every
        # PDF listed); counts and dates are no topic
        ("Which Riverside pdfs do you have?", set()),
        ("Which pdfs mention Riverside?", set()),
        ("Which PDFs about Riverside do you have?", set()),
        ("Which boiler pdfs do you have?", {"Boiler inspection"}),
        ("How many pdfs do you have?", {"Boiler inspection"}),
        ("Which pdfs were added in 2023?", {"Boiler inspection"}),
        # a month and a relative period are the search's dates (the month was read as its year,
        # 2023: both 2023 documents; "the last two days" named no date: the content plan)
        ("Which documents were added in April 2023?", {"Riverside flood report"}),
        ("Show me the documents from June 2025", {"Pump meeting notes"}),
        # undated: when they were ingested (today, or yesterday for a run across midnight)
        ("Which documents were added in the last two days?", {"Red circle drawing"}),
    ],
)
def test_metadata_search_by_type_tag_and_date(
    store: GraphStore, embedder: TextEmbedder, question: str, expected: set[str]
) -> None:
    plan = _plan(question)
    assert [s.type for s in plan.plan] == ["metadata_search"]
    assert set(_titles(_run(store, embedder, plan)[1].result)) == expected


def test_metadata_search_shows_private_documents_only_to_readers(
    store: GraphStore, embedder: TextEmbedder
) -> None:
    plan = _plan("List all documents tagged official-manual")
    board = set(_titles(_run(store, embedder, plan, BOARD)[1].result))
    assert board == {"Feed pump service manual", "Zephyr pump budget"}


# --------------------------------------------------------------------------- comparison


def test_comparison_of_two_entities_returns_both_sides(
    store: GraphStore, embedder: TextEmbedder
) -> None:
    """Sides no document title names are the passages that mention them, grouped by side."""
    plan = _plan("Compare Ada Okafor and Brian Keller")
    assert [s.type for s in plan.plan] == ["compare"]
    outcomes = _run(store, embedder, plan)
    sides = outcomes[1].details["sides"]
    assert [s["resolved"] for s in sides] == ["mentions", "mentions"]
    groups = outcomes[1].groups
    assert [g.label for g in groups] == ["Ada Okafor", "Brian Keller"]
    by_id = {h.id: h for h in outcomes[1].result}
    assert all(h.kind == "chunk" for h in by_id.values())
    for group in groups:
        assert group.hit_ids
        assert all(group.label in (by_id[i].text or "") for i in group.hit_ids)


def test_comparison_of_two_documents_and_the_acl(store: GraphStore, embedder: TextEmbedder) -> None:
    plan = _plan("Compare the maintenance roster and the Zephyr pump budget")
    assert [s.type for s in plan.plan] == ["compare"]
    outsider = _run(store, embedder, plan)[1]
    assert _titles(outsider.result) == ["Maintenance roster"]
    assert outsider.details["sides"][1]["resolved"] is None
    board = _run(store, embedder, plan, BOARD)[1]
    assert _titles(board.result) == ["Maintenance roster", "Zephyr pump budget"]
    assert all(h.text for h in board.result)


# --------------------------------------------------------------------------- reranking


def _rerank_plan(rules: str | None) -> Plan:
    query = "feed pump maintenance"
    rerank: dict[str, Any] = {"sources": [1], "query": query, "k": 5}
    if rules:
        rerank["rules"] = rules
    return Plan.parse(
        {
            "plan": [
                {"step_id": 1, "type": "vector_search", "parameters": {"query": query, "k": 6}},
                {"step_id": 2, "type": "rerank", "dependencies": [1], "parameters": rerank},
            ]
        }
    )


def _doc_order(hits: list[Hit]) -> list[str]:
    return list(dict.fromkeys(h.title or "" for h in hits))


def test_rerank_rules_change_the_order_and_the_trace_explains_it(
    store: GraphStore, embedder: TextEmbedder
) -> None:
    plain = _run(store, embedder, _rerank_plan(None))[2].result
    manuals = _run(store, embedder, _rerank_plan("manuals_first"))
    newest = _run(store, embedder, _rerank_plan("newest_first"))
    m_order = _doc_order(manuals[2].result)
    n_order = _doc_order(newest[2].result)
    manual, notes = "Feed pump service manual", "Pump meeting notes"
    assert m_order.index(manual) < m_order.index(notes)  # official manual above meeting notes
    assert n_order.index(notes) < n_order.index(manual)  # 2025 above 2021
    assert m_order != n_order
    # the same hits as without rules, reordered (ACL: the outsider never gets the Zephyr text)
    assert {h.id for h in plain} == {h.id for h in manuals[2].result}
    assert "Zephyr pump budget" not in m_order

    trace = _traced(store, _rerank_plan("manuals_first"), manuals)
    step = next(s for s in trace["steps"] if s["type"] == "rerank")
    assert step["details"]["rerank"]["rules"] == "manuals_first"
    assert "WHERE d.id IN $ids" in step["cypher"]  # the metadata read is traced too
    by_title: dict[str, dict[str, Any]] = {}
    for returned in step["returned"]:
        factors = returned["factors"]
        assert factors["score"] == pytest.approx(returned["score"])
        parts = factors["retrieval"] + factors["authority"] + factors["recency"] + factors["source"]
        assert parts == pytest.approx(factors["score"], abs=1e-5)
        hit = next(h for h in manuals[2].result if h.id == returned["id"])
        by_title.setdefault(hit.title or "", factors)
    assert by_title[manual]["authority"] > by_title[notes]["authority"]
    assert any("official-manual" in why for why in by_title[manual]["why"])
    assert by_title[notes]["recency"] > by_title[manual]["recency"]

    # deterministic: the same plan gives the same scores
    again = _run(store, embedder, _rerank_plan("manuals_first"))[2].result
    assert [(h.id, h.score) for h in again] == [(h.id, h.score) for h in manuals[2].result]


def test_an_unknown_rule_set_fails_the_step_naming_the_known_ones(
    store: GraphStore, embedder: TextEmbedder
) -> None:
    outcomes = Executor(_env(store, embedder, OUTSIDER)).run(_rerank_plan("no_such_rules"))
    assert outcomes[2].status == "error"
    assert "no_such_rules" in (outcomes[2].error or "")
    assert "manuals_first" in (outcomes[2].error or "")


# --------------------------------------------------------------------------- through the agent


def test_listing_and_summary_questions_through_the_agent_use_no_vector_search(
    store: GraphStore, embedder: TextEmbedder
) -> None:
    agent = KnowledgeAgent(store, embedder)
    listed = agent.ask("Which documents do you have about the feed pump?", user="eve")
    steps = read_trace(store, listed.query_id, OPERATOR).to_json()["steps"]
    assert [s["type"] for s in steps] == ["list_documents"]
    cited = {c.title for c in listed.citations}
    assert {"Feed pump service manual", "Pump meeting notes"} <= cited
    assert "Zephyr pump budget" not in cited and "Zephyr" not in listed.answer

    summary = agent.ask("Summarise the maintenance roster", user="eve")
    steps = read_trace(store, summary.query_id, OPERATOR).to_json()["steps"]
    assert [s["type"] for s in steps] == ["document_summary"]
    assert [c.title for c in summary.citations] == ["Maintenance roster"]
    assert _documents(store)["Maintenance roster"]["summary"] in summary.answer


def test_a_document_question_no_document_matches_searches_the_passages(
    store: GraphStore, embedder: TextEmbedder
) -> None:
    """No document is titled 'lubrication schedule', but a passage holds it: the summary tool
    finds no document, and the passages answer (it said 'No readable document matches.',
    exit 'satisfied'). The outsider's private document stays out of the passages too."""
    agent = KnowledgeAgent(store, embedder)
    found = agent.ask("Summarise the lubrication schedule", user="eve")
    steps = [s["type"] for s in read_trace(store, found.query_id, OPERATOR).to_json()["steps"]]
    assert steps[0] == "document_summary" and "vector_search" in steps[1:], steps
    assert found.exit_reason != "not_found", found.answer
    assert "Feed pump service manual" in {c.title for c in found.citations}, found.answer
    assert "lubrication schedule" in found.answer.lower()

    private = agent.ask("Summarise the Zephyr pump budget", user="eve")
    assert "Zephyr" not in private.answer
    assert "Zephyr pump budget" not in {c.title for c in private.citations}


def test_asking_for_a_type_none_is_stored_of_lists_nothing_and_quotes_no_passage(
    store: GraphStore, embedder: TextEmbedder
) -> None:
    """No recording is stored: "Which recordings do you have?" is answered by the empty list,
    not by a passage that mentions recording (it quoted one, citing a document that is not a
    recording, after three iterations)."""
    agent = KnowledgeAgent(store, embedder)
    found = agent.ask("Which recordings do you have?", user="eve")
    steps = [s["type"] for s in read_trace(store, found.query_id, OPERATOR).to_json()["steps"]]
    assert steps == ["metadata_search"], steps
    assert (found.exit_reason, tuple(found.citations)) == ("not_found", ()), found.answer


def test_rephrased_document_questions_reach_the_document_tools(
    store: GraphStore, embedder: TextEmbedder
) -> None:
    """Issue 15's phrasings: a listing with no topic lists every readable document; "what have
    you got on X" lists by topic; "what is X about" returns X's stored summary; a content
    question still searches the passages. The Query node says which intent, and how sure."""
    agent = KnowledgeAgent(store, embedder)

    def steps(answer: Any) -> list[str]:
        return [s["type"] for s in read_trace(store, answer.query_id, OPERATOR).to_json()["steps"]]

    everything = agent.ask("list what is stored", user="eve")
    assert steps(everything) == ["metadata_search"]
    readable = {t for t, d in _documents(store).items() if t != "Zephyr pump budget"}
    assert {c.title for c in everything.citations} == readable
    trace = read_trace(store, everything.query_id, OPERATOR).to_json()["query"]
    assert trace["query_class"] == "listing"
    assert trace["intent"].startswith("intent classifier: listing (p=")

    topical = agent.ask("what have you got on the feed pump?", user="eve")
    assert steps(topical) == ["list_documents"]
    assert {"Feed pump service manual", "Pump meeting notes"} <= {
        c.title for c in topical.citations
    }
    assert "Zephyr pump budget" not in {c.title for c in topical.citations}

    about = agent.ask("what is the maintenance roster about?", user="eve")
    assert steps(about) == ["document_summary"]
    assert [c.title for c in about.citations] == ["Maintenance roster"]

    content = agent.ask("How often must the Feed Pump FP-2 be inspected?", user="eve")
    assert steps(content)[0] == "vector_search"
    assert (
        read_trace(store, content.query_id, OPERATOR).to_json()["query"]["query_class"]
        == "content_search"
    )


def _reranked(store: GraphStore, embedder: TextEmbedder, default: str | None) -> list[str]:
    """Document order of the agent's rerank step for a question (empty: no such step)."""
    rules = load_rule_book(RULES, default=default)
    agent = KnowledgeAgent(store, embedder, rerank_rules=rules)
    answer = agent.ask("How is the feed pump maintenance done?", user="eve")
    trace = read_trace(store, answer.query_id, OPERATOR).to_json()
    reranks = [s for s in trace["steps"] if s["type"] == "rerank"]
    if not reranks:
        return []
    step = reranks[0]
    assert step["details"]["rerank"]["rules"] == default
    assert step["status"] == "ok" and step["returned"]
    titles = _documents_by_id(store)
    return list(dict.fromkeys(titles[r["id"].split(":")[0]] for r in step["returned"]))


def _documents_by_id(store: GraphStore) -> dict[str, str]:
    return {d["id"]: title for title, d in _documents(store).items()}


def test_a_default_rule_set_reranks_every_question_of_the_agent(
    store: GraphStore, embedder: TextEmbedder
) -> None:
    manual, notes = "Feed pump service manual", "Pump meeting notes"
    assert _reranked(store, embedder, None) == []  # no default: no metadata rerank step
    manuals = _reranked(store, embedder, "manuals_first")
    newest = _reranked(store, embedder, "newest_first")
    assert manuals.index(manual) < manuals.index(notes)
    assert newest.index(notes) < newest.index(manual)
    assert "Zephyr pump budget" not in manuals + newest


# The `engine` fixture's tests run after the module's (pytest orders the tests of a module-scoped
# parameter first), so on Neo4j emptying the one database loses nothing.
def test_a_default_rule_set_must_exist_and_needs_a_rule_file(engine: Engine) -> None:
    with pytest.raises(ConfigError, match="known: legal_precedent, manuals_first, newest_first"):
        load_rule_book(RULES, default="no_such_rules")
    settings = engine.settings(rerank_ruleset="x")
    with pytest.raises(ConfigError, match="KGRAG_RERANK_RULES"):
        KnowledgeAgent.open(settings)


def test_the_newest_documents_are_the_metadata_searchs_first(
    store: GraphStore, embedder: TextEmbedder
) -> None:
    """'What is the newest document?' named no type, tag, date or topic, so it got the content
    plan (passages that share its words); it is a metadata search, newest first, first five."""
    plan = _plan("What is the newest document?")
    (step,) = plan.plan
    assert step.type == "metadata_search" and step.parameters.k == 5
    # dated by their manifest's date tag, else when they were ingested (the drawing: today)
    assert _titles(_run(store, embedder, plan)[1].result) == [
        "Red circle drawing",
        "Pump meeting notes",
        "Maintenance roster",
        "Boiler inspection",
        "Riverside flood report",
    ]


# ------------------------------------------------------------- types and dates (issue 15 item 2)


def _steps(store: GraphStore, answer: Any) -> list[str]:
    return [s["type"] for s in read_trace(store, answer.query_id, OPERATOR).to_json()["steps"]]


@pytest.mark.parametrize(
    "question", ["What types of files do you have?", "What kinds of documents are stored?"]
)
def test_a_question_about_the_types_stored_gets_a_breakdown_with_counts(
    store: GraphStore, embedder: TextEmbedder, question: str
) -> None:
    """An eighth-folder test asked "What types of files do you have?" and got passages that
    mention types; it is a count of the readable documents of each type, each type citing its
    newest document. The private text document counts for its readers only."""
    agent = KnowledgeAgent(store, embedder)
    outsider = agent.ask(question, user="eve")
    assert _steps(store, outsider) == ["document_types"], outsider.answer
    assert "text, plain text (text/plain): 4 readable documents" in outsider.answer
    assert "pdf (application/pdf): 1 readable document, the newest: Boiler inspection" in (
        outsider.answer
    )
    assert "image (image/png): 1 readable document" in outsider.answer
    assert "Zephyr" not in outsider.answer
    assert [c.title for c in outsider.citations] == [
        "Pump meeting notes",
        "Red circle drawing",
        "Boiler inspection",
    ]
    board = agent.ask(question, user="bob", groups=["board"])
    assert "text, plain text (text/plain): 5 readable documents" in board.answer


def test_when_a_document_was_added_is_answered_from_its_stored_dates(
    store: GraphStore, embedder: TextEmbedder
) -> None:
    """ "When was the Riverside flood report added?" searched the passages (which say when the
    office flooded, not when the report was added); it is the document's stored dates: the date
    its manifest gave it and when it was ingested, citing that document. A private document's
    dates are not given to an outsider."""
    agent = KnowledgeAgent(store, embedder)
    ingested = str(_documents(store)["Riverside flood report"]["ingested_at"])
    for question in (
        "When was the Riverside flood report added?",
        "when was the riverside flood report ingested",
        "What date was the Riverside flood report uploaded?",
    ):
        found = agent.ask(question, user="eve")
        assert _steps(store, found) == ["document_dates"], (question, found.answer)
        assert [c.title for c in found.citations] == ["Riverside flood report"], found.answer
        assert "dated 2023-04-02" in found.answer
        assert f"ingested) on {ingested[:10]} at {ingested[11:16]} UTC" in found.answer
    private = agent.ask("When was the Zephyr pump budget added?", user="eve")
    assert "Zephyr pump budget" not in {c.title for c in private.citations}
    assert "forty million" not in private.answer
    board = agent.ask("When was the Zephyr pump budget added?", user="bob", groups=["board"])
    assert [c.title for c in board.citations][:1] == ["Zephyr pump budget"], board.answer
    assert "added to the store (ingested) on" in board.answer


def test_the_types_of_an_empty_store_are_none_and_no_passage_is_searched(
    engine: Engine, embedder: TextEmbedder
) -> None:
    """With nothing readable stored, the breakdown by type found no document and the agent went
    on to search the passages for "types" and "files"; no passage can say what is stored."""
    store = engine.fresh()
    try:
        found = KnowledgeAgent(store, embedder).ask("What types of files do you have?", user="eve")
        assert _steps(store, found) == ["document_types"], found.answer
        assert found.exit_reason == "not_found"
        assert not found.citations
    finally:
        store.close()


def test_a_documents_dates_include_its_files_and_its_own_metadata(
    engine: Engine, embedder: TextEmbedder, tmp_path: Path
) -> None:
    """``document_dates`` gives a PDF's creation and modification dates (its information
    dictionary) and a file's modification time on disk at ingestion, citing the document; a
    document stored before kgrag kept them says it has none, without failing."""
    pdf = tmp_path / "turbine.pdf"
    writer = pypdf.PdfWriter(clone_from=io.BytesIO(pdf_bytes(["Turbine overhaul log. Blades."])))
    writer.add_metadata(
        {"/CreationDate": "D:20190314093000Z", "/ModDate": "D:20210102030405+01'00'"}
    )
    with pdf.open("wb") as f:
        writer.write(f)
    notes = tmp_path / "chiller.txt"
    notes.write_text("Chiller service notes. The chiller compressor was serviced.\n")
    moment = datetime(2020, 5, 6, 7, 8, 9, tzinfo=UTC).timestamp()
    os.utime(notes, (moment, moment))
    store = engine.fresh()
    try:
        assert KnowledgeAgent(store, embedder).ingest([str(pdf), str(notes)]).ingested == 2

        def dates(question: str) -> Hit:
            plan = _plan(question)
            assert [s.type for s in plan.plan] == ["document_dates"], question
            hits = _run(store, embedder, plan)[1].result
            assert hits, question
            return hits[0]

        made = dates("When was turbine.pdf added?")
        assert made.uri == str(pdf)  # cited
        # by its title: the intent classifier reads this one as content (the tenth real
        # folder's check), and a store's verb ending it asks for the dates all the same
        assert dates("When was the turbine overhaul log added?").uri == str(pdf)
        assert "created on 2019-03-14 at 09:30 UTC (the document's own metadata)" in made.text
        assert "last modified on 2021-01-02 at 02:04 UTC" in made.text
        changed = dates("When was chiller.txt added?")
        assert changed.uri == str(notes)
        assert "its file was last modified on 2020-05-06 at 07:08 UTC" in changed.text
        assert "created on" not in changed.text  # a text file has no metadata of its own
        raw_write(
            store,
            "MATCH (d:Document) REMOVE d.file_modified_at, d.content_created_at, "
            "d.content_modified_at",
        )
        older = dates("When was chiller.txt added?")
        assert "no file modification time or creation date is stored" in older.text
        assert "added to the store (ingested) on" in older.text
    finally:
        store.close()
