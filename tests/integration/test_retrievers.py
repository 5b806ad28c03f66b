"""The LangChain and LlamaIndex retrievers against the real ``langchain-core`` and
``llama-index-core`` on the demo corpus (the roster readable by ``group:maintenance`` only), on
each engine: the documents/nodes returned, their citation metadata (document, source file, page,
image, query id whose trace is stored), the ACL of the user they read as, sync and async, and
both frameworks giving the same evidence in the same order."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from langchain_core.documents import Document
from llama_index.core.schema import ImageNode, NodeWithScore

from kgrag.integrations.langchain import KgragRetriever as LangChainRetriever
from kgrag.integrations.llamaindex import KgragRetriever as LlamaIndexRetriever
from tests.support.demo_agent import ROSTER_GROUP, DemoCorpus, demo_agent
from tests.support.engines import Engine

QUESTION = "Who maintains the Pressure Valve PV-7?"
PICTURE = "Show me a picture of the Pressure Valve PV-7 in the manual"


@pytest.fixture(scope="module")
def demo(module_engine: Engine) -> Iterator[DemoCorpus]:
    store = module_engine.open()
    yield demo_agent(store, module_engine.folder)
    store.close()


def _stored(demo: DemoCorpus, query_id: str) -> bool:
    return bool(demo.agent.store.read("trace_read_query", {"id": query_id}))


def test_langchain_documents_carry_citations_and_the_query_id(demo: DemoCorpus) -> None:
    roster = demo.documents["maintenance.md"]
    retriever = LangChainRetriever(agent=demo.agent, groups=(ROSTER_GROUP,), k=4)
    docs = retriever.invoke(QUESTION)
    assert 0 < len(docs) <= 4 and all(isinstance(d, Document) for d in docs)
    top = docs[0]
    assert "Ada Lovelace" in top.page_content
    assert top.metadata["document_id"] == roster and top.metadata["rank"] == 1
    assert top.metadata["source"].endswith("maintenance.md") and top.metadata["kind"] == "chunk"
    assert top.id == top.metadata["node_id"]
    query_ids = {d.metadata["query_id"] for d in docs}
    assert len(query_ids) == 1 and _stored(demo, query_ids.pop())
    manual = [d for d in docs if d.metadata["document_id"] == demo.documents["manual.pdf"]]
    assert manual and all(isinstance(d.metadata["page"], int) for d in manual)

    outsider = LangChainRetriever(agent=demo.agent, k=4)
    assert roster not in {d.metadata["document_id"] for d in outsider.invoke(QUESTION)}
    # the async path (asearch) returns the same documents
    again = asyncio.run(retriever.ainvoke(QUESTION))
    assert [d.page_content for d in again] == [d.page_content for d in docs]
    assert again[0].metadata["query_id"] != docs[0].metadata["query_id"]


def test_llamaindex_nodes_carry_citations_and_images_are_image_nodes(demo: DemoCorpus) -> None:
    roster = demo.documents["maintenance.md"]
    retriever = LlamaIndexRetriever(demo.agent, groups=[ROSTER_GROUP], limit=4)
    nodes = retriever.retrieve(QUESTION)
    assert 0 < len(nodes) <= 4 and all(isinstance(n, NodeWithScore) for n in nodes)
    top = nodes[0]
    assert top.node.metadata["document_id"] == roster and top.score == top.node.metadata["score"]
    assert "Ada Lovelace" in top.node.get_content()
    # what an LLM reading the node sees: the passage with its title and source, not the ids
    shown = top.node.get_content(metadata_mode="llm")  # type: ignore[arg-type]
    assert "maintenance.md" in shown and "query_id" not in shown
    assert _stored(demo, top.node.metadata["query_id"])

    outsider = LlamaIndexRetriever(demo.agent, limit=4)
    assert roster not in {n.node.metadata["document_id"] for n in outsider.retrieve(QUESTION)}

    # images rank after the text passages (Evidence): a wider retriever reaches them
    pictures = LlamaIndexRetriever(demo.agent, limit=20).retrieve(PICTURE)
    images = [n for n in pictures if n.node.metadata["kind"] == "image"]
    assert images and all(isinstance(n.node, ImageNode) for n in images)
    assert all(n.node.image_path == n.node.metadata["image_uri"] for n in images)  # type: ignore[attr-defined]

    again = asyncio.run(retriever.aretrieve(QUESTION))
    assert [n.node.node_id for n in again] == [n.node.node_id for n in nodes]


def test_both_frameworks_get_the_same_evidence(demo: DemoCorpus) -> None:
    chain = LangChainRetriever(agent=demo.agent, groups=(ROSTER_GROUP,), k=5).invoke(QUESTION)
    index = LlamaIndexRetriever(demo.agent, groups=[ROSTER_GROUP], limit=5).retrieve(QUESTION)
    assert [d.metadata["node_id"] for d in chain] == [n.node.node_id for n in index]
