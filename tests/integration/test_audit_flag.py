"""The audit of a flagged answer shows its flag, on each engine: who flagged it, when and why, in
``GET /queries/{id}/audit`` (JSON), the audit page, ``kgrag audit`` and ``--json``; once the flag
is cleared the audit shows none."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from kgrag.agent.agent import KnowledgeAgent
from kgrag.agent.audit import build_audit
from kgrag.cli import app as cli_app
from kgrag.core import OPERATOR
from kgrag.modalities.text import default_text_embedder
from kgrag.server.app import create_app
from tests.support.engines import Engine

#: Document text is untrusted, and so is a flag's reason: the page escapes it.
REASON = "cites <b>1842</b>, not 1843"


def test_the_audit_shows_who_flagged_the_answer_when_and_why(engine: Engine) -> None:
    docs = engine.folder / "docs"
    docs.mkdir()
    (docs / "ada.md").write_text(
        "# Ada Lovelace\n\nAda Lovelace wrote the first program in 1843.\n", encoding="utf-8"
    )
    store = engine.fresh()
    with KnowledgeAgent(store, default_text_embedder()) as agent:
        assert agent.ingest([str(docs)]).ingested == 1
        app = create_app(engine.settings(), agent=agent)
        with TestClient(app, base_url="http://127.0.0.1") as client:
            r = client.post("/ask", json={"question": "Who wrote the first program?"})
            assert r.status_code == 200, r.text
            qid = r.json()["query_id"]
            assert client.get(f"/queries/{qid}/audit").json()["flag"] is None
            assert build_audit(store, qid, OPERATOR).flag is None

            flagged = client.post(f"/queries/{qid}/flag", json={"reason": REASON}).json()
            audit = client.get(f"/queries/{qid}/audit").json()
            assert audit["flag"] == {
                "flagged_at": flagged["flagged_at"],
                "flagged_by": "local",  # the caller of a server without authentication
                "reason": REASON,
            }
            page = client.get(f"/queries/{qid}/audit.html").text
            assert "Flagged" in page and "by local" in page and flagged["flagged_at"] in page
            assert "cites &lt;b&gt;1842&lt;/b&gt;, not 1843" in page and REASON not in page

    # the operator flags it again from the command line: the audit names them
    runner = CliRunner()
    base = ["--store", engine.uri]
    env = engine.env()
    done = runner.invoke(cli_app, ["flag", qid, "--reason", "complaint 17", *base], env=env)
    assert done.exit_code == 0, done.output
    shown = runner.invoke(cli_app, ["audit", qid, *base], env=env)
    assert shown.exit_code == 0, shown.output
    assert "by operator: complaint 17" in shown.stdout, shown.stdout
    as_json = runner.invoke(cli_app, ["audit", qid, "--json", *base], env=env)
    flag = json.loads(as_json.stdout)["flag"]
    assert flag["flagged_by"] == "operator" and flag["reason"] == "complaint 17"
    assert flag["flagged_at"] > flagged["flagged_at"]

    cleared = runner.invoke(cli_app, ["flag", qid, "--clear", *base], env=env)
    assert cleared.exit_code == 0, cleared.output
    with engine.open() as store:
        assert build_audit(store, qid, OPERATOR).flag is None
    assert "flagged" not in runner.invoke(cli_app, ["audit", qid, *base], env=env).stdout
