"""Abstention on both engines (embedded FalkorDB, Neo4j), with the real MiniLM embedder: when
nothing the reader can read answers a question, the agent says so plainly, cites nothing, lists
the closest documents apart (never ones the reader cannot read) and exits ``not_found``; offline
(the support test, kgrag.agent.support) and with an LLM (its NOT_FOUND reply, against the local
OpenAI-format server)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

os.environ.setdefault("OMP_NUM_THREADS", "1")

from kgrag.agent.agent import KnowledgeAgent
from kgrag.agent.support import ABSTENTION
from kgrag.cli import app
from kgrag.config import Settings
from kgrag.graph.store import GraphStore
from kgrag.llm import LLMClient
from kgrag.modalities import factory
from kgrag.modalities.base import TextEmbedder
from tests.support.across import shared_folder
from tests.support.engines import Engine
from tests.support.openai_server import LocalOpenAIServer

PASSAGES = {
    "roster.md": "The Pressure Valve PV-7 is maintained by Ada Lovelace. "
    "She inspects it every Monday.\n",
    "pumps.md": "The Feed Pump FP-2 is maintained by Grace Hopper, who keeps the spare seals "
    "in Hangar 3.\n",
    "canteen.md": "The plant canteen serves lentil soup on Fridays. Breakfast starts at seven.\n",
    "safety.md": "Every valve in the boiler house is tested for leaks after each shutdown.\n",
}
ANSWERABLE = "Who maintains the Pressure Valve PV-7?"
OUT_OF_DOMAIN = "What is the capital city of Australia?"
ANSWER_SCRIPT = "The Pressure Valve PV-7 is maintained by Ada Lovelace {ada}."


@pytest.fixture(scope="module")
def embedder() -> TextEmbedder:
    return factory.text_embedder(Settings())


@pytest.fixture(scope="module")
def store(
    module_engine: Engine, embedder: TextEmbedder, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[GraphStore]:
    folder = shared_folder(tmp_path_factory, "test_abstention")
    for name, text in PASSAGES.items():
        (folder / name).write_text(text, encoding="utf-8")
    s = module_engine.open()
    agent = KnowledgeAgent(s, embedder)
    public = [str(folder / n) for n in PASSAGES if n != "roster.md"]
    assert agent.ingest(public).ingested == 3
    assert agent.ingest([str(folder / "roster.md")], acl=["user:ada"]).ingested == 1
    yield s
    s.close()


def _exit_reason_stored(store: GraphStore, query_id: str) -> str:
    rows = store.read_freeform(
        "MATCH (q:Query {id: $id}) RETURN q.exit_reason AS r", {"id": query_id}
    )
    return str(rows[0]["r"])


def test_answerable_question_is_answered_with_citations(
    store: GraphStore, embedder: TextEmbedder
) -> None:
    answer = KnowledgeAgent(store, embedder).ask(ANSWERABLE, user="ada")
    assert answer.exit_reason != "not_found"
    assert "Ada Lovelace" in answer.answer and answer.citations
    assert answer.support is not None and answer.support.supported
    assert answer.closest == ()


@pytest.mark.parametrize("question", [OUT_OF_DOMAIN, "Give me a recipe for banana bread."])
def test_out_of_domain_question_abstains_and_cites_nothing(
    store: GraphStore, embedder: TextEmbedder, question: str
) -> None:
    answer = KnowledgeAgent(store, embedder).ask(question, user="ada")
    assert answer.exit_reason == "not_found"
    assert answer.answer.startswith(ABSTENTION)
    assert answer.citations == () and not re.search(r"\[\d+\]", answer.answer)
    assert answer.support is not None and not answer.support.supported
    assert 1 <= len(answer.closest) <= 3
    assert "Closest, not answering:" in answer.answer
    body = answer.to_json()
    assert body["citations"] == [] and len(body["closest"]) == len(answer.closest)
    assert _exit_reason_stored(store, answer.query_id) == "not_found"


def test_answer_in_a_document_the_reader_cannot_read_is_not_found(
    store: GraphStore, embedder: TextEmbedder
) -> None:
    """The roster answers the question, but only ada may read it: another reader is told that
    nothing it can read answers this, and the roster is not among the closest documents."""
    answer = KnowledgeAgent(store, embedder).ask(ANSWERABLE, user="bob")
    assert answer.exit_reason == "not_found" and answer.citations == ()
    assert "Ada" not in answer.answer
    assert all(c.uri is None or not c.uri.endswith("roster.md") for c in answer.closest)


def _llm_agent(
    store: GraphStore, embedder: TextEmbedder, server: LocalOpenAIServer, reply: str
) -> KnowledgeAgent:
    def handler(body: dict[str, Any]) -> str:
        name = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
        prompt = body["messages"][-1]["content"]
        if name == "_LlmVerdict":
            return json.dumps({"decision": "SATISFIED", "reason": "judged"})
        if name == "_LlmChecks":
            n = len(re.findall(r"(?m)^\d+\. ", prompt.split("Sentences:", 1)[1]))
            return json.dumps({"supported": [True] * n})
        if name is not None:  # the plan: let the rule planner plan
            return "not a plan"
        found = re.search(r"(?m)^\[(\d+)\] .*Ada Lovelace", prompt)
        return reply.format(ada=f"[{found.group(1)}]" if found else "")

    server.chat_handler = handler
    client = LLMClient("gpt-4o-mini", base_url=server.base_url, api_key="test", max_retries=0)
    return KnowledgeAgent(store, embedder, llm=client)


def test_llm_not_found_reply_is_an_abstention(
    store: GraphStore, embedder: TextEmbedder, openai_server: LocalOpenAIServer
) -> None:
    """The evidence passes the support test, but the model says it does not answer: abstained."""
    agent = _llm_agent(store, embedder, openai_server, "NOT_FOUND")
    answer = agent.ask(ANSWERABLE, user="ada")
    assert (answer.exit_reason, answer.mode) == ("not_found", "llm")
    assert answer.answer.startswith(ABSTENTION) and answer.citations == ()
    assert answer.closest
    synthesis = [r for r in openai_server.requests if "Evidence:" in json.dumps(r.body)]
    assert synthesis and "NOT_FOUND" in json.dumps(synthesis[-1].body)


def test_llm_is_not_asked_to_answer_from_evidence_that_does_not_support_it(
    store: GraphStore, embedder: TextEmbedder, openai_server: LocalOpenAIServer
) -> None:
    """A model that would answer anything (here from its own knowledge) is not given the
    chance: the support test abstains before synthesis, as it does offline."""
    agent = _llm_agent(store, embedder, openai_server, "The capital of Australia is Canberra [1].")
    answer = agent.ask(OUT_OF_DOMAIN, user="ada")
    assert answer.exit_reason == "not_found" and answer.citations == ()
    assert answer.answer.startswith(ABSTENTION) and "Canberra" not in answer.answer
    assert answer.support is not None and not answer.support.supported
    # the judge may read the evidence (a structured reply); no free-text answer was asked for
    assert not [r for r in openai_server.requests if "response_format" not in r.body]


def test_llm_answer_from_evidence_is_kept(
    store: GraphStore, embedder: TextEmbedder, openai_server: LocalOpenAIServer
) -> None:
    agent = _llm_agent(store, embedder, openai_server, ANSWER_SCRIPT)
    answer = agent.ask(ANSWERABLE, user="ada")
    assert answer.mode == "llm" and answer.exit_reason != "not_found"
    assert "Ada Lovelace" in answer.answer and [c.marker for c in answer.citations] == [1]


def _musique(tmp: Path) -> tuple[Path, Path]:
    """A MuSiQue-format dataset of the passages above: two questions, each with one supporting
    passage, answers with aliases."""
    paragraphs = [
        {"title": name.removesuffix(".md"), "paragraph_text": text, "is_supporting": False}
        for name, text in PASSAGES.items()
    ]

    def question(qid: str, text: str, gold: str, answer: str, aliases: list[str]) -> object:
        marked = [{**p, "is_supporting": p["title"] == gold} for p in paragraphs]
        return {
            "id": qid,
            "question": text,
            "paragraphs": marked,
            "answer": answer,
            "answer_aliases": aliases,
        }

    questions = [
        question("q1", ANSWERABLE, "roster", "Ada Lovelace", ["Augusta Ada King"]),
        question("q2", "Who keeps the spare seals of the Feed Pump FP-2?", "pumps", "Hopper", []),
    ]
    corpus = [{"title": p["title"], "text": p["paragraph_text"]} for p in paragraphs]
    (tmp / "q.json").write_text(json.dumps(questions), encoding="utf-8")
    (tmp / "c.json").write_text(json.dumps(corpus), encoding="utf-8")
    return tmp / "q.json", tmp / "c.json"


def test_eval_answers_scores_answers_and_abstention(engine: Engine) -> None:
    """`kgrag eval answers`: the gold answer is found in both answers; with its supporting
    passage hidden each question is abstained on, as are the out-of-domain questions; the
    hidden passages are readable again afterwards."""
    q_path, c_path = _musique(engine.folder)
    result = CliRunner(env=engine.env()).invoke(
        app,
        [
            *("eval", "answers", "--questions", str(q_path), "--corpus", str(c_path)),
            *("--store", engine.uri, "--json"),
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    answerable = report["answerable"]
    assert (answerable["questions"], answerable["correct"], answerable["abstained"]) == (2, 2, 0)
    assert answerable["recall"]["recall@2"] == 1.0
    assert report["unanswerable"]["abstention_rate"] == 1.0
    assert report["out_of_domain"]["abstention_rate"] >= 0.9
    rows = {(r["setting"], r["id"]): r for r in report["per_question"]}
    assert rows[("answerable", "q1")]["gold"] == ["Ada Lovelace", "Augusta Ada King"]
    assert rows[("unanswerable", "q1")]["exit_reason"] == "not_found"
    s = engine.open()
    try:
        rows = s.read("document_acl_list", {"principals": [], "admin": True})
        acls = {r["title"]: r["acl"] for r in rows}
    finally:
        s.close()
    assert acls == {name.removesuffix(".md"): ["*"] for name in PASSAGES}
