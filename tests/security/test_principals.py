"""Namespaced principals (issue 14, item 2): a group named like a user matches nothing of that
user, and the other way round.

One document is readable by the user ``ada`` (``user:ada``), another by the group ``ada``
(``group:ada``). The user ada reads the first only; eve, a member of the group ada, reads the
second only: by listing, vector search, full-text search and a whole question through the real
agent, on both engines; and through a real ``kgrag serve`` (embedded store), where a bare name in
``POST /ingest`` is refused with a 422 naming it. Before namespacing, a reader's principals were
the bare user and group names, so eve (group ada) read ada's private document."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")

from typer.testing import CliRunner

from kgrag.agent.agent import KnowledgeAgent
from kgrag.cli import app
from kgrag.core import AccessContext
from kgrag.errors import InvalidAclError
from kgrag.modalities.text import default_text_embedder
from kgrag.server.launch import serve_subprocess
from tests.support.engines import Engine
from tests.support.jobs import wait_job

USER_DOC = (
    "Project Heliotrope: the Zephyr Turbine ZT-9 is maintained by Hedy Lamarr. "
    "The Zephyr Turbine ZT-9 replaces the old pump next spring.\n"
)
GROUP_DOC = (
    "Project Marigold: the Cooling Fan CF-9 is maintained by Grace Hopper. "
    "The Cooling Fan CF-9 keeps the turbine hall cool.\n"
)
USER_SECRETS = ("Heliotrope", "Hedy", "Zephyr")
GROUP_SECRETS = ("Marigold", "Grace", "Cooling Fan")
QUESTIONS = ("Who maintains the Zephyr Turbine ZT-9?", "Who maintains the Cooling Fan CF-9?")

#: The user ada; eve in the group ada; the user ada is not a member of the group ada.
ADA = AccessContext(user="ada")
EVE_IN_GROUP_ADA = AccessContext(user="eve", groups=("ada",))


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("principals")
    (root / "user").mkdir()
    (root / "group").mkdir()
    (root / "user" / "heliotrope.md").write_text(USER_DOC, encoding="utf-8")
    (root / "group" / "marigold.md").write_text(GROUP_DOC, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def ingested(module_engine: Engine, folder: Path) -> Iterator[tuple[KnowledgeAgent, str, str]]:
    """The agent, the document of the user ada and the document of the group ada."""
    with KnowledgeAgent(module_engine.open(), default_text_embedder()) as agent:
        user = agent.ingest([str(folder / "user")], acl=["user:ada"])
        group = agent.ingest([str(folder / "group")], acl=["group:ada"])
        assert user.failed == group.failed == 0, (user.failures, group.failures)
        yield agent, user.document_ids[0], group.document_ids[0]


def _read_documents(agent: KnowledgeAgent, access: AccessContext) -> set[str]:
    """Documents ``access`` reaches by listing, vector search and full-text search (each read
    must agree: they all carry the same ACL filter)."""
    params = access.params()
    listed = {r["id"] for r in agent.store.read("document_list", params)}
    vectors = agent.text_embedder.embed(list(QUESTIONS))
    searched = {
        r["document_id"]
        for v in vectors
        for r in agent.store.read("vector_chunks", {"vector": list(v), "k": 10, **params})
    }
    fulltext = {
        r["document_id"]
        for word in ("zephyr", "cooling")
        for r in agent.store.read("templates/chunks_fulltext", {"query": word, "k": 10, **params})
    }
    assert listed == searched == fulltext, (listed, searched, fulltext)
    return listed


def test_a_user_and_a_group_of_the_same_name_read_different_documents(
    ingested: tuple[KnowledgeAgent, str, str],
) -> None:
    agent, user_doc, group_doc = ingested
    assert _read_documents(agent, ADA) == {user_doc}
    assert _read_documents(agent, EVE_IN_GROUP_ADA) == {group_doc}
    assert _read_documents(agent, AccessContext(user="ada", groups=("ada",))) == {
        user_doc,
        group_doc,
    }
    assert _read_documents(agent, AccessContext(user="eve")) == set()


@pytest.mark.parametrize("question", QUESTIONS)
def test_a_question_of_a_group_member_never_reaches_the_users_document(
    ingested: tuple[KnowledgeAgent, str, str], question: str
) -> None:
    agent, user_doc, group_doc = ingested
    member = agent.ask(question, user="eve", groups=["ada"])
    assert user_doc not in {c.document_id for c in member.citations}
    assert not any(s in member.answer for s in USER_SECRETS), member.answer
    ada = agent.ask(question, user="ada")
    assert group_doc not in {c.document_id for c in ada.citations}
    assert not any(s in ada.answer for s in GROUP_SECRETS), ada.answer
    # each reaches their own document, so the checks above can fail
    own = user_doc if "Zephyr" in question else group_doc
    reader = ada if own == user_doc else member
    assert own in {c.document_id for c in reader.citations}, reader.answer


def test_a_bare_name_is_refused_by_the_python_api_and_the_cli_before_anything_is_stored(
    ingested: tuple[KnowledgeAgent, str, str], folder: Path, tmp_path: Path
) -> None:
    agent, _, _ = ingested
    before = agent.store.read("document_list", {"principals": [], "admin": True})
    with pytest.raises(InvalidAclError, match=r"'ada'.*'user:ada'.*'group:ada'"):
        agent.ingest([str(folder / "user")], acl=["ada"])
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(json.dumps({"path": "a.md", "acl": ["ada"]}) + "\n")
    (tmp_path / "a.md").write_text("A note.\n")
    report = agent.ingest([str(manifest)])
    assert report.failed == 1 and "'ada'" in report.failures[0].reason
    assert agent.store.read("document_list", {"principals": [], "admin": True}) == before
    result = CliRunner().invoke(
        app, ["ingest", str(tmp_path / "a.md"), "--acl", "ada", "--store", f"{tmp_path}/x.db"]
    )
    assert result.exit_code == 2
    assert "'--acl'" in result.output and "'ada'" in result.output
    assert "'user:ada'" in result.output and "'group:ada'" in result.output
    assert not (tmp_path / "x.db").exists()  # refused before the store was opened


# ------------------------------------------------------------------------------ over HTTP

TOKEN = "principals-token-14"


def _asker(user: str, groups: list[str]) -> dict[str, Any]:
    """How a request says who asks (the one place to change when identity comes from
    credentials)."""
    return {"user": user, "groups": groups}


def test_over_http_a_bare_name_is_refused_and_a_group_reads_nothing_of_a_user(
    tmp_path: Path, folder: Path
) -> None:
    # no authentication: the local principal, which may name who asks (as a gateway's key
    # with the impersonate role would)
    env = {
        **os.environ,
        "KGRAG_DATA_DIR": str(tmp_path / "data"),
        "OMP_NUM_THREADS": "1",
    }
    store = f"falkordb-lite:///{tmp_path}/kg.db"
    with (
        serve_subprocess(store, env, tmp_path / "server.log", ["--ingest-root", str(folder)]) as up,
        httpx.Client(
            base_url=up.base, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=300
        ) as c,
    ):
        bare = c.post("/ingest", json={"paths": ["user"], "acl": ["ada"]})
        assert bare.status_code == 422, bare.text
        assert "'ada'" in bare.text and "user:ada" in bare.text and "group:ada" in bare.text
        job = c.post("/ingest", json={"paths": ["user"], "acl": ["user:ada"]})
        assert job.status_code == 202, job.text
        done = wait_job(c, job.json()["id"])
        assert done["status"] == "done" and done["report"]["ingested"] == 1, done
        (doc,) = done["report"]["document_ids"]

        question = {"question": QUESTIONS[0]}
        member = c.post("/ask", json={**question, **_asker("eve", ["ada"])})
        assert member.status_code == 200, member.text
        assert doc not in {x["document_id"] for x in member.json()["citations"]}
        assert not any(s in member.json()["answer"] for s in USER_SECRETS)
        ada = c.post("/ask", json={**question, **_asker("ada", [])})
        assert doc in {x["document_id"] for x in ada.json()["citations"]}, ada.text
