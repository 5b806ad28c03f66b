"""Handlers of steps that carry the conversation into retrieval: ``demote`` lowers (never
removes) the results from sources already cited earlier in the session, so a follow-up brings
new evidence forward; the trace (``outcome.details``) lists every demoted hit with its score
before and after."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kgrag.core import Hit
from kgrag.executor.base import Registration, StepOutcome, StepReader
from kgrag.planner.models import DemoteStep

__all__ = ["SESSION_HANDLERS"]


def _demote(step: DemoteStep, inputs: Mapping[int, StepOutcome], rec: StepReader) -> list[Hit]:
    p = step.parameters
    discussed = set(p.document_ids)
    demoted: list[dict[str, Any]] = []
    out: list[Hit] = []
    for rank, hit in enumerate(inputs[p.source].result, start=1):
        if hit.document_id in discussed:
            score = round(hit.score * p.factor, 8)
            demoted.append(
                {
                    "id": hit.id,
                    "document_id": hit.document_id,
                    "rank_before": rank,
                    "score_before": hit.score,
                    "score_after": score,
                }
            )
            out.append(hit.rescored(score, step.step_id))
        else:
            out.append(hit.rescored(hit.score, step.step_id))
    out.sort(key=lambda h: -h.score)  # stable: ties keep their order
    ranks = {h.id: i for i, h in enumerate(out, start=1)}
    for d in demoted:
        d["rank_after"] = ranks[d["id"]]
    rec.outcome.details = {
        "factor": p.factor,
        "demoted": demoted,
        "named_again": list(p.named_again),
    }
    return out


SESSION_HANDLERS = (Registration(DemoteStep, _demote),)
"""The handlers of these steps, for the executor's dispatch table."""
