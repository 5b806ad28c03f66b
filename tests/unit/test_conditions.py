"""The condition language: what it accepts, what it refuses, and how it evaluates."""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgrag.errors import ExecutionError, PlanError
from kgrag.planner import conditions
from kgrag.planner.conditions import (
    MAX_LENGTH,
    Condition,
    ConditionEvaluationError,
    StepOutcomeLike,
    parse_condition,
)


@dataclass
class Outcome:
    """What the executor hands to conditions (attributes result, status, count)."""

    result: Sequence[object] = field(default_factory=list)
    status: str = "ok"
    count: int = 0


def outcome(*items: object, status: str = "ok") -> Outcome:
    return Outcome(result=list(items), status=status, count=len(items))


# ----------------------------------------------------------------------------- accepted


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("len(step_1.result) == 0", {1}),
        ("step_2.status == 'ok'", {2}),
        ("step_3.count >= 5 and step_4.status != 'error'", {3, 4}),
        ("not step_1.result", {1}),
        ("step_1.result[0] == 'chunk:7'", {1}),
        ("step_1.result[-1] in ['a', 'b']", {1}),
        ("'chunk:1' not in step_12.result", {12}),
        ("0 < len(step_1.result) <= 3", {1}),
        ("step_1.status == 'ok' or step_2.status == 'ok' or step_3.status == 'ok'", {1, 2, 3}),
        ("(step_1.count > 2) and not (step_2.count > 2)", {1, 2}),
        ("step_1.result[0] is None", {1}),
        ("step_5.count in (1, 2, -3)", {5}),
        ("True", set()),
        ("  len(step_1.result) == 0  ", {1}),
    ],
)
def test_valid_conditions_parse_and_name_their_steps(text: str, names: set[int]) -> None:
    condition = parse_condition(text)
    assert isinstance(condition, Condition)
    assert condition.names() == frozenset(names)
    assert condition.text == text.strip()


@pytest.mark.parametrize(
    ("text", "outcomes", "expected"),
    [
        ("len(step_1.result) == 0", {1: outcome()}, True),
        ("len(step_1.result) == 0", {1: outcome("a")}, False),
        ("step_1.status == 'ok'", {1: outcome(status="error")}, False),
        ("step_1.count >= 2", {1: outcome("a", "b")}, True),
        ("step_1.result[0] == 'a'", {1: outcome("a", "b")}, True),
        ("step_1.result[-1] == 'a'", {1: outcome("a", "b")}, False),
        ("'b' in step_1.result", {1: outcome("a", "b")}, True),
        ("'c' not in step_1.result", {1: outcome("a", "b")}, True),
        ("not step_1.result", {1: outcome()}, True),
        ("step_1.result", {1: outcome("x")}, True),
        ("0 < len(step_1.result) < 2", {1: outcome("x")}, True),
        ("0 < len(step_1.result) < 2", {1: outcome("x", "y")}, False),
        (
            "step_1.status == 'ok' or step_2.status == 'ok'",
            {1: outcome(status="error"), 2: outcome()},
            True,
        ),
        (
            "step_1.status == 'ok' and step_2.status == 'ok'",
            {1: outcome(status="error"), 2: outcome()},
            False,
        ),
        ("step_1.status in ['ok', 'skipped']", {1: outcome(status="skipped")}, True),
        ("len(step_1.status) == 2", {1: outcome()}, True),
        ("step_1.count == -1", {1: Outcome(count=-1)}, True),
        ("step_1.result[0] is None", {1: outcome(None)}, True),
        ("step_1.result[0] is not None", {1: outcome(None)}, False),
        ("step_1.count > 0.5", {1: outcome("a")}, True),
    ],
)
def test_evaluation(text: str, outcomes: dict[int, Outcome], expected: bool) -> None:
    assert parse_condition(text).evaluate(outcomes) is expected


def test_and_or_short_circuit_like_python() -> None:
    # The right operand would fail (index out of range) if it were evaluated.
    empty = {1: outcome()}
    assert (
        parse_condition("len(step_1.result) > 0 and step_1.result[0] == 'a'").evaluate(empty)
        is False
    )
    assert (
        parse_condition("len(step_1.result) == 0 or step_1.result[0] == 'a'").evaluate(empty)
        is True
    )


