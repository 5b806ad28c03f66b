"""Text that is not Unicode never reaches the store: a lone surrogate (what invalid UTF-8 in a
command-line argument becomes in Python, what a JSON ``"\\udcff"`` escape decodes to) is refused
where it enters, naming the input and the character, and nothing stored changes.

- HTTP: 422 ``invalid_unicode`` with the field's path, for every text field of the bodies;
- CLI: exit 2 naming the option (a real ``kgrag`` given the byte 0xFF, and CliRunner for the
  other commands);
- the Python API: :class:`~kgrag.errors.InvalidTextError`;
- ingestion: a manifest line of invalid UTF-8 and a file whose name is not UTF-8 fail alone, the
  rest is ingested.

One embedded store for the module (the refusals happen before any query, on either engine)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from kgrag.agent.agent import KnowledgeAgent
from kgrag.cli import app as cli_app
from kgrag.config import Settings
from kgrag.errors import InvalidTextError
from kgrag.graph import open_store
from kgrag.modalities.text import default_text_embedder
from kgrag.retention import flag_query
from kgrag.server.app import create_app

KGRAG = Path(sys.executable).parent / "kgrag"
_JSON = {"Content-Type": "application/json"}
#: What the byte 0xFF of an argument becomes in Python (surrogateescape).
BAD = "a\udcffb"


@dataclass(frozen=True)
class Stored:
    uri: str
    folder: Path
    query_id: str


def _state(uri: str) -> dict[str, object]:
    """What a refused input must not change: node counts and the flag of every question."""
    with open_store(uri) as store:
        labels = {r["label"]: int(r["n"]) for r in store.read("stats_labels") if int(r["n"])}
        flags = store.read_freeform("MATCH (q:Query) RETURN q.id AS id, q.flagged_at AS at")
    return {"labels": labels, "flags": sorted((r["id"], r["at"]) for r in flags)}


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> Stored:
    """A store holding one document and one answered question."""
    folder = tmp_path_factory.mktemp("unicode")
    uri = f"falkordb-lite:///{folder}/kg.db"
    docs = folder / "docs"
    docs.mkdir()
    (docs / "ada.md").write_text(
        "# Ada Lovelace\n\nAda Lovelace wrote the first program in 1843.\n", encoding="utf-8"
    )
    with KnowledgeAgent(open_store(uri), default_text_embedder()) as agent:
        assert agent.ingest([str(docs)]).ingested == 1
        answer = agent.ask("Who wrote the first program?")
    return Stored(uri, folder, answer.query_id)


def test_bad_names_and_manifest_lines_fail_alone(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "grace.md").write_text("# Grace Hopper\n\nShe built A-0 in 1952.\n", encoding="utf-8")
    # a file whose name is the byte 0xFF: Python sees the surrogate U+DCFF in its path
    bad_name = os.fsencode(docs) + b"/bad\xff.md"
    with open(bad_name, "wb") as f:
        f.write(b"# Bad\n\nA file whose name is not UTF-8.\n")
    (tmp_path / "alan.md").write_text("# Alan Turing\n\nHe wrote in 1936.\n", encoding="utf-8")
    manifest = tmp_path / "list.jsonl"
    manifest.write_bytes(
        b'{"path": "alan.md", "title": "Bad \xff title"}\n'
        b'{"path": "alan.md", "title": "Alan Turing", "tags": ["\\udcff"]}\n'
        b'{"path": "alan.md", "title": "Alan Turing"}\n'
    )
    with KnowledgeAgent(
        open_store(f"falkordb-lite:///{tmp_path}/kg.db"), default_text_embedder()
    ) as agent:
        report = agent.ingest([str(docs), str(manifest)])
        rows = agent.store.read_freeform("MATCH (d:Document) RETURN d.title AS title")
    titles = sorted(r["title"] for r in rows)
    assert report.ingested == 2 and titles == ["Alan Turing", "Grace Hopper"], report
    reasons = {f.path: f.reason for f in report.failures} | {s.path: s.detail for s in report.skips}
    assert any(p.endswith("bad\\udcff.md") and "not valid UTF-8" in r for p, r in reasons.items())
    line_1 = next(r for p, r in reasons.items() if p.endswith("list.jsonl:1"))
    assert "line 1: malformed line" in line_1 and "U+DCFF" in line_1 and "0xFF" in line_1
    line_2 = next(r for p, r in reasons.items() if p.endswith("list.jsonl:2"))
    assert "line 2: malformed line" in line_2 and "surrogate" in line_2


def test_http_refuses_with_422_naming_the_field(stored: Stored) -> None:
    before = _state(stored.uri)
    qid = stored.query_id
    cases = [
        ("/ask", {"question": BAD}, ["body", "question"]),
        ("/ask", {"question": "ok", "session_id": BAD}, ["body", "session_id"]),
        ("/ask", {"question": "ok", "user": BAD}, ["body", "user"]),
        ("/ask", {"question": "ok", "groups": ["a", BAD]}, ["body", "groups", 1]),
        ("/ask/stream", {"question": BAD}, ["body", "question"]),
        ("/ingest", {"paths": ["docs", BAD]}, ["body", "paths", 1]),
        (f"/queries/{qid}/flag", {"reason": BAD}, ["body", "reason"]),
    ]
    settings = Settings(store=stored.uri, data_dir=stored.folder, ingest_roots=(stored.folder,))
    with KnowledgeAgent(open_store(stored.uri), default_text_embedder()) as agent:
        app = create_app(settings, agent=agent)
        with TestClient(app, base_url="http://127.0.0.1") as client:
            for path, body, loc in cases:
                # the JSON escape \udcff, as a client sends it (json.dumps writes it so)
                r = client.post(path, content=json.dumps(body).encode("ascii"), headers=_JSON)
                assert r.status_code == 422, (path, r.text)
                assert r.json()["error"] == "invalid_request"
                (problem,) = r.json()["detail"]
                assert problem["loc"] == loc and problem["type"] == "invalid_unicode", problem
                assert "U+DCFF" in problem["msg"], problem
    assert _state(stored.uri) == before


@pytest.mark.parametrize(
    ("args", "where"),
    [
        (["ask", BAD], "'question'"),
        (["ask", "ok", "--session", BAD], "'--session'"),
        (["ask", "ok", "--user", BAD], "'--user'"),
        (["ask", "ok", "--groups", f"a,{BAD}"], "'--groups'"),
        (["flag", "QID", "--reason", BAD], "'--reason'"),
        (["flag", BAD], "'query_id'"),
        (["audit", BAD], "'query_id'"),
        (["forget", "--user", BAD], "'--user'"),
        (["delete", BAD], "'document_id'"),
        (["ingest", BAD], "'paths'"),
    ],
)
def test_cli_refuses_with_exit_2_naming_the_option(
    stored: Stored, args: list[str], where: str
) -> None:
    """Refused while the arguments are parsed: the command (which opens the store) never runs
    (the real command's store is checked by the next test)."""
    args = [stored.query_id if a == "QID" else a for a in args]
    result = CliRunner().invoke(cli_app, [*args, "--store", stored.uri])
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.replace("│", " ").split())  # typer may draw a wrapped panel
    assert f"Invalid value for {where}" in said, result.output
    assert "U+DCFF" in said and "0xFF" in said


