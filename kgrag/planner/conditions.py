"""Step conditions: a tiny expression language over earlier step results.

A plan step may carry a condition such as ``len(step_1.result) == 0``; the executor runs the step
only when it holds. Conditions come from plans, and plans may come from an LLM, so they are treated
as hostile input: the text is parsed with :func:`ast.parse` into a syntax tree (nothing is compiled
to code, nothing is evaluated by Python), every node is checked against a whitelist, and a small
interpreter walks the checked tree. ``eval``, ``exec`` and ``compile`` are never used.

The language:

- names: ``step_N`` only (N >= 1), and only as ``step_N.result``, ``step_N.status`` or
  ``step_N.count``; ``len`` only as a call with one argument;
- subscripts with integer literals: ``step_1.result[0]``, ``step_2.result[-1]``;
- comparisons ``==  !=  <  <=  >  >=  in  not in`` (and ``is`` / ``is not`` against ``None``),
  chained comparisons allowed;
- ``and``, ``or``, ``not`` and parentheses;
- literals: int, float, str, bool, None, and flat lists/tuples of those.

No arithmetic, no other attributes or calls, no comprehensions, lambdas, f-strings, walrus,
starred expressions or slices. Texts are limited to :data:`MAX_LENGTH` characters and trees to
:data:`MAX_DEPTH` levels.
"""

from __future__ import annotations

import ast
import functools
import re
import warnings
from collections.abc import Mapping, Sequence, Sized
from dataclasses import dataclass, field
from typing import Protocol

from kgrag.errors import ExecutionError, PlanError

__all__ = [
    "ALLOWED_ATTRIBUTES",
    "MAX_DEPTH",
    "MAX_LENGTH",
    "Condition",
    "ConditionEvaluationError",
    "StepOutcomeLike",
    "parse_condition",
]

MAX_LENGTH = 500
"""Longest condition text accepted, in characters."""
MAX_DEPTH = 24
"""Deepest syntax tree accepted (an ``and`` of two comparisons is about 5 levels deep)."""
MAX_NODES = 200
"""Most syntax-tree nodes accepted."""
ALLOWED_ATTRIBUTES = frozenset({"result", "status", "count"})
"""The attributes a condition may read from ``step_N``."""

_STEP_NAME = re.compile(r"^step_([1-9][0-9]{0,5})$")

_COMPARE_OPS: dict[type[ast.cmpop], str] = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Is: "is",
    ast.IsNot: "is not",
}

_OPERATOR_SYMBOLS: dict[type[ast.AST], str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.Pow: "**",
    ast.MatMult: "@",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.BitOr: "|",
    ast.BitAnd: "&",
    ast.BitXor: "^",
    ast.Invert: "~",
}

_CONSTRUCT_NAMES: dict[type[ast.AST], str] = {
    ast.Lambda: "lambda",
    ast.ListComp: "list comprehension",
    ast.SetComp: "set comprehension",
    ast.DictComp: "dict comprehension",
    ast.GeneratorExp: "generator expression",
    ast.JoinedStr: "f-string",
    ast.FormattedValue: "f-string",
    ast.NamedExpr: "assignment expression (:=)",
    ast.IfExp: "conditional expression (x if c else y)",
    ast.Await: "await",
    ast.Yield: "yield",
    ast.YieldFrom: "yield",
    ast.Starred: "starred expression",
    ast.Slice: "slice",
    ast.Dict: "dict literal",
    ast.Set: "set literal",
}


class StepOutcomeLike(Protocol):
    """What a condition can see of an earlier step (the executor's outcome objects fit this)."""

    @property
    def result(self) -> Sequence[object]: ...

    @property
    def status(self) -> str: ...

    @property
    def count(self) -> int: ...


class ConditionEvaluationError(ExecutionError):
    """A well-formed condition could not be evaluated against the results it was given
    (a step it names has no outcome, an index is out of range, a comparison between a string
    and a number, ...)."""

    def __init__(self, condition: str, reason: str) -> None:
        super().__init__(f"condition {condition!r} could not be evaluated: {reason}")
        self.condition = condition
        self.reason = reason


@dataclass(frozen=True)
class Condition:
    """A parsed, whitelisted condition. Build it with :func:`parse_condition`."""

    text: str
    _tree: ast.Expression = field(repr=False, compare=False)
    _names: frozenset[int] = field(repr=False, compare=False)

    def names(self) -> frozenset[int]:
        """The step ids the condition reads (``step_3.result`` -> 3)."""
        return self._names

    def evaluate(self, results: Mapping[int, StepOutcomeLike]) -> bool:
        """Whether the condition holds, given the outcomes of the steps it names.

        Raises :class:`ConditionEvaluationError` (an :class:`~kgrag.errors.ExecutionError`) when a
        named step is missing from ``results`` or an operation fails on the actual values.
        """
        missing = sorted(self._names - set(results))
        if missing:
            listed = ", ".join(f"step_{n}" for n in missing)
            raise ConditionEvaluationError(self.text, f"no outcome for {listed}")
        try:
            return _truth(_Interpreter(results).visit(self._tree.body))
        except ConditionEvaluationError:
            raise
        except (TypeError, ValueError, IndexError, AttributeError, RecursionError) as e:
            raise ConditionEvaluationError(self.text, f"{type(e).__name__}: {e}") from e

    def __str__(self) -> str:
        return self.text


