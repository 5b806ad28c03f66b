"""The step types a plan may use, described for the LLM planner's prompt from the one definition
of the steps (:data:`kgrag.planner.models.Step`, the parameter models of
:mod:`kgrag.planner.params`): each step type's purpose (its parameters' docstring) and each
parameter's type, bounds, default and docstring, read from the parameter model's JSON Schema.
A step type added to the plan model is described here without a second list to keep in step."""

from __future__ import annotations

import re
from functools import cache
from typing import Any, get_args

from kgrag.planner.models import Step
from kgrag.planner.params import StepParams

__all__ = ["describe_step_types", "step_models"]

_SPACE = re.compile(r"\s+")
_NAMES = {"string": "text", "integer": "integer", "number": "number", "boolean": "true | false"}


def step_models() -> tuple[tuple[str, type[StepParams]], ...]:
    """Each step type of the plan model and its parameter model, in the plan model's order."""
    out = []
    for cls in get_args(get_args(Step)[0]):
        (step_type,) = get_args(cls.model_fields["type"].annotation)
        out.append((str(step_type), cls.model_fields["parameters"].annotation))
    return tuple(out)


@cache
def describe_step_types() -> str:
    """One line per step type: ``- type: purpose parameters: name (kind, default): doc; ...``."""
    return "\n".join(_describe(step_type, params) for step_type, params in step_models())


def _describe(step_type: str, params: type[StepParams]) -> str:
    schema = params.model_json_schema()
    required = set(schema.get("required", ()))
    parts = [
        _parameter(name, spec, name in required)
        for name, spec in schema.get("properties", {}).items()
    ]
    purpose = _one_line(schema.get("description", ""))
    listed = "; ".join(parts) if parts else "none"
    return f"- {step_type}: {purpose} Parameters: {listed}."


def _parameter(name: str, spec: dict[str, Any], required: bool) -> str:
    facts = [_kind(spec)]
    if required:
        facts.append("required")
    elif spec.get("default") not in (None, [], {}):
        facts.append(f"default {_value(spec['default'])}")
    text = f"{name} ({', '.join(facts)})"
    doc = _one_line(spec.get("description", ""))
    return f"{text}: {doc.rstrip('.')}" if doc else text


def _kind(spec: dict[str, Any]) -> str:
    """What a value must be, in words: ``integer 1-200``, ``list (1-20) of text``, ``a | b``."""
    if "anyOf" in spec:
        kinds = [_kind(s) for s in spec["anyOf"] if s.get("type") != "null"]
        return " or ".join(kinds) if kinds else "null"
    if "enum" in spec:
        return " | ".join(str(v) for v in spec["enum"])
    kind = spec.get("type")
    if kind == "array":
        count = _bounds(spec.get("minItems"), spec.get("maxItems"), "item")
        return f"list{f' ({count})' if count else ''} of {_kind(spec.get('items', {}))}"
    if kind == "object":
        return "object"
    if kind == "string":
        size = _bounds(spec.get("minLength"), spec.get("maxLength"), "character")
        return f"text{f' ({size})' if size else ''}"
    if kind in ("integer", "number"):
        return f"{_NAMES[kind]}{_range(spec)}"
    return _NAMES.get(str(kind), "any JSON value")


def _bounds(low: int | None, high: int | None, unit: str) -> str:
    """``1-20 items``, ``at least 1 item``, ``at most 64 characters``, or nothing."""
    if high is None:
        return "" if not low else f"at least {low} {unit}{'s' if low != 1 else ''}"
    if not low:
        return f"at most {high} {unit}s"
    return f"{low}-{high} {unit}s"


def _range(spec: dict[str, Any]) -> str:
    low = spec.get("minimum", spec.get("exclusiveMinimum"))
    high = spec.get("maximum", spec.get("exclusiveMaximum"))
    if low is None and high is None:
        return ""
    if high is None:
        return f" >= {low}" if "minimum" in spec else f" > {low}"
    if low is None:
        return f" <= {high}"
    return f" {low}-{high}"


def _value(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)


def _one_line(text: str) -> str:
    return _SPACE.sub(" ", text.replace("``", "")).strip()
