"""Property-based tests for the calculator tool (hostile input: its expression may come from an
LLM plan steered by an ingested document). Whatever the text, the only exception that escapes is
the project's own (a :class:`~kgrag.errors.KgragError`, saying why); generated arithmetic
evaluates to the value of a reference computed here from the expression tree the text was
printed from (never ``eval``); names, attributes, calls, lambdas, comprehensions, huge powers and
very long inputs are refused quickly, with a clear message."""

from __future__ import annotations

import math
import operator
import time
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kgrag.errors import KgragError, QueryRefusedError
from kgrag.tools import evaluate_arithmetic
from kgrag.tools.calculator import (
    CALCULATOR,
    MAX_EXPONENT,
    MAX_EXPRESSION_CHARS,
    MAX_RESULT_DIGITS,
    CalculatorError,
)

#: ast.parse warns about texts such as "1e" or "9x" (invalid decimal literal): noise here.
pytestmark = pytest.mark.filterwarnings("ignore::SyntaxWarning")

Number = int | float

#: Seconds any one expression may take, refusals included (generous: the test machine is busy).
QUICK_S = 1.0

_SETTINGS = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _timed(expression: str) -> tuple[Number | KgragError, float]:
    """The calculator's value or its refusal, and how long it took."""
    started = time.perf_counter()
    try:
        value: Number | KgragError = evaluate_arithmetic(expression)
    except KgragError as e:
        value = e
    return value, time.perf_counter() - started


def _assert_clear_refusal(error: BaseException) -> None:
    assert isinstance(error, CalculatorError), repr(error)
    message = str(error)
    assert message.startswith("calculator: ") and len(message) > len("calculator: ") + 5, message


# ------------------------------------------------------------------------------ arbitrary text

_TOKENS = [
    *"0123456789",
    *("1e308", "1e-308", "0x1f", "0b101", "0o17", "1_000", "1j", ".5", "5.", "e"),
    *("+", "-", "*", "/", "//", "%", "**", "~", "<<", ">>", "&", "|", "^", "@", "<", "=="),
    *("(", ")", "[", "]", "{", "}", ",", ":", ";", ".", "'", '"', "\\", "=", ":="),
    *(" ", "\t", "\n", "\r", "\x00", "\x0c", "\ufeff", "\u00a0", "\ud800", "\udfff", "ℕ"),
    *("x", "_", "abs", "pow", "__import__", "__class__", "__subclasses__", "os", "sys", "open"),
    *("lambda", "for", "in", "if", "else", "not", "and", "or", "yield", "await", "async"),
    *("True", "None", "...", "f'", "b'", "r'", "#", "9**9**9", "10**1000", "2**-1074"),
]
_token_soup = st.lists(st.sampled_from(_TOKENS), max_size=60).map("".join)
#: Any code point, lone surrogates included (JSON from an LLM may hold one: "\ud800").
_any_text = st.text(alphabet=st.characters(exclude_categories=()), max_size=120)


@_SETTINGS
@given(st.one_of(_token_soup, _any_text))
@example("1\x00")
@example("\ud800")
@example("1 + \udfff")
@example("-" * (MAX_EXPRESSION_CHARS - 1) + "1")
@example("(" * 199 + "1" + ")" * 199)
@example("(" * 250 + "1" + ")" * 250)
def test_arbitrary_text_raises_nothing_but_kgrag_errors(text: str) -> None:
    value, took = _timed(text)
    assert took < QUICK_S, f"{took:.2f}s for {text[:60]!r}"
    if isinstance(value, KgragError):
        _assert_clear_refusal(value)
        return
    assert type(value) in (int, float), repr(value)  # never bool, complex, str...
    assert math.isfinite(value) and abs(value) < 10**MAX_RESULT_DIGITS


@_SETTINGS
@given(st.one_of(_token_soup, _any_text, st.text(min_size=490, max_size=520)))
def test_the_tool_refuses_with_kgrag_errors_only(text: str) -> None:
    """Through the tool's argument model too (what a plan's ``tool_call`` reaches)."""
    try:
        [hit] = CALCULATOR.call({"expression": text}, None)  # type: ignore[arg-type]
    except QueryRefusedError as e:  # the argument model: empty, too long, not a string
        assert "tool 'calculator': invalid arguments" in str(e)
    except CalculatorError as e:
        _assert_clear_refusal(e)
    else:
        assert hit.text is not None and hit.text.startswith(text.strip()[:80])


# ------------------------------------------------------------------- arithmetic vs a reference

ADD, MUL, UNARY, POW, ATOM = 1, 2, 3, 4, 5
_BINARY: dict[str, tuple[int, Callable[[Number, Number], Number]]] = {
    "+": (ADD, operator.add),
    "-": (ADD, operator.sub),
    "*": (MUL, operator.mul),
    "/": (MUL, operator.truediv),
    "//": (MUL, operator.floordiv),
    "%": (MUL, operator.mod),
    "**": (POW, operator.pow),
}
#: 2**3322 > 10**1000: a power whose base has this many bits is over the result bound.
_BOUND_BITS = math.ceil(MAX_RESULT_DIGITS / math.log10(2))


