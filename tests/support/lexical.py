"""The lexical stage alone: a one-step plan running the ``chunks_fulltext`` template with the rule
planner's lexical parameters for a question (kgrag.planner.rule.lexical_params: its full-text
query and the symbols it names), as one reader. For tests of what the full-text indexes find
(spellings, accents, similar identifiers, verb forms, symbols)."""

from __future__ import annotations

from kgrag.agent.agent import KnowledgeAgent
from kgrag.core import AccessContext, Hit
from kgrag.executor.base import ExecutionEnv
from kgrag.executor.scheduler import Executor
from kgrag.planner.models import Plan
from kgrag.planner.rule import lexical_params


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
                        "params": lexical_params(question),
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