# ------------------------------------------------------------------------------ refused

HOSTILE = [
    ("__import__('os')", "call to '__import__'"),
    ("__import__('os').system('true')", "not allowed"),
    ("step_1.result.__class__", "attribute '__class__' is not allowed"),
    ("step_1.__class__", "attribute '__class__' is not allowed"),
    ("().__class__.__bases__", "attribute '__bases__' is not allowed"),
    ("().__class__", "attribute '__class__' is not allowed"),
    ("[c for c in ().__class__.__base__.__subclasses__()]", "not allowed"),
    ("[x for x in step_1.result]", "list comprehension is not allowed"),
    ("{x for x in step_1.result}", "set comprehension is not allowed"),
    ("any(x for x in step_1.result)", "call to 'any'"),
    ("lambda: 1", "lambda is not allowed"),
    ("(lambda x: x)(1)", "not allowed"),
    ("f'{step_1.result}'", "f-string is not allowed"),
    ("(x := 1)", "assignment expression (:=) is not allowed"),
    ("9 ** 9 ** 9 ** 9", "operator '**' is not allowed"),
    ("step_1.count ** 2 > 1", "operator '**' is not allowed"),
    ("step_1.count + 1 > 2", "operator '+' is not allowed"),
    ("'a' * 100000000 == step_1.status", "operator '*' is not allowed"),
    ("~step_1.count", "unary operator '~'"),
    ("eval('1')", "call to 'eval'"),
    ("exec('1')", "call to 'exec'"),
    ("open('/etc/passwd')", "call to 'open'"),
    ("getattr(step_1, 'result')", "call to 'getattr'"),
    ("step_1.result.count('a') > 0", "call to attribute 'count'"),
    ("len(step_1.result, 2) == 0", "one positional argument"),
    ("len(x=step_1.result) == 0", "one positional argument"),
    ("len(*step_1.result) == 0", "one positional argument"),
    ("len", "'len' other than as a call"),
    ("os.system", "attribute 'system' is not allowed"),
    ("x.result", "attribute 'result' on 'x' (only on step_N)"),
    ("len(step_1.result).count", "attribute 'count' on a call expression"),
    ("step_1.result[0].result", "attribute 'result' on a subscript expression"),
    ("step_1", "bare name 'step_1'"),
    ("step_0.result", "attribute 'result' on 'step_0'"),
    ("step_01.result", "attribute 'result' on 'step_01'"),
    ("Step_1.result", "attribute 'result' on 'Step_1'"),
    ("foo == 1", "name 'foo'"),
    ("step_1.result[1:2]", "slice is not allowed"),
    ("step_1.result['a']", "a subscript other than an integer literal"),
    ("step_1.result[step_1.count]", "a subscript other than an integer literal"),
    ("step_1.result if True else 1", "conditional expression"),
    ("{'a': 1}", "dict literal is not allowed"),
    ("{1, 2}", "set literal is not allowed"),
    ("b'x' == step_1.status", "a bytes literal is not allowed"),
    ("1j == step_1.count", "a complex literal is not allowed"),
    ("... == step_1.count", "a ellipsis literal is not allowed"),
    ("step_1.count in [step_2.count]", "not a literal"),
    ("step_1.count in [[1]]", "not a literal"),
    ("step_1.count is 1", "'is' except against None"),
    ("await step_1", "not allowed"),
    ("yield 1", "not valid syntax"),
    ("import os", "not valid syntax"),
    ("step_1.result; import os", "not valid syntax"),
    ("len(step_1.result) == 0\nimport os", "not valid syntax"),
    ("", "empty"),
    ("   ", "empty"),
    ("a\x00b", "null bytes"),
    ("*step_1.result", "not valid syntax"),
]


@pytest.mark.parametrize(("text", "fragment"), HOSTILE)
def test_hostile_and_unsupported_conditions_are_refused(text: str, fragment: str) -> None:
    with pytest.raises(PlanError) as info:
        parse_condition(text)
    assert fragment in str(info.value)


