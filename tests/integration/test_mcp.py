"""``kgrag mcp`` with the MCP SDK's own client, on the demo corpus (the roster readable by
``group:maintenance`` only), on each engine: in-process (the tools listed, a cited answer with its
trace id, the trace as a tool and as a resource, an image attached to a question, search without
an answer, ACL denial for a caller without the group, ingest refused to a reader and allowed to an
admin inside the ingest roots); and over streamable HTTP with the HTTP API's API keys (401
without a key, each request its key's principal). The stdio transport (``kgrag mcp --user ...
--groups ...`` started by the client) is docs/mcp.md's example, run by test_docs_examples.py."""

from __future__ import annotations

import asyncio
import base64
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
import uvicorn
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client

from kgrag.auth.authenticator import Authenticator
from kgrag.auth.principal import Role
from kgrag.config import Settings
from kgrag.integrations.mcp import (
    build_server,
    http_app,
    http_identity,
    process_identity,
    stdio_principal,
)
from kgrag.server.launch import free_port
from tests.support.credentials import bearer, new_key
from tests.support.demo_agent import ROSTER_GROUP, DemoCorpus, demo_agent, drawing
from tests.support.engines import Engine

QUESTION = "Who maintains the Pressure Valve PV-7?"
TOOLS = {
    "ask",
    "search",
    "list_documents",
    "describe_document",
    "open_trace",
    "audit",
    "ingest",
}


@pytest.fixture(scope="module")
def demo(module_engine: Engine) -> Iterator[DemoCorpus]:
    store = module_engine.open()
    yield demo_agent(store, module_engine.folder)
    store.close()


def _client(demo: DemoCorpus, *groups: str, roles: tuple[Role, ...] = ()) -> Client:
    principal = stdio_principal("ann", groups, roles)
    return Client(build_server(demo.agent, process_identity(principal)))


async def _call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


