"""A question that cannot be asked is refused before any model or query, naming what is wrong,
and nothing stored changes (issue 15):

- a control character other than whitespace: a NUL ended in a StoreError at the trace write on
  FalkorDB ("Failed to parse query parameter 'text' value"); an ESC would be printed back by
  ``kgrag trace``;
- no word at all: ``"."``, ``"!!!"`` or ``"???"`` was answered by quoting the nearest sentence;
  ``""`` and spaces ended in a PlanError ("invalid plan: the question is empty").

The Python API raises :class:`~kgrag.errors.InvalidTextError`, HTTP answers 422
``invalid_question`` naming the field (``/ask`` and ``/ask/stream``: before the stream starts),
and a real ``kgrag ask`` exits 2 with the message. Each engine in turn."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from kgrag.agent.agent import KnowledgeAgent
from kgrag.config import Settings
from kgrag.errors import InvalidTextError
from kgrag.graph.store import GraphStore
from kgrag.modalities.text import default_text_embedder
from kgrag.server.app import create_app
from tests.support.engines import Engine

KGRAG = Path(sys.executable).parent / "kgrag"
_JSON = {"Content-Type": "application/json"}

#: (question, what the refusal says)
CONTROLS = [
    ("Who wrote\x00 the first program?", "character 10 is the control character U+0000 (NUL)"),
    ("Who wrote\x01 the first program?", "U+0001"),
    ("Who\x1b[31m wrote the first program?", "U+001B (ESC)"),
    ("Who wrote the first program?\x7f", "U+007F (DEL)"),
    ("Who wrote\x85the first program?", "U+0085"),
]
WORDLESS = [
    (".", "no words"),
    ("!!!", "no words"),
    ("???", "no words"),
    ("?! …", "no words"),
    ("", "it is empty"),
    ("  \t\n ", "it is empty"),
]


def _state(store: GraphStore) -> dict[str, int]:
    return {r["label"]: int(r["n"]) for r in store.read("stats_labels") if int(r["n"])}


@pytest.fixture(scope="module")
def agent(
    module_engine: Engine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KnowledgeAgent]:
    docs = tmp_path_factory.mktemp("questions") / "docs"
    docs.mkdir()
    (docs / "ada.md").write_text(
        "# Ada Lovelace\n\nAda Lovelace wrote the first program in 1843.\n", encoding="utf-8"
    )
    with KnowledgeAgent(module_engine.open(), default_text_embedder()) as found:
        assert found.ingest([str(docs)]).ingested == 1
        yield found


@pytest.mark.parametrize(("question", "said"), CONTROLS + WORDLESS)
def test_the_python_api_refuses(agent: KnowledgeAgent, question: str, said: str) -> None:
    before = _state(agent.store)
    with pytest.raises(InvalidTextError, match="invalid question: ") as caught:
        agent.ask(question)
    assert said in str(caught.value)
    with pytest.raises(InvalidTextError):
        agent.search(question)
    assert _state(agent.store) == before  # no Query node: refused before the trace


def test_whitespace_and_words_of_any_script_are_asked(agent: KnowledgeAgent) -> None:
    answer = agent.ask("Who wrote\tthe first\r\nprogram?")
    assert "1843" in answer.answer and answer.citations
    assert agent.ask("1843?").query_id  # a number is a word
    assert agent.ask("¿Quién escribió el primer programa?").query_id


def test_http_refuses_with_422_naming_the_field(
    agent: KnowledgeAgent, module_engine: Engine
) -> None:
    before = _state(agent.store)
    settings = Settings(
        store=module_engine.uri,
        data_dir=module_engine.folder,
        ingest_roots=(module_engine.folder,),
        **module_engine.credentials(),
    )
    app = create_app(settings, agent=agent)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        for path in ("/ask", "/ask/stream"):
            for question, said in CONTROLS + WORDLESS:
                if not question:
                    continue  # min_length=1: pydantic's own string_too_short
                body = json.dumps({"question": question}).encode("ascii")
                r = client.post(path, content=body, headers=_JSON)
                assert r.status_code == 422, (path, question, r.text)
                (problem,) = r.json()["detail"]
                assert problem["loc"] == ["body", "question"], problem
                assert problem["type"] == "invalid_question" and said in problem["msg"], problem
        # beside a file, an empty question is the file's to ask, a control character is not
        r = client.post(
            "/ask/upload",
            data={"question": "what\x00"},
            files={"files": ("a.wav", b"RIFF", "audio/wav")},
            headers={"Authorization": "Bearer any"},
        )
        assert r.status_code == 422, r.text
        assert r.json()["detail"][0]["type"] == "invalid_question", r.text
    assert _state(agent.store) == before


@pytest.mark.parametrize(
    ("question", "said"), [("???", "it has no words"), ("a\x1bb", "U+001B (ESC)")]
)
def test_a_real_kgrag_ask_exits_2_with_the_reason(
    agent: KnowledgeAgent, module_engine: Engine, question: str, said: str
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KGRAG_")}
    done = subprocess.run(
        [str(KGRAG), "ask", question],
        env={**env, **module_engine.env()},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    said_all = " ".join(done.stderr.split())
    assert "invalid question: " in said_all and said in said_all, done.stderr
    assert "Traceback" not in done.stderr
