"""The lexical stage alone: a one-step plan running the ``chunks_fulltext`` template on the rule
planner's full-text query for a question (kgrag.planner.rule.fulltext_query), as one reader. For
tests of what the full-text indexes find (spellings, accents, similar identifiers)."""

from __future__ import annotations

from kgrag.agent.agent import KnowledgeAgent
from kgrag.core import AccessContext, Hit
from kgrag.executor.base import ExecutionEnv
from kgrag.executor.scheduler import Executor
from kgrag.planner.models import Plan
from kgrag.planner.rule import fulltext_query


def lexical_plan(question: str, k: int) -> Plan:
    """The plan of the lexical stage for ``question``: one ``graph_query`` step (id 1)."""
    return Plan.parse(
        {
            "plan": [
                {
                    "step_id": 1,
                    "type": "graph_query",
                    "parameters": {
                        "template": "chunks_fulltext",
                        "params": {"query": fulltext_query(question)},
                        "k": k,
                    },
                }
            ]
        }
    )


def lexical_hits(
    agent: KnowledgeAgent, question: str, access: AccessContext, k: int = 5
) -> list[Hit]:
    """The lexical stage's hits for ``question``, read as ``access``, best first."""
    env = ExecutionEnv(store=agent.store, text_embedder=agent.text_embedder, access=access)
    return list(Executor(env).run(lexical_plan(question, k))[1].result)