def test_a_real_kgrag_refuses_a_reason_of_invalid_utf8(stored: Stored) -> None:
    """The defect as found: ``kgrag flag ID --reason $'\\xff'`` ended in a store encode error."""
    before = _state(stored.uri)
    env = {k: v for k, v in os.environ.items() if not k.startswith("KGRAG_")}
    done = subprocess.run(
        [os.fsencode(KGRAG), b"flag", stored.query_id.encode(), b"--reason", b"bad \xff"],
        env={**env, "KGRAG_STORE": stored.uri},
        capture_output=True,
        timeout=120,
        check=False,
    )
    stderr = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 2, stderr
    said = " ".join(stderr.replace("│", " ").split())
    assert "Invalid value for '--reason'" in said and "U+DCFF" in said, stderr
    assert "Traceback" not in stderr
    assert _state(stored.uri) == before


def test_the_python_api_refuses_before_any_model_or_query(stored: Stored) -> None:
    before = _state(stored.uri)
    with KnowledgeAgent(open_store(stored.uri), default_text_embedder()) as agent:
        with pytest.raises(InvalidTextError, match=r"invalid question: .*U\+DCFF"):
            agent.ask(BAD)
        with pytest.raises(InvalidTextError, match="invalid group name"):
            agent.ask("ok", groups=["a", BAD])
        with pytest.raises(InvalidTextError, match="invalid flag reason"):
            flag_query(agent.store, stored.query_id, by="operator", reason=BAD)
    assert _state(stored.uri) == before
