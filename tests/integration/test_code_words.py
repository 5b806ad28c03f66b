"""A short code the question calls a code ("the ISO 639-2 code haw") on both engines, over the
real ISO code tables of iso-codes (/usr/share/iso-codes/json: ISO 639-2 languages, ISO 4217
currencies and ISO 3166-1 countries; read as JSON text until 2026-11-27, now as tables of one
row per record, kgrag.ingest.json_tables). The tenth real folder's
"Which language has the ISO 639-2 code haw?" was answered from a README: "haw" was no code
identifier, so the lexical ranking, which finds the table rows holding it, had weight 0 in the
fusion, and the dense search does not tell "haw" from "hau" or "hat" (nor "CHF" from "XAU":
here the passage holding CHF was not among the dense ranking's first five); a code of two
letters ("KY") was not even a full-text term. Now the passage holding the code is among the
evidence's first (:data:`FIRST`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.agent.loop import final_evidence
from kgrag.core import AccessContext
from kgrag.executor.base import ExecutionEnv
from kgrag.executor.scheduler import Executor
from kgrag.modalities.text import default_text_embedder
from tests.support.engines import Engine

TABLES = Path("/usr/share/iso-codes/json")
FILES = [TABLES / "iso_639-2.json", TABLES / "iso_4217.json", TABLES / "iso_3166-1.json"]
READER = AccessContext(user="eve")
#: The evidence passages the code's must be among: the answer quotes from the first few.
FIRST = 3

pytestmark = pytest.mark.skipif(
    not all(f.exists() for f in FILES), reason="iso-codes' JSON tables are not installed"
)


@pytest.fixture(scope="module")
def agent(module_engine: Engine) -> Iterator[KnowledgeAgent]:
    store = module_engine.open()
    with KnowledgeAgent(store, default_text_embedder()) as a:
        report = a.ingest([str(f) for f in FILES])
        assert report.ingested == len(FILES), report.failures
        yield a


@pytest.mark.parametrize(
    ("question", "row"),
    [
        ("Which language has the ISO 639-2 code haw?", "alpha_3: haw;"),
        ("Which currency has the ISO 4217 code CHF?", "alpha_3: CHF;"),
        ("Which country has the ISO 3166 code KY?", "alpha_2: KY;"),
    ],
)
def test_the_passage_holding_the_code_leads_the_evidence(
    agent: KnowledgeAgent, question: str, row: str
) -> None:
    plan, _ = agent.plan(question)
    env = ExecutionEnv(store=agent.store, text_embedder=agent.text_embedder, access=READER)
    text, _ = final_evidence(plan, Executor(env).run(plan))
    assert any(row in (h.text or "") for h in text[:FIRST]), [
        " ".join((h.text or "").split())[:80] for h in text[:5]
    ]
