"""Traces and audits re-check ACLs when they are read (issue 14, design decision 4): narrowing a
document's ACL after a question hides that document's excerpts, evidence and citations from the
old trace and audit of a reader who cannot read it any more; the answer text that cites it is
withheld. On both engines; the same reads before the change show the text (the checks can fail)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.agent.audit import build_audit
from kgrag.config import Settings
from kgrag.core import OPERATOR
from kgrag.executor.trace import read_trace
from kgrag.modalities import factory
from tests.security.principals import ADA, ANONYMOUS, group_acl, user_acl
from tests.support.engines import Engine

SECRETS = ("northern vault", "Grace Hopper")
"""In the document, not in the question (the question is the asker's own and stays)."""
REPORT = (
    "Operation Bluefin moved the archive to the northern vault in March. "
    "Operation Bluefin was led by Grace Hopper.\n"
)
PUBLIC = "The canteen opens at eight. The library closes at six.\n"


def _leaks(value: object, doc_ids: set[str]) -> list[str]:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return [s for s in (*SECRETS, *doc_ids) if s in text]


def test_narrowed_acl_hides_old_trace_and_audit(engine: Engine, tmp_path: Path) -> None:
    store = engine.open()
    try:
        agent = KnowledgeAgent(store, factory.text_embedder(Settings()))
        report, public = tmp_path / "bluefin.md", tmp_path / "canteen.md"
        report.write_text(REPORT, encoding="utf-8")
        public.write_text(PUBLIC, encoding="utf-8")
        assert agent.ingest([str(public)]).failed == 0
        assert agent.ingest([str(report)], acl=group_acl("team-a")).failed == 0
        doc_ids = {
            r["id"]
            for r in store.read("document_list", OPERATOR.params())
            if "bluefin" in str(r.get("uri"))
        }
        assert len(doc_ids) == 1

        answer = agent.ask("Who led Operation Bluefin?", user=ADA.user, groups=ADA.groups)
        assert {c.document_id for c in answer.citations} & doc_ids
        qid = answer.query_id
        # ada can read it now: her trace and audit show the evidence (so the checks can fail)
        assert _leaks(read_trace(store, qid, ADA).to_json(), doc_ids)
        before = build_audit(store, qid, ADA)
        assert before.answer and _leaks(before.to_html(), doc_ids)
        # ... an anonymous reader of the same trace sees none of it
        assert not _leaks(read_trace(store, qid, ANONYMOUS).to_json(), doc_ids)

        # the ACL is narrowed to bob alone after the question
        assert agent.ingest([str(report)], acl=user_acl("bob")).failed == 0
        trace = read_trace(store, qid, ADA).to_json()
        assert not _leaks(trace, doc_ids), _leaks(trace, doc_ids)
        assert trace["answer"]["text"] is None and trace["answer"]["hidden"] >= 1
        assert sum(s["hidden"] for s in trace["steps"]) >= 1
        audit = build_audit(store, qid, ADA)
        assert audit.answer is None and audit.hidden_sources >= 1
        assert not _leaks(audit.model_dump(mode="json"), doc_ids)
        assert not _leaks(audit.to_html(), doc_ids)
        assert "withheld" in audit.to_html()
        # the trace itself is intact: the operator still reads all of it
        assert _leaks(read_trace(store, qid, OPERATOR).to_json(), doc_ids)
    finally:
        store.close()


@pytest.mark.parametrize("reader", [ANONYMOUS, ADA])
def test_unknown_query_is_not_found(engine: Engine, reader: object) -> None:
    from kgrag.errors import NotFoundError

    store = engine.open()
    try:
        with pytest.raises(NotFoundError):
            read_trace(store, "no-such-query", reader).to_json()  # type: ignore[arg-type]
    finally:
        store.close()