def test_length_limit() -> None:
    clause = "step_1.count == 1"
    long_text = " or ".join([clause] * (MAX_LENGTH // len(clause) + 1))
    assert len(long_text) > MAX_LENGTH
    with pytest.raises(PlanError, match="too long"):
        parse_condition(long_text)
    fits = " or ".join([clause] * (MAX_LENGTH // (len(clause) + 4)))
    assert parse_condition(fits).names() == frozenset({1})


def test_depth_limit() -> None:
    deep = "not " * 60 + "step_1.result"
    with pytest.raises(PlanError, match="nested too deeply"):
        parse_condition(deep)
    # Parentheses add no tree levels: harmless, and accepted up to Python's own limit.
    assert (
        parse_condition("(" * 150 + "step_1.result" + ")" * 150).evaluate({1: outcome()}) is False
    )
    with pytest.raises(PlanError, match="not valid syntax"):
        parse_condition("(" * 240 + "1" + ")" * 240)
    assert parse_condition("not " * 5 + "step_1.result").evaluate({1: outcome()}) is True


def test_non_string_is_refused() -> None:
    with pytest.raises(PlanError, match="must be a string"):
        parse_condition(42)  # type: ignore[arg-type]


# ----------------------------------------------------------------- evaluation failures


@pytest.mark.parametrize(
    ("text", "outcomes", "fragment"),
    [
        ("step_2.status == 'ok'", {1: outcome()}, "no outcome for step_2"),
        ("step_1.result[0] == 'a'", {1: outcome()}, "IndexError"),
        ("step_1.result[99999999999999999999] == 'a'", {1: outcome("a")}, "IndexError"),
        ("step_1.status < 3", {1: outcome()}, "cannot order a str and a int"),
        ("step_1.count in step_1.status", {1: outcome()}, "needs a string on the left"),
        ("1 in step_1.count", {1: outcome()}, "needs a sequence on the right"),
        ("len(step_1.count) == 0", {1: outcome()}, "len() of a int"),
        ("step_1.count[0] == 1", {1: outcome()}, "cannot be indexed"),
        ("step_1.result[0] > 1", {1: outcome(object())}, "cannot order"),
        ("step_1.result[0]", {1: outcome(object())}, "neither true nor false"),
    ],
)
def test_evaluation_errors_name_the_condition(
    text: str, outcomes: dict[int, Outcome], fragment: str
) -> None:
    with pytest.raises(ConditionEvaluationError) as info:
        parse_condition(text).evaluate(outcomes)
    assert isinstance(info.value, ExecutionError)
    assert fragment in str(info.value)
    assert repr(text) in str(info.value)


def test_attributes_are_read_through_the_protocol_only() -> None:
    class Probe:
        """An outcome whose other attributes would notice being read."""

        def __init__(self) -> None:
            self.touched: list[str] = []

        def __getattribute__(self, name: str) -> object:
            if not name.startswith("__") and name != "touched":
                object.__getattribute__(self, "touched").append(name)
            values = {"result": ["a"], "status": "ok", "count": 1}
            if name in values:
                return values[name]
            return object.__getattribute__(self, name)

    probe = Probe()
    seen = cast(StepOutcomeLike, probe)
    assert parse_condition("step_1.count == 1 and step_1.status == 'ok'").evaluate({1: seen})
    assert probe.touched == ["count", "status"]


def test_the_module_never_calls_eval_exec_or_compile() -> None:
    tree = ast.parse(inspect.getsource(conditions))
    called = {
        node.func.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    assert not called & {"eval", "exec", "compile", "__import__", "getattr"}


# ---------------------------------------------------------------- property-based tests

_TOKENS = [
    "step_1",
    "step_2",
    ".result",
    ".status",
    ".count",
    ".__class__",
    "len",
    "(",
    ")",
    "[",
    "]",
    "0",
    "-1",
    "2",
    "'ok'",
    "'a'",
    "None",
    "True",
    " == ",
    " != ",
    " < ",
    " >= ",
    " in ",
    " not in ",
    " and ",
    " or ",
    "not ",
    ",",
    " is ",
    " ** ",
    "lambda",
    ":",
    "__import__",
]

_OUTCOMES = {
    1: outcome("a", "b", status="ok"),
    2: outcome(status="error"),
}


def _check_any_text(text: str) -> None:
    try:
        condition = parse_condition(text)
    except PlanError:
        return
    assert condition.names() <= {1, 2, *range(3, 1_000_000)}
    try:
        value = condition.evaluate(_OUTCOMES)
    except ConditionEvaluationError:
        return
    assert isinstance(value, bool)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=120))
def test_random_text_raises_nothing_but_plan_error(text: str) -> None:
    _check_any_text(text)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_TOKENS), max_size=14).map("".join))
