"""The plan's own dense search, read as evidence features: how close is the nearest readable
passage to the question, and how far ahead of the others is it?

A question whose answering passage is readable often has one passage much nearer than the rest
(its subject's own passage); a question about a thing no readable passage is about retrieves a
flat run of near misses. The first iteration's text ``vector_search`` for the question itself
(kgrag.planner.rule) is read, not the fused evidence (whose scores are ranks and bridge hops):
its scores are the embedder's cosine similarities, over what the asker may read only.

Reported per answer beside the support test's features (kgrag.agent.support.Support
``dense_top`` and ``dense_margin``, from :class:`kgrag.agent.support.DenseScores`) and measured
on the abstention folds (bench/abstention.py, BENCHMARKS.md "Answers and abstention"): they did
not help there, and do not decide.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from kgrag.agent.support import DenseScores
from kgrag.planner.params import VectorSearchParams

if TYPE_CHECKING:
    from kgrag.agent.loop import Iteration


def dense_scores(iterations: Sequence[Iteration]) -> DenseScores:
    """The scores of the first text vector search for a query (not an earlier step's result)
    of the first iteration that ran one."""
    for iteration in iterations:
        for step in iteration.planned.plan.plan:
            params = step.parameters
            if (
                not isinstance(params, VectorSearchParams)
                or params.index != "chunk_embedding"
                or params.query is None
            ):
                continue
            outcome = iteration.outcomes.get(step.step_id)
            if outcome is None or outcome.status != "ok":
                continue
            return DenseScores.of([h.score for h in outcome.result if h.kind != "image"])
    return DenseScores()