class _Refused(Exception):
    """The reference says the calculator must refuse this expression."""


@dataclass(frozen=True)
class Expr:
    """An expression tree node: its text (printed with Python's precedence, parenthesised only
    where needed), the precedence of its top operator, and its value (``None``: refused)."""

    text: str
    prec: int
    value: Number | None


def _checked(value: Number | complex) -> Number:
    if isinstance(value, complex):
        raise _Refused("not a real number")
    if isinstance(value, float) and not math.isfinite(value):
        raise _Refused("not finite")
    if isinstance(value, int) and abs(value) >= 10**MAX_RESULT_DIGITS:
        raise _Refused("too many digits")
    return value


def _apply(op: str, a: Number, b: Number) -> Number:
    if op == "**":
        if abs(b) > MAX_EXPONENT:
            raise _Refused("exponent out of bounds")
        # |a|**b >= 2**((bits - 1) * b): over the bound, and not worth computing
        if (
            isinstance(a, int)
            and isinstance(b, int)
            and b > 0
            and (abs(a).bit_length() - 1) * b >= _BOUND_BITS
        ):
            raise _Refused("too many digits")
    try:
        return _checked(_BINARY[op][1](a, b))
    except (ZeroDivisionError, OverflowError) as e:
        raise _Refused(str(e)) from None


def _literal(value: Number) -> Expr:
    return Expr(repr(value), ATOM, value)


def _paren(e: Expr) -> Expr:
    return Expr(f"({e.text})", ATOM, e.value)


def _unary(op: str, operand: Expr) -> Expr:
    inner = operand if operand.prec >= UNARY else _paren(operand)
    value = None if operand.value is None else (-operand.value if op == "-" else operand.value)
    return Expr(f"{op}{inner.text}", UNARY, value)


def _binary(op: str, left: Expr, right: Expr, space: str) -> Expr:
    prec = _BINARY[op][0]
    if op == "**":  # right-associative, and binds tighter than a unary minus on its left
        left = left if left.prec > POW else _paren(left)
        right = right if right.prec >= UNARY else _paren(right)
    else:
        left = left if left.prec >= prec else _paren(left)
        right = right if right.prec > prec else _paren(right)
    value: Number | None = None
    if left.value is not None and right.value is not None:
        try:
            value = _apply(op, left.value, right.value)
        except _Refused:
            value = None
    return Expr(f"{left.text}{space}{op}{space}{right.text}", prec, value)


_literals = st.one_of(
    st.integers(min_value=0, max_value=10**6),
    st.integers(min_value=0, max_value=10**40),
    st.floats(min_value=0.0, max_value=1e6, allow_nan=False, allow_infinity=False),
    st.floats(min_value=0.0, max_value=1e300, allow_nan=False, allow_infinity=False),
    st.sampled_from([0, 1, 2, 3, 10, 0.5, 0.0, 2.5]),
).map(_literal)


