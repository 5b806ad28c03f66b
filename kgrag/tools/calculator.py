"""``calculator``: arithmetic on numbers only, evaluated over Python's AST with a whitelist.

Allowed: int and float literals, ``+ - * / // % **``, unary ``-`` and ``+``, parentheses. No
names, calls, attributes, subscripts, comparisons or any other node; exponents and results are
bounded so that no expression can exhaust memory or time. Never ``eval``.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable

from pydantic import Field

from kgrag.core import Frozen, Hit
from kgrag.errors import ExecutionError
from kgrag.tools.base import Tool, ToolContext

MAX_EXPRESSION_CHARS = 500
MAX_EXPONENT = 1000
MAX_RESULT_DIGITS = 1000

Number = int | float

_BINARY: dict[type[ast.operator], Callable[[Number, Number], Number]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}


class CalculatorError(ExecutionError):
    """An expression the calculator refuses or cannot evaluate."""


def evaluate_arithmetic(expression: str) -> Number:
    """The value of an arithmetic ``expression``; :class:`CalculatorError` for anything else."""
    if len(expression) > MAX_EXPRESSION_CHARS:
        raise CalculatorError(
            f"calculator: the expression is longer than {MAX_EXPRESSION_CHARS} characters"
        )
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as e:
        raise CalculatorError(f"calculator: not an arithmetic expression ({e.msg})") from None
    except ValueError as e:  # a lone surrogate cannot be encoded for the parser
        raise CalculatorError(f"calculator: not an arithmetic expression ({e})") from None
    return _eval(tree.body)


def _eval(node: ast.AST) -> Number:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise CalculatorError(
                f"calculator: only numbers are allowed, not {type(node.value).__name__}"
            )
        return _bounded(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        value = _eval(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp):
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow):
            return _power(left, right)
        fn = _BINARY.get(type(node.op))
        if fn is None:
            raise CalculatorError(f"calculator: operator {type(node.op).__name__} is not allowed")
        try:
            return _bounded(fn(left, right))
        except ZeroDivisionError:
            raise CalculatorError("calculator: division by zero") from None
        except OverflowError:
            raise CalculatorError("calculator: the result is too large") from None
    if isinstance(node, ast.Name):
        raise CalculatorError(f"calculator: names are not allowed ({node.id!r})")
    if isinstance(node, ast.Call):
        raise CalculatorError("calculator: function calls are not allowed")
    raise CalculatorError(f"calculator: {type(node).__name__} is not allowed")


def _power(base: Number, exponent: Number) -> Number:
    if abs(exponent) > MAX_EXPONENT:
        raise CalculatorError(f"calculator: exponent {exponent} is beyond ±{MAX_EXPONENT}")
    if base not in (0, 1, -1) and exponent > 0:
        digits = exponent * math.log10(abs(base)) if base else 0.0
        if digits > MAX_RESULT_DIGITS:
            raise CalculatorError(
                f"calculator: the result would have more than {MAX_RESULT_DIGITS} digits"
            )
    try:
        value = base**exponent
    except ZeroDivisionError:
        raise CalculatorError("calculator: zero cannot be raised to a negative power") from None
    except OverflowError:
        raise CalculatorError("calculator: the result is too large") from None
    if isinstance(value, complex):
        raise CalculatorError("calculator: the result is not a real number")
    return _bounded(value)


def _bounded(value: Number) -> Number:
    if isinstance(value, int) and abs(value) >= 10**MAX_RESULT_DIGITS:
        raise CalculatorError(f"calculator: the result has more than {MAX_RESULT_DIGITS} digits")
    if isinstance(value, float) and not math.isfinite(value):
        raise CalculatorError("calculator: the result is not a finite number")
    return value


class CalculatorArgs(Frozen):
    """Arguments of ``calculator``."""

    expression: str = Field(
        min_length=1,
        max_length=MAX_EXPRESSION_CHARS,
        description="arithmetic only: numbers, + - * / // % **, unary minus, parentheses",
    )


def _run(args: CalculatorArgs, ctx: ToolContext) -> list[Hit]:
    value = evaluate_arithmetic(args.expression)
    return [
        Hit(
            id=f"tool:calculator:{args.expression.strip()[:80]}",
            kind="document",
            score=1.0,
            text=f"{args.expression.strip()} = {value}",
        )
    ]


CALCULATOR = Tool(
    name="calculator",
    description="Evaluate an arithmetic expression (numbers and + - * / // % ** only).",
    arguments=CalculatorArgs,
    run=_run,
)