def parse_condition(text: str) -> Condition:
    """Parse and check a condition; raise :class:`~kgrag.errors.PlanError` naming what is refused.

    Only :class:`~kgrag.errors.PlanError` escapes, whatever the input.
    """
    if not isinstance(text, str):
        raise PlanError(f"a condition must be a string, not {type(text).__name__}")
    return _parse_cached(text)


@functools.lru_cache(maxsize=1024)
def _parse_cached(text: str) -> Condition:
    stripped = text.strip()
    if not stripped:
        raise PlanError("the condition is empty")
    if len(stripped) > MAX_LENGTH:
        raise PlanError(
            f"the condition is too long ({len(stripped)} characters; at most {MAX_LENGTH})"
        )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)  # e.g. "invalid decimal literal"
            tree = ast.parse(stripped, mode="eval")
    except SyntaxError as e:
        raise PlanError(f"condition {stripped!r} is not valid syntax: {e.msg}") from None
    except (ValueError, RecursionError, MemoryError) as e:
        raise PlanError(f"condition {stripped!r} cannot be parsed: {e}") from None
    checker = _Checker(stripped)
    checker.check(tree.body, depth=1)
    return Condition(text=stripped, _tree=tree, _names=frozenset(checker.names))


class _Checker:
    """Walks a syntax tree and refuses anything outside the whitelist."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.names: set[int] = set()
        self.nodes = 0

    def refuse(self, what: str) -> PlanError:
        return PlanError(f"condition {self.text!r}: {what} is not allowed")

    def check(self, node: ast.AST, depth: int) -> None:
        self.nodes += 1
        if depth > MAX_DEPTH:
            raise PlanError(f"condition {self.text!r} is nested too deeply (at most {MAX_DEPTH})")
        if self.nodes > MAX_NODES:
            raise PlanError(f"condition {self.text!r} is too large (at most {MAX_NODES} nodes)")
        nxt = depth + 1
        if isinstance(node, ast.BoolOp):
            for value in node.values:
                self.check(value, nxt)
        elif isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not):
                self.check(node.operand, nxt)
            elif isinstance(node.op, ast.USub | ast.UAdd) and _is_number(node.operand):
                return
            else:
                raise self.refuse(f"unary operator '{_symbol(node.op)}' here")
        elif isinstance(node, ast.Compare):
            for op in node.ops:
                if type(op) not in _COMPARE_OPS:  # pragma: no cover - every cmpop is listed
                    raise self.refuse(f"comparison {type(op).__name__}")
            operands = [node.left, *node.comparators]
            for i, op in enumerate(node.ops):
                if isinstance(op, ast.Is | ast.IsNot) and not (
                    _is_none(operands[i]) or _is_none(operands[i + 1])
                ):
                    raise self.refuse(f"'{_COMPARE_OPS[type(op)]}' except against None")
            for operand in operands:
                self.check(operand, nxt)
        elif isinstance(node, ast.Call):
            self.check_call(node, nxt)
        elif isinstance(node, ast.Attribute):
            self.check_attribute(node)
        elif isinstance(node, ast.Subscript):
            index = node.slice
            if not _is_int_literal(index):
                if isinstance(index, ast.Slice):
                    raise self.refuse("slice")
                raise self.refuse("a subscript other than an integer literal")
            self.check(node.value, nxt)
        elif isinstance(node, ast.Name):
            if node.id == "len":
                raise self.refuse("'len' other than as a call len(...)")
            if _STEP_NAME.match(node.id):
                raise self.refuse(f"bare name {node.id!r} (use {node.id}.result/.status/.count)")
            raise self.refuse(f"name {node.id!r} (only step_N names)")
        elif isinstance(node, ast.Constant):
            self.check_constant(node)
        elif isinstance(node, ast.List | ast.Tuple):
            for element in node.elts:
                if not _is_literal(element):
                    raise self.refuse("a list/tuple element that is not a literal")
                self.check(element, nxt)
        elif isinstance(node, ast.BinOp):
            raise self.refuse(f"operator '{_symbol(node.op)}'")
        else:
            name = _CONSTRUCT_NAMES.get(type(node), type(node).__name__)
            raise self.refuse(name)

    def check_call(self, node: ast.Call, depth: int) -> None:
        func = node.func
        if not (isinstance(func, ast.Name) and func.id == "len"):
            raise self.refuse(f"call to {_describe(func)} (only len(...))")
        if node.keywords or len(node.args) != 1 or isinstance(node.args[0], ast.Starred):
            raise self.refuse("len() with other than one positional argument")
        self.check(node.args[0], depth)

    def check_attribute(self, node: ast.Attribute) -> None:
        if node.attr not in ALLOWED_ATTRIBUTES:
            raise self.refuse(f"attribute {node.attr!r}")
        value = node.value
        if not (isinstance(value, ast.Name) and _STEP_NAME.match(value.id)):
            raise self.refuse(f"attribute {node.attr!r} on {_describe(value)} (only on step_N)")
        match = _STEP_NAME.match(value.id)
        assert match is not None
        self.names.add(int(match.group(1)))

    def check_constant(self, node: ast.Constant) -> None:
        value = node.value
        if value is None or isinstance(value, bool | int | float | str):
            return
        raise self.refuse(f"a {type(value).__name__} literal")


class _Interpreter:
    """Evaluates a checked tree. Only the node kinds the checker lets through are handled."""

    def __init__(self, results: Mapping[int, StepOutcomeLike]) -> None:
        self.results = results

    def visit(self, node: ast.AST) -> object:
        if isinstance(node, ast.BoolOp):
            if isinstance(node.op, ast.And):
                return all(_truth(self.visit(v)) for v in node.values)
            return any(_truth(self.visit(v)) for v in node.values)
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.Not):
                return not _truth(self.visit(node.operand))
            number = self.visit(node.operand)
            assert isinstance(number, int | float)
            return -number if isinstance(node.op, ast.USub) else number
        if isinstance(node, ast.Compare):
            left = self.visit(node.left)
            for op, comparator in zip(node.ops, node.comparators, strict=True):
                right = self.visit(comparator)
                if not _compare(op, left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.Call):
            value = self.visit(node.args[0])
            if isinstance(value, Sized):
                return len(value)
            raise TypeError(f"len() of a {type(value).__name__}")
        if isinstance(node, ast.Attribute):
            assert isinstance(node.value, ast.Name)
            match = _STEP_NAME.match(node.value.id)
            assert match is not None
            outcome = self.results[int(match.group(1))]
            if node.attr == "result":
                return outcome.result
            if node.attr == "status":
                return outcome.status
            return outcome.count
        if isinstance(node, ast.Subscript):
            container = self.visit(node.value)
            index = self.visit(node.slice)
            assert isinstance(index, int)
            if isinstance(container, Sequence):
                return container[index]
            raise TypeError(f"a {type(container).__name__} cannot be indexed")
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.List | ast.Tuple):
            return [self.visit(e) for e in node.elts]
        raise AssertionError(f"unchecked node {type(node).__name__}")  # pragma: no cover


def _compare(op: ast.cmpop, left: object, right: object) -> bool:
    if isinstance(op, ast.Eq):
        return bool(left == right)
    if isinstance(op, ast.NotEq):
        return bool(left != right)
    if isinstance(op, ast.Is):
        return left is right
    if isinstance(op, ast.IsNot):
        return left is not right
    if isinstance(op, ast.In | ast.NotIn):
        if not isinstance(right, Sequence):
            raise TypeError(f"'in' needs a sequence on the right, not a {type(right).__name__}")
        if isinstance(right, str) and not isinstance(left, str):
            raise TypeError(f"'in <string>' needs a string on the left, not {type(left).__name__}")
        found = left in right
        return found if isinstance(op, ast.In) else not found
    if not (_orderable(left) and _orderable(right)):
        raise TypeError(
            f"cannot order a {type(left).__name__} and a {type(right).__name__} "
            "(only numbers with numbers, strings with strings)"
        )
    if isinstance(left, str) != isinstance(right, str):
        raise TypeError(f"cannot order a {type(left).__name__} and a {type(right).__name__}")
    # Both operands are numbers, or both are strings.
    a, b = left, right
    if isinstance(op, ast.Lt):
        return a < b  # type: ignore[operator]
    if isinstance(op, ast.LtE):
        return a <= b  # type: ignore[operator]
    if isinstance(op, ast.Gt):
        return a > b  # type: ignore[operator]
    return a >= b  # type: ignore[operator]


def _orderable(value: object) -> bool:
    return isinstance(value, int | float | str) and not isinstance(value, bool)


def _truth(value: object) -> bool:
    if value is None or isinstance(value, bool | int | float | str):
        return bool(value)
    if isinstance(value, Sized):
        return len(value) > 0
    raise TypeError(f"a {type(value).__name__} is neither true nor false")


def _is_none(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _is_number(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
    )


def _is_int_literal(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        node = node.operand
    return (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int)
        and not isinstance(node.value, bool)
    )


def _is_literal(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        return _is_number(node.operand)
    return isinstance(node, ast.Constant)


def _symbol(op: ast.AST) -> str:
    return _OPERATOR_SYMBOLS.get(type(op), type(op).__name__)


def _describe(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return repr(node.id)
    if isinstance(node, ast.Attribute):
        return f"attribute {node.attr!r}"
    name = _CONSTRUCT_NAMES.get(type(node))
    if name:
        return name
    return f"a {type(node).__name__.lower()} expression"
