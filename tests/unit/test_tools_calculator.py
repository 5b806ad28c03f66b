"""The calculator tool: arithmetic only, over the AST; names, calls and huge powers refused."""

from __future__ import annotations

import pytest

from kgrag.errors import ExecutionError, QueryRefusedError
from kgrag.tools import ToolRegistry, default_registry, evaluate_arithmetic
from kgrag.tools.calculator import CALCULATOR, CalculatorError


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("1 + 2 * 3", 7),
        ("(1 + 2) * 3", 9),
        ("-(4 - 10)", 6),
        ("+5", 5),
        ("7 / 2", 3.5),
        ("7 // 2", 3),
        ("-7 // 2", -4),
        ("7 % 3", 1),
        ("2 ** 10", 1024),
        ("2 ** -1", 0.5),
        ("1.5e3 + 0.25", 1500.25),
        ("  3 ", 3),
    ],
)
def test_arithmetic(expression: str, value: float) -> None:
    assert evaluate_arithmetic(expression) == value


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("x + 1", "names are not allowed"),
        ("__import__('os')", "function calls are not allowed"),
        ("abs(-1)", "function calls are not allowed"),
        ("(1).real", "Attribute is not allowed"),
        ("[1, 2][0]", "not allowed"),
        ("'a' * 3", "only numbers"),
        ("True + 1", "only numbers"),
        ("1 if 1 else 2", "IfExp is not allowed"),
        ("1 < 2", "Compare is not allowed"),
        ("lambda: 1", "Lambda is not allowed"),
        ("2 ** 100000", "exponent"),
        ("99 ** 600", "more than 1000 digits"),
        ("(10 ** 600) * (10 ** 600)", "more than 1000 digits"),
        ("1 / 0", "division by zero"),
        ("5 % 0", "division by zero"),
        ("0 ** -1", "negative power"),
        ("(-8) ** 0.5", "not a real number"),
        ("1e308 * 10", "not a finite number"),
        ("1 +", "not an arithmetic expression"),
        ("1 & 2", "BitAnd is not allowed"),
        ("1" * 600, "longer than"),
    ],
)
def test_refusals(expression: str, message: str) -> None:
    with pytest.raises(CalculatorError, match=message):
        evaluate_arithmetic(expression)


def test_calculator_errors_are_execution_errors() -> None:
    assert issubclass(CalculatorError, ExecutionError)


def test_registry_schemas_and_validation() -> None:
    registry = default_registry()
    assert registry.names == ["calculator", "cypher_template", "llm_generate"]
    offline = [s["function"]["name"] for s in registry.schemas(llm=False)]
    assert offline == ["calculator", "cypher_template"]
    schema = CALCULATOR.json_schema()["function"]["parameters"]
    assert schema["required"] == ["expression"] and schema["additionalProperties"] is False
    with pytest.raises(QueryRefusedError, match="invalid arguments at expression"):
        CALCULATOR.call({"expression": 3}, None)  # type: ignore[arg-type]
    with pytest.raises(QueryRefusedError, match="invalid arguments"):
        CALCULATOR.call({"expression": "1", "extra": 1}, None)  # type: ignore[arg-type]
    with pytest.raises(QueryRefusedError, match="unknown tool 'shell'"):
        registry["shell"]
    with pytest.raises(ValueError, match="already registered"):
        ToolRegistry([CALCULATOR, CALCULATOR])


def test_calculator_tool_returns_a_hit() -> None:
    [hit] = CALCULATOR.call({"expression": "6 * 7"}, None)  # type: ignore[arg-type]
    assert hit.kind == "document" and hit.text == "6 * 7 = 42"