def _compound(inner: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
    return st.one_of(
        st.builds(
            _binary, st.sampled_from(sorted(_BINARY)), inner, inner, st.sampled_from(["", " "])
        ),
        st.builds(_unary, st.sampled_from(["-", "+"]), inner),
        inner.map(_paren),
    )


_expressions = st.recursive(_literals, _compound, max_leaves=10)


@_SETTINGS
@given(_expressions)
@example(_binary("**", _literal(2), _binary("**", _literal(3), _literal(2), ""), ""))  # 512
@example(_unary("-", _binary("**", _literal(2), _literal(2), "")))  # -2**2 == -4
@example(_binary("**", _literal(2), _unary("-", _literal(1)), ""))  # 2**-1 == 0.5
@example(_binary("**", _literal(7), _literal(1000), ""))  # 846 digits: allowed
@example(_binary("**", _literal(10), _literal(1000), ""))  # 1001 digits: refused
@example(_binary("//", _unary("-", _literal(7)), _literal(2), ""))  # -4
def test_arithmetic_equals_the_reference_value(expr: Expr) -> None:
    value, took = _timed(expr.text)
    assert took < QUICK_S, f"{took:.2f}s for {expr.text[:60]!r}"
    if len(expr.text) > MAX_EXPRESSION_CHARS:
        assert isinstance(value, CalculatorError) and "longer than" in str(value)
        return
    if expr.value is None:
        assert isinstance(value, KgragError), f"{expr.text} = {value!r}: should be refused"
        _assert_clear_refusal(value)
        return
    assert not isinstance(value, BaseException), f"{expr.text}: {value}"
    assert type(value) is type(expr.value), (expr.text, value, expr.value)
    assert value == expr.value, (expr.text, value, expr.value)


def test_reference_printer_follows_python_precedence() -> None:
    """The printer's texts mean what the tree means (checked on hand-written cases)."""
    two, three = _literal(2), _literal(3)
    assert _binary("**", _unary("-", two), two, "").text == "(-2)**2"
    assert _binary("-", two, _binary("-", three, two, " "), " ").text == "2 - (3 - 2)"
    assert _binary("-", _binary("-", three, two, " "), two, " ").text == "3 - 2 - 2"
    assert _binary("**", _binary("**", two, three, ""), two, "").text == "(2**3)**2"
    assert _binary("*", two, _unary("-", three), "").text == "2*-3"
    assert _binary("**", _binary("**", two, three, ""), two, "").value == 64


# ----------------------------------------------------------------------- refused, quickly

_HOSTILE = [
    ("x", "names are not allowed"),
    ("x + 1", "names are not allowed"),
    ("__import__('os').system('true')", "not allowed"),
    ("(1).real", "Attribute is not allowed"),
    ("(1).__class__.__mro__", "Attribute is not allowed"),
    ("().__class__.__bases__[0].__subclasses__()", "not allowed"),
    ("abs(-1)", "function calls are not allowed"),
    ("(1)(2)", "function calls are not allowed"),
    ("lambda: 1", "Lambda is not allowed"),
    ("(lambda: 9**9**9)()", "function calls are not allowed"),
    ("[x for x in range(10**9)]", "ListComp is not allowed"),
    ("{x for x in range(10**9)}", "SetComp is not allowed"),
    ("{x: x for x in range(10**9)}", "DictComp is not allowed"),
    ("(x for x in range(10**9))", "GeneratorExp is not allowed"),
    ("sum(x for x in range(10**9))", "function calls are not allowed"),
    ("(y := 9**9**9)", "NamedExpr is not allowed"),
    ("9**9**9", "exponent"),
    ("9**9**9**9", "exponent"),
    ("2**10**10", "exponent"),
    ("10**1001", "exponent"),
    ("(10**999)**1000", "digits"),
    ("999999**999", "digits"),
    ("2.0**1000.5", "exponent"),
    ("(-(10**999))**3", "digits"),
    ("1 << 10**9", "LShift is not allowed"),
    ("[1] * 10**9", "not allowed"),
    ("'a' * 10**9", "only numbers"),
    ("1j ** 2", "only numbers"),
    ("True ** 9", "only numbers"),
    ("None", "only numbers"),
    ("...", "only numbers"),
    ("1 if 1 else 9**9**9", "IfExp is not allowed"),
    ("1; 2", "not an arithmetic expression"),
    ("1\x00", "not an arithmetic expression"),
    ("\ud800", "not an arithmetic expression"),
    ("1 + " * 2000 + "1", "longer than"),
    ("9" * 100_000, "longer than"),
    ("(" * 100_000 + "1" + ")" * 100_000, "longer than"),
    ("-" * 1_000_000 + "1", "longer than"),
    ("(" * 240 + "1" + ")" * 240, "not an arithmetic expression"),
]


@pytest.mark.parametrize(("expression", "message"), _HOSTILE, ids=[m for _, m in _HOSTILE])
def test_hostile_expressions_are_refused_quickly_and_clearly(expression: str, message: str) -> None:
    value, took = _timed(expression)
    assert isinstance(value, KgragError), f"{expression[:60]!r} = {value!r}"
    _assert_clear_refusal(value)
    assert message in str(value), str(value)
    assert took < QUICK_S, f"{took:.2f}s to refuse {expression[:60]!r}"


@_SETTINGS
@given(
    base=st.integers(min_value=2, max_value=10**6),
    exponent=st.integers(min_value=MAX_EXPONENT + 1, max_value=10**18),
    nesting=st.integers(min_value=1, max_value=3),
)
def test_any_huge_power_is_refused_without_being_computed(
    base: int, exponent: int, nesting: int
) -> None:
    text = "**".join([str(base)] * nesting + [str(exponent)])
    value, took = _timed(text)
    assert isinstance(value, CalculatorError), f"{text} = {value!r}"
    assert "exponent" in str(value) or "digits" in str(value), str(value)
    assert took < QUICK_S, f"{took:.2f}s to refuse {text}"


@settings(max_examples=60, deadline=None)
@given(
    filler=st.sampled_from(["1+", "-", "(", "9", " ", "x.", "f(", "[", "**9"]),
    extra=st.integers(min_value=1, max_value=200_000),
)
def test_very_long_input_is_refused_before_parsing(filler: str, extra: int) -> None:
    text = filler * (MAX_EXPRESSION_CHARS // len(filler) + extra) + "1"
    value, took = _timed(text)
    assert isinstance(value, CalculatorError) and "longer than" in str(value), repr(value)
    assert took < QUICK_S
