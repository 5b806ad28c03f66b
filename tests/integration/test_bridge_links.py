"""A next-hop passage found past name-alike distractors, on both engines with real MiniLM
embeddings (kgrag/executor/bridge_links.py).

The bridge retrieval searches again with "question + bridge name". Passages about people whose
names look like the bridge's (Mirela Vasko, Mirela Vastić) and who share the question's relations
(painters, birthplaces) come nearer that search than the bridge's own passage, and before, they
took its place in the top 5. A passage found through a bridge now counts only when it names the
bridge, and scores as its chain (the mean of its similarity and its seed's): the bridge's passage
is back in the top 5 and the name-alikes are not in the hop's result."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.agent.loop import final_evidence
from tests.support.across import (  # noqa: F401 (a fixture)
    compared_across_engines,
    same_on_both_engines,
    shared_folder,
)
from tests.support.corpus import PAINTERS, corpus_agent, run_plan
from tests.support.engines import Engine

pytestmark = pytest.mark.usefixtures("compared_across_engines")

# Each file's first line is its title: test_multihop.py's corpus (tests/support/corpus.py) and
# three name-alikes, none naming Mirela Vastok.
CORPUS = {
    **PAINTERS,
    "mirela_vasko.txt": "Mirela Vasko\nMirela Vasko was a painter of harbour towns, born in the "
    "town of Brno.",
    "mirela_vastic.txt": "Mirela Vastić\nMirela Vastić, a painter and etcher, was born in the "
    "port town of Split.",
    "vastok_gallery.txt": "Vastok Gallery\nThe Vastok Gallery shows paintings by painters born "
    "in the harbour towns of the coast.",
}
QUESTION = "In which town was the painter of The Quiet Harbour born?"
GOLD = {"The Quiet Harbour", "Mirela Vastok"}
NAME_ALIKES = {"Mirela Vasko", "Mirela Vastić"}


@pytest.fixture(scope="module")
def agent(
    module_engine: Engine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KnowledgeAgent]:
    yield from corpus_agent(module_engine, tmp_path_factory, "test_bridge_links", CORPUS)


def test_the_bridge_passage_is_found_past_name_alike_distractors(
    agent: KnowledgeAgent, request: pytest.FixtureRequest
) -> None:
    plan, _analysis = agent.plan(QUESTION)
    outcomes = run_plan(agent, plan)
    text, _images = final_evidence(plan, outcomes)
    top5 = list(dict.fromkeys(h.title for h in text if h.title))[:5]
    first = next(s for s in plan.plan if s.type == "vector_search")
    dense = list(dict.fromkeys(h.title for h in outcomes[first.step_id].result if h.title))[:5]
    hop = next(s for s in plan.plan if s.type == "multi_hop")
    hop_titles = [h.title for h in outcomes[hop.step_id].result]
    same_on_both_engines(request, "top5", top5)
    same_on_both_engines(request, "hop", hop_titles)
    assert "Mirela Vastok" not in dense, f"plain vector search already finds the bridge: {dense}"
    assert set(top5) >= GOLD, f"kgrag top 5: {top5}"
    # found by "question + Mirela Vastok", which they do not name: not the hop's passages
    assert not NAME_ALIKES & set(hop_titles), hop_titles
    assert "Mirela Vastok" in hop_titles
