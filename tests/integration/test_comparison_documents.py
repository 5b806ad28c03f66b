"""A comparison whose sides are documents' titles compares the documents (both engines).

Tried on a real folder: "Compare the Apache License and the GNU GPL" resolved each side as the
entity of that name (the licence texts name themselves), and answered with entity profiles that
cited no file and listed the names they occur with ("mentioned with Version, LICENSE-2, END OF
TERMS AND CONDITIONS, ..."). A side a readable document's title names whole is now that document.
"""

from __future__ import annotations

from pathlib import Path

from kgrag.agent.agent import KnowledgeAgent
from kgrag.core import OPERATOR
from kgrag.executor.trace import read_trace
from kgrag.modalities.text import default_text_embedder
from tests.support.engines import Engine

LICENCES = {
    "apache.md": "# Apache License\n\nThe Apache License lets anyone use, modify and share the "
    "work. Under the Apache License a modified file must carry a notice that it was changed.\n",
    "gpl.md": "# GNU General Public License\n\nThe GNU General Public License keeps derived works "
    "under the GNU General Public License. Whoever shares a binary must offer its source code.\n",
}


def test_a_side_a_document_title_names_is_that_document_not_an_entity(engine: Engine) -> None:
    """'Apache License' is a document's title and an entity its text mentions: comparing two
    documents by their titles compares the documents (their passages, cited by file), not the
    entities' profiles (which cited no file and listed the names they occur with)."""
    folder = engine.folder / "licences"
    folder.mkdir(parents=True)
    for name, text in LICENCES.items():
        (folder / name).write_text(text, encoding="utf-8")
    with KnowledgeAgent(engine.fresh(), default_text_embedder()) as agent:
        assert agent.ingest([str(folder)]).ingested == 2
        answer = agent.ask("Compare the Apache License and the GNU General Public License")
        steps = read_trace(agent.store, answer.query_id, OPERATOR).to_json()["steps"]
    assert [s["type"] for s in steps] == ["compare"]
    sides = steps[0]["details"]["sides"]
    assert [s["resolved"] for s in sides] == ["documents", "documents"], sides
    assert [Path(str(c.uri)).name for c in answer.citations] == ["apache.md", "gpl.md"]
    assert "modified file must carry a notice" in answer.answer