def test_random_token_soup_raises_nothing_but_plan_error(text: str) -> None:
    _check_any_text(text)


# Well-formed expressions, generated with their meaning (a function of the outcomes).
Expr = tuple[str, Callable[[dict[int, Outcome]], bool]]

_step = st.sampled_from([1, 2, 3])
_small = st.integers(min_value=-3, max_value=5)
_cmp = st.sampled_from(["==", "!=", "<", "<=", ">", ">="])
_OPS: dict[str, Callable[[int, int], bool]] = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


@st.composite
def _atom(draw: st.DrawFn) -> Expr:
    kind = draw(st.sampled_from(["len", "count", "status", "member", "truth"]))
    n = draw(_step)
    if kind == "len":
        op, k = draw(_cmp), draw(_small)
        return f"len(step_{n}.result) {op} {k}", lambda o: _OPS[op](len(o[n].result), k)
    if kind == "count":
        op, k = draw(_cmp), draw(_small)
        return f"step_{n}.count {op} {k}", lambda o: _OPS[op](o[n].count, k)
    if kind == "status":
        negate = draw(st.booleans())
        value = draw(st.sampled_from(["ok", "error", "skipped"]))
        symbol = "!=" if negate else "=="
        return (
            f"step_{n}.status {symbol} {value!r}",
            lambda o: (o[n].status != value) if negate else (o[n].status == value),
        )
    if kind == "member":
        item = draw(st.sampled_from(["a", "b", "z"]))
        negate = draw(st.booleans())
        text = f"{item!r} {'not in' if negate else 'in'} step_{n}.result"
        return text, lambda o: (item not in o[n].result) if negate else (item in o[n].result)
    return f"step_{n}.result", lambda o: len(o[n].result) > 0


def _combine(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
    def build(parts: tuple[str, Expr, Expr]) -> Expr:
        op, (left_text, left), (right_text, right) = parts
        if op == "not":
            return f"not ({left_text})", lambda o: not left(o)
        if op == "and":
            return f"({left_text}) and ({right_text})", lambda o: left(o) and right(o)
        return f"({left_text}) or ({right_text})", lambda o: left(o) or right(o)

    return st.tuples(st.sampled_from(["not", "and", "or"]), children, children).map(build)


_expressions = st.recursive(_atom(), _combine, max_leaves=6)

_random_outcomes = st.fixed_dictionaries(
    {
        n: st.builds(
            lambda items, status: outcome(*items, status=status),
            st.lists(st.sampled_from(["a", "b", "c"]), max_size=4),
            st.sampled_from(["ok", "error", "skipped"]),
        )
        for n in (1, 2, 3)
    }
)


@settings(max_examples=300, deadline=None)
@given(_expressions, _random_outcomes)
def test_generated_expressions_evaluate_to_the_expected_bool(
    expression: Expr, outcomes: dict[int, Outcome]
) -> None:
    text, meaning = expression
    if len(text) > MAX_LENGTH:
        with pytest.raises(PlanError):
            parse_condition(text)
        return
    condition = parse_condition(text)
    value = condition.evaluate(outcomes)
    assert isinstance(value, bool)
    assert value == meaning(outcomes)
    assert condition.names() <= {1, 2, 3}
