"""Small corpora written by the tests that use them, and the set-up they share: the files
written into a folder that is the same for both engines (tests/support/across.py), an agent over
them, and a plan run as a reader."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.core import AccessContext
from kgrag.executor.base import ExecutionEnv, StepOutcome
from kgrag.executor.scheduler import Executor
from kgrag.modalities.base import TextEmbedder
from kgrag.planner.models import Plan
from tests.support.across import shared_folder
from tests.support.answered import folder_agent
from tests.support.engines import Engine

__all__ = ["PAINTERS", "corpus_agent", "run_plan", "written_corpus"]

#: A painting, its painter and the town she grew up in, each file titled by its first line (the
#: passage's main entity), and distractors sharing the questions' wording (painters, birthplaces,
#: harbours) so that plain vector search prefers them to the bridge passage, which names neither
#: the painting nor the question's words.
PAINTERS = {
    "quiet_harbour.txt": "The Quiet Harbour\nThe Quiet Harbour is an oil painting of fishing "
    "boats at dusk, painted in 1887 by Mirela Vastok.",
    "mirela_vastok.txt": "Mirela Vastok\nMirela Vastok (1851-1920) grew up in Kestrin, where "
    "her father kept a bakery, and later taught drawing at the academy in Vienna.",
    "kestrin.txt": "Kestrin\nKestrin is a market town. The river Olsava flows through the town "
    "on its way to the Danube.",
    "ivo_darl.txt": "Ivo Darl\nIvo Darl was a painter born in the town of Ulm; the painter is "
    "known for harbour scenes and was born to a family of sailors.",
    "tomas_brenn.txt": "Tomas Brenn\nTomas Brenn, a landscape painter, was born in the town of "
    "Graz, the birthplace of several painters of his generation.",
    "harbour_paintings.txt": "Harbour paintings\nHarbour paintings by painters of the 1880s "
    "show quiet harbours, boats and the towns where the painters were born.",
    "evening_boats.txt": "Evening Boats\nEvening Boats is a painting of a quiet harbour by a "
    "painter who was born in a fishing town.",
}


def written_corpus(
    tmp_path_factory: pytest.TempPathFactory, name: str, files: Mapping[str, str]
) -> Path:
    """``files`` (file name -> text) written into ``name``'s folder shared by both engines."""
    docs = shared_folder(tmp_path_factory, name) / "docs"
    docs.mkdir(exist_ok=True)
    for file, text in files.items():
        (docs / file).write_text(text, encoding="utf-8")
    return docs


def corpus_agent(
    engine: Engine, tmp_path_factory: pytest.TempPathFactory, name: str, files: Mapping[str, str]
) -> Iterator[KnowledgeAgent]:
    """An agent over ``files`` written for ``name`` and ingested into ``engine``'s store (for a
    module fixture: ``yield from corpus_agent(...)``)."""
    docs = written_corpus(tmp_path_factory, name, files)
    yield from folder_agent(engine, docs, sorted(files))


def run_plan(
    agent: KnowledgeAgent,
    plan: Plan,
    access: AccessContext | None = None,
    embedder: TextEmbedder | None = None,
    *,
    name_seeds: bool | None = None,
) -> dict[int, StepOutcome]:
    """``plan`` run on ``agent``'s store as ``access`` (everyone's documents when None), with its
    text model or ``embedder``, and its bridge hop's name seeds or ``name_seeds``."""
    env = ExecutionEnv(
        store=agent.store,
        text_embedder=embedder or agent.text_embedder,
        access=access or AccessContext(),
        name_seeds=agent.name_seeds if name_seeds is None else name_seeds,
    )
    return Executor(env).run(plan)
