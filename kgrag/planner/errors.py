"""A plan's validation errors as one :class:`~kgrag.errors.PlanError` that names the step
(position and ``step_id``), the field at fault and the reason, without pydantic's noise."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, get_args

from pydantic import ValidationError

from kgrag.errors import PlanError
from kgrag.planner.params import STEP_TYPES, StepType

__all__ = ["plan_error"]


def plan_error(error: ValidationError, raw: Mapping[str, Any]) -> PlanError:
    """Turn pydantic's report into one PlanError naming step, field and reason."""
    details = _condense(error.errors(include_url=False))
    messages = [_describe_error(d, raw) for d in details]
    first_step = _step_id_at(details[0]["loc"], raw) if details else None
    reason = messages[0] if messages else str(error)
    if len(messages) > 1:
        shown = "; ".join(messages[:5])
        more = f" (and {len(messages) - 5} more)" if len(messages) > 5 else ""
        reason = f"{len(messages)} problems: {shown}{more}"
    return PlanError(reason, first_step)


_UNION_MEMBER = re.compile(r"^(?:str|int|float|bool|none|list\[.*\]|dict\[.*\])$")


def _condense(details: list[Any]) -> list[Any]:
    """Drop pydantic's noise: a container reported "too short" because its items failed, and
    one error per member of a union (reported once, as matching none of the allowed types)."""
    locs = [tuple(d["loc"]) for d in details]
    kept: list[Any] = []
    unions: dict[tuple[Any, ...], list[str]] = {}
    for detail, loc in zip(details, locs, strict=True):
        if detail["type"] == "too_short" and any(
            len(other) > len(loc) and other[: len(loc)] == loc for other in locs
        ):
            continue
        if loc and isinstance(loc[-1], str) and _UNION_MEMBER.match(loc[-1]):
            parent = loc[:-1]
            if parent not in unions:
                unions[parent] = []
                kept.append({**detail, "loc": parent, "type": "union", "msg": ""})
            unions[parent].append(loc[-1])
            continue
        kept.append(detail)
    for detail in kept:
        if detail["type"] == "union":
            allowed = ", ".join(unions[tuple(detail["loc"])])
            detail["msg"] = f"Input should be one of these types: {allowed}"
    return kept


def _describe_error(detail: Any, raw: Mapping[str, Any]) -> str:
    loc: tuple[int | str, ...] = tuple(detail["loc"])
    msg = str(detail["msg"])
    if detail["type"] == "value_error":
        msg = msg.removeprefix("Value error, ")
    if (
        detail["type"] == "union_tag_invalid"
        and detail.get("ctx", {}).get("discriminator") == "'type'"
    ):
        msg = (
            f"unknown step type {detail['ctx']['tag']!r} (not run); the step types are: "
            + ", ".join(get_args(StepType))
        )
    if len(loc) >= 2 and loc[0] == "plan" and isinstance(loc[1], int):
        index = loc[1]
        rest = list(loc[2:])
        where = f"plan[{index}]"
        step_id = _step_id_at(loc, raw)
        kind: str | None = None
        if rest and isinstance(rest[0], str) and rest[0] in STEP_TYPES:
            kind = str(rest.pop(0))
        label = ", ".join(
            part
            for part in (f"step_id {step_id}" if step_id is not None else "", kind or "")
            if part
        )
        if label:
            where += f" ({label})"
        field = ".".join(str(part) for part in rest)
        return f"{where}: {field}: {msg}" if field else f"{where}: {msg}"
    field = ".".join(str(p) for p in loc)
    return f"{field}: {msg}" if field else msg


def _step_id_at(loc: tuple[int | str, ...], raw: Mapping[str, Any]) -> int | None:
    if len(loc) < 2 or loc[0] != "plan" or not isinstance(loc[1], int):
        return None
    steps = raw.get("plan")
    if not isinstance(steps, list | tuple) or not 0 <= loc[1] < len(steps):
        return None
    step = steps[loc[1]]
    if not isinstance(step, Mapping):
        return None
    step_id = step.get("step_id")
    return step_id if isinstance(step_id, int) and not isinstance(step_id, bool) else None
