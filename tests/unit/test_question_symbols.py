"""Symbols a question quotes or calls an operator are lexical terms: "What does the ? operator
do in Rust?" finds the operators table's row for ``?``, not the row of every other operator
(the store's part runs on both engines in tests/integration/test_lexical_forms.py)."""

from __future__ import annotations

from kgrag.executor.lexical import bm25
from kgrag.planner.rule import (
    IDENTIFIER_LEXICAL_WEIGHT,
    LEXICAL_WEIGHT,
    fulltext_query,
    lexical_params,
    lexical_weight,
)
from kgrag.text.symbols import is_symbol, question_symbols, symbol_count

QUESTION = "What does the ? operator do in Rust?"
ROWS = [
    "Operators — Operator: =>; Example: pat => expr; Explanation: Part of match arm syntax",
    "Operators — Operator: ?; Example: expr?; Explanation: Error propagation",
    "Non-operator Symbols — Symbol: //; Explanation: Line comment",
    "What is an operator? Rust has many. Why? See the table.",
]


def test_the_symbols_a_question_quotes_or_calls_an_operator() -> None:
    assert question_symbols(QUESTION) == ("?",)
    assert question_symbols("What does `=>` mean in a match?") == ("=>",)
    assert question_symbols('What is the "::" for?') == ("::",)
    assert question_symbols("what is the operator -> for?") == ("->",)
    # a question's own punctuation is no symbol it asks about
    assert question_symbols("Where should grep bug reports be sent?") == ()
    assert question_symbols("What is it, really?") == ()
    assert is_symbol("?") and is_symbol("=>") and not is_symbol("a?") and not is_symbol("????")


def test_a_symbol_counts_where_it_stands_alone() -> None:
    assert [symbol_count(r, "?") for r in ROWS] == [0, 1, 0, 0]
    assert symbol_count("use the ? operator, or `?`", "?") == 2


def test_bm25_ranks_the_symbols_row_first() -> None:
    """Before, the query was ``operator | rust`` and the rows of ``=>`` and ``?`` scored
    alike."""
    params = lexical_params(QUESTION)
    assert params == {"query": fulltext_query(QUESTION), "symbols": ["?"]}
    assert "?" not in str(params["query"])  # never sent to the full-text index: it is syntax
    ranked = bm25(["operator", "rust"], ROWS, None, ["?"])
    assert ranked[0].index == 1 and ranked[0].score > ranked[1].score


def test_a_named_symbol_weighs_the_lexical_ranking_as_an_identifier() -> None:
    assert lexical_weight(QUESTION) == IDENTIFIER_LEXICAL_WEIGHT
    assert lexical_weight("What does the operator do?") == LEXICAL_WEIGHT
    assert "symbols" not in lexical_params("What does the operator do?")