async def _error(client: Client, tool: str, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error
    return str(result.content[0].text)  # type: ignore[union-attr]


def test_an_mcp_client_lists_the_tools_asks_and_opens_the_trace(demo: DemoCorpus) -> None:
    roster = demo.documents["maintenance.md"]

    async def main() -> None:
        async with _client(demo, ROSTER_GROUP) as client:
            listed = {t.name: t for t in (await client.list_tools()).tools}
            assert set(listed) == TOOLS
            # the caller's identity is the server's: no tool lets the model name one
            for tool in listed.values():
                assert not {"user", "groups", "principal"} & set(tool.input_schema["properties"])
            answer = await _call(client, "ask", question=QUESTION)
            assert "Ada Lovelace" in answer["answer"]
            assert answer["exit_reason"] == "satisfied" and answer["abstained"] is False
            cited = answer["citations"]
            assert roster in {c["document_id"] for c in cited}
            first = cited[0]
            assert first["uri"].endswith("maintenance.md") and first["excerpt"]
            assert {"page", "start_s", "end_s", "image_uri"} <= set(first)
            query_id = answer["query_id"]
            assert answer["trace"] == f"kgrag://traces/{query_id}"

            trace = await _call(client, "open_trace", query_id=query_id)
            assert trace["query"]["id"] == query_id and trace["query"]["asked_by"] == "mcp:ann"
            assert trace["steps"]
            resource = await client.read_resource(answer["trace"])
            assert json.loads(resource.contents[0].text)["query"]["id"] == query_id  # type: ignore[union-attr]
            audit = await _call(client, "audit", query_id=query_id)
            assert audit["query_id"] == query_id

            documents = await _call(client, "list_documents")
            assert roster in {d["id"] for d in documents["result"]}
            described = await _call(client, "describe_document", document_id=roster)
            assert "Ada Lovelace" in described["entities"]

            evidence = await _call(client, "search", question=QUESTION, limit=3)
            assert len(evidence["hits"]) <= 3 and "answer" not in evidence
            assert evidence["hits"][0]["document_id"] == roster
            assert evidence["query_id"] != query_id

    asyncio.run(main())


def test_a_caller_without_the_group_reads_nothing_of_the_roster(demo: DemoCorpus) -> None:
    roster = demo.documents["maintenance.md"]

    async def main() -> None:
        async with _client(demo, ROSTER_GROUP) as member:
            theirs = (await _call(member, "ask", question=QUESTION))["query_id"]
        async with _client(demo) as outsider:
            answer = await _call(outsider, "ask", question=QUESTION)
            assert roster not in {c["document_id"] for c in answer["citations"]}
            assert roster not in {c["document_id"] for c in answer["closest"]}
            assert "Ada Lovelace" not in answer["answer"]
            documents = await _call(outsider, "list_documents")
            assert roster not in {d["id"] for d in documents["result"]}
            assert "no document" in await _error(outsider, "describe_document", document_id=roster)
            evidence = await _call(outsider, "search", question=QUESTION)
            assert roster not in {h["document_id"] for h in evidence["hits"]}
            # the member's question is as absent to the outsider as an unknown id
            assert "no query" in await _error(outsider, "open_trace", query_id=theirs)
            assert "no query" in await _error(outsider, "audit", query_id=theirs)
            assert "forbidden" in await _error(outsider, "ingest", paths=[str(demo.folder)])

    asyncio.run(main())


def test_a_question_about_an_attached_image(demo: DemoCorpus) -> None:
    picture = drawing(demo.folder, "red", "circle", 201)
    data = base64.b64encode(picture.read_bytes()).decode()

    async def main() -> None:
        async with _client(demo) as client:
            answer = await _call(
                client, "ask", question="", attachments=[{"name": picture.name, "data": data}]
            )
            cited = {c["document_id"] for c in answer["citations"]}
            assert demo.documents["valve_pv7.png"] in cited
            assert any(c["kind"] == "image" and c["image_uri"] for c in answer["citations"])
            trace = await _call(client, "open_trace", query_id=answer["query_id"])
            assert any(s["type"] == "image_embedding" for s in trace["steps"])
            bad = [{"name": "holiday.png", "data": base64.b64encode(b"not an image").decode()}]
            assert "holiday.png" in await _error(client, "ask", question="", attachments=bad)
            assert "base64" in await _error(
                client, "ask", question="", attachments=[{"name": "x.png", "data": "%%"}]
            )

    asyncio.run(main())


def test_only_an_admin_ingests_and_only_inside_the_ingest_roots(
    demo: DemoCorpus, tmp_path: Path
) -> None:
    inside = tmp_path / "root"
    inside.mkdir()
    (inside / "note.md").write_text("# Note\n\nThe Spare Pump SP-4 is kept by Hedy Lamarr.\n")
    admin = stdio_principal("root", (), (Role.ADMIN,))
    server = build_server(demo.agent, process_identity(admin), ingest_roots=[inside])

    async def main() -> None:
        async with Client(server) as client:
            assert "outside" in await _error(client, "ingest", paths=[str(demo.folder)])
            report = await _call(client, "ingest", paths=["note.md"], acl=["group:spares"])
            assert report["ingested"] == 1 and report["failed"] == 0

    asyncio.run(main())
    rows = demo.agent.store.read("document_list", {"principals": ["group:spares"], "admin": False})
    assert any(r["uri"].endswith("note.md") for r in rows)


def test_streamable_http_authenticates_each_request_with_an_api_key(
    demo: DemoCorpus, tmp_path: Path
) -> None:
    keys = tmp_path / "keys.json"
    _, member = new_key(keys, "bob", Role.READER, groups=(ROSTER_GROUP,))
    _, stranger = new_key(keys, "eve", Role.READER)
    authenticator = Authenticator.from_settings(Settings(api_keys_file=keys))
    app = http_app(build_server(demo.agent, http_identity(authenticator)), authenticator)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            assert time.monotonic() < deadline and thread.is_alive()
            time.sleep(0.05)
        refused = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert refused.status_code == 401 and refused.json()["error"] == "unauthorized"

        async def ask(key: str) -> dict[str, Any]:
            async with (
                httpx2.AsyncClient(headers=bearer(key), timeout=120) as http,
                Client(streamable_http_client(url, http_client=http)) as client,
            ):
                return await _call(client, "ask", question=QUESTION)

        roster = demo.documents["maintenance.md"]
        answer = asyncio.run(ask(member))
        assert roster in {c["document_id"] for c in answer["citations"]}
        assert roster not in {c["document_id"] for c in asyncio.run(ask(stranger))["citations"]}
        rows = demo.agent.store.read("trace_read_query", {"id": answer["query_id"]})
        assert rows[0]["user"] == "bob"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
