"""An acronym defined in one document does not name, to the readers of another, what only the
first says it means (issue 14, item 4). "Project Bluefin Operations (PBO)" in alice's private
document made every "PBO" of the corpus, public documents of the same ingestion job included, a
mention of the entity "Project Bluefin Operations": its readers learned the name. A definition
now holds for the whole corpus only in a public document; otherwise only in documents whose every
reader may read it, and its short form is not stored as an alias. On both engines."""

from __future__ import annotations

import json
from pathlib import Path

from kgrag.agent.agent import KnowledgeAgent
from kgrag.config import Settings
from kgrag.core import AccessContext
from kgrag.executor.document_handlers import documents_about
from kgrag.ingest.entities import MentionMerger
from kgrag.modalities import factory
from tests.security.principals import ReadAs, user_acl
from tests.support.engines import Engine

PRIVATE = "The Project Bluefin Operations (PBO) started in May under Grace Hopper.\n"
PUBLIC = "The PBO canteen budget was approved on Friday.\n"


def test_a_private_acronym_does_not_name_entities_of_a_public_document(
    engine: Engine, tmp_path: Path
) -> None:
    store = engine.open()
    try:
        agent = KnowledgeAgent(store, factory.text_embedder(Settings()))
        (tmp_path / "bluefin.md").write_text(PRIVATE, encoding="utf-8")
        (tmp_path / "canteen.md").write_text(PUBLIC, encoding="utf-8")
        manifest = tmp_path / "job.jsonl"
        manifest.write_text(
            json.dumps({"path": "bluefin.md", "acl": user_acl("alice")})
            + "\n"
            + json.dumps({"path": "canteen.md"})
            + "\n",
            encoding="utf-8",
        )
        assert agent.ingest([str(manifest)]).failed == 0  # one job, both documents

        def about(reader: AccessContext) -> str:
            rows = documents_about(ReadAs(store, reader), ["bluefin", "operations"], [], 10)
            return json.dumps(rows, default=str).lower()

        assert "bluefin" in about(AccessContext(user="alice"))  # her own document names it
        bob = about(AccessContext(user="bob"))
        assert "bluefin" not in bob, bob
    finally:
        store.close()


def test_a_scoped_definition_holds_where_every_reader_may_read_it() -> None:
    resolver = MentionMerger()
    long = resolver.resolve_document(
        [("Project Bluefin Operations", "ORG")],
        [("PBO", "Project Bluefin Operations")],
        acl=("user:alice",),
    )[0]
    # alice's other document: she may read the definition
    assert resolver.resolve_document([("PBO", "ORG")], acl=("user:alice",)) == [long]
    # a public document, or one a group may read: not the long form
    assert resolver.resolve_document([("PBO", "ORG")], acl=("*",)) != [long]
    assert resolver.resolve_document([("PBO", "ORG")], acl=("group:team-a",)) != [long]
    # the short form is no stored alias of the entity (a later job would learn it from it)
    assert "PBO" not in resolver.record(long).aliases
    # and it survives a restart of the resolver from its state
    again = MentionMerger.from_state(resolver.state())
    assert again.resolve_document([("PBO", "ORG")], acl=("user:alice",)) == [long]
