"""British and American spellings meet (kgrag.text.spelling), on both engines: requests' real
package metadata (tests/data/metadata) writes "License: Apache-2.0"; a question asking for the
"licence" finds that line in the lexical stage (the full-text query asks for both spellings, and
BM25 reads both as one word), and the support test counts the question's "licence" as present
in it. The zstd man page beside it names no licence at all."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.core import AccessContext
from kgrag.modalities.text import default_text_embedder
from kgrag.text import term_set, terms
from tests.support.engines import Engine
from tests.support.lexical import lexical_hits

DATA = Path(__file__).resolve().parents[1] / "data"
METADATA = DATA / "metadata" / "requests" / "METADATA"
MAN_PAGE = DATA / "man" / "zstd.1.gz"
READER = AccessContext(user="reader")


@pytest.fixture(scope="module")
def agent(module_engine: Engine) -> Iterator[KnowledgeAgent]:
    store = module_engine.open()
    with KnowledgeAgent(store, default_text_embedder()) as a:
        report = a.ingest([str(METADATA), str(MAN_PAGE)])
        assert report.ingested == 2, report.failures
        yield a


def test_a_question_asking_for_the_licence_finds_the_license_line(agent: KnowledgeAgent) -> None:
    hits = lexical_hits(agent, "Under which licence is it distributed?", READER)
    assert hits, "no lexical hit for 'licence'"
    assert {Path(str(h.uri)).name for h in hits} == {"METADATA"}
    assert any("License: Apache-2.0" in (h.text or "") for h in hits), [h.text for h in hits]


def test_the_support_test_counts_the_other_spelling_as_present() -> None:
    text = METADATA.read_text(encoding="utf-8")
    assert "licence" not in text.lower()
    assert set(terms("Which licence does requests use?")) <= term_set([text])
