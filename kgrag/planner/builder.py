"""The one way the rule planners write a plan: numbered steps added in order, each with the
steps it depends on and why it is there (:class:`PlanBuilder`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kgrag.planner.models import Plan

__all__ = ["PlanBuilder"]


class PlanBuilder:
    """Steps of a rule-based plan; :meth:`add` returns the new step's id for later steps to
    depend on, :meth:`plan` validates them into a :class:`~kgrag.planner.models.Plan`."""

    def __init__(self) -> None:
        self._steps: list[dict[str, Any]] = []

    def add(
        self,
        kind: str,
        params: dict[str, Any],
        deps: Sequence[int] = (),
        *,
        why: str = "",
        modality: str = "text",
        condition: str | None = None,
    ) -> int:
        sid = len(self._steps) + 1
        self._steps.append(
            {
                "step_id": sid,
                "type": kind,
                "modality": modality,
                "parameters": params,
                "dependencies": list(deps),
                "condition": condition,
                "trace": {"source": "rule-based", "explanation": why},
            }
        )
        return sid

    def plan(self) -> Plan:
        return Plan.parse({"plan": self._steps, "traceability": True})
