"""Entity names reach a reader only from documents they may read (issue 14, item 4): a picture in
a public document that DEPICTS an entity (CLIP linking at ingestion compares the picture with
every entity of the store) does not make that entity known to the picture's readers when only a
private document mentions it. The DEPICTS edge is written with the writer's own statement
(``image_link_depicts``), so the case does not hang on a CLIP score; alice, who may read the
private document, gets the entity from every read (so the checks can fail). Both engines."""

from __future__ import annotations

import json
import random
from functools import cache
from pathlib import Path

from kgrag.agent.agent import KnowledgeAgent
from kgrag.config import Settings
from kgrag.core import OPERATOR, AccessContext
from kgrag.demo.shapes import draw_shape
from kgrag.executor.document_handlers import documents_about
from kgrag.modalities import factory
from kgrag.modalities.clip import tiny_clip_embedder
from tests.security.principals import PUBLIC_ACL, ReadAs, user_acl
from tests.support.engines import Engine

SECRET = "Operation Bluefin"
PRIVATE = f"{SECRET} moved the archive to the northern vault in March.\n"


def test_a_depicted_entity_is_named_only_to_readers_of_a_mention(
    engine: Engine, tmp_path: Path
) -> None:
    store = engine.open()
    try:
        agent = KnowledgeAgent(
            store, factory.text_embedder(Settings()), image_embedder=cache(tiny_clip_embedder)
        )
        private, picture = tmp_path / "bluefin.md", tmp_path / "door.png"
        private.write_text(PRIVATE, encoding="utf-8")
        draw_shape("red", "circle", random.Random(3)).save(picture)
        assert agent.ingest([str(private)], acl=user_acl("alice")).failed == 0
        assert agent.ingest([str(picture)], acl=PUBLIC_ACL).failed == 0
        entity = "operation bluefin"
        assert store.read("entity_by_ids", {"ids": [entity]})
        listed = store.read("document_list", OPERATOR.params())
        doc = next(r["id"] for r in listed if str(r["uri"]).endswith("door.png"))
        image = f"{doc}:i0"
        store.write(
            "image_link_depicts", {"rows": [{"image_id": image, "entity_id": entity, "score": 0.9}]}
        )

        def reads(reader: AccessContext) -> str:
            who = reader.params()
            found = {
                "readable": store.read("entity_readable", {"ids": [entity], **who}),
                "image_entities": store.read(
                    "templates/image_entities", {"ids": [image], "k": 5, **who}
                ),
                "documents_about": [
                    r
                    for r in documents_about(ReadAs(store, reader), ["bluefin"], [entity], 10)
                    if r["id"] == doc
                ],
            }
            return json.dumps(found, default=str).lower()

        assert "bluefin" in reads(AccessContext(user="alice"))
        bob = reads(AccessContext(user="bob"))
        assert "bluefin" not in bob, bob
    finally:
        store.close()
