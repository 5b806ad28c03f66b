"""kgrag.graph.keys: which values a statement stores under a unique constraint, and the rule."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kgrag.errors import InvalidKeyError, QueryRefusedError
from kgrag.graph.keys import check_key, guard_write, key_problem, keyed_fields
from kgrag.graph.schema import UNIQUE_KEYS

CYPHER = Path(__file__).resolve().parents[2] / "cypher"


def test_every_constrained_merge_in_the_corpus_is_guarded() -> None:
    """Each `MERGE|CREATE (x:Label {prop: ...})` of cypher/ on a constrained (label, prop) is
    found by the guard: a new statement cannot slip past it."""
    loose = re.compile(r"\b(?:MERGE|CREATE)\s*\(\s*\w*((?::`?\w+`?)+)\s*\{\s*(\w+)\s*:")
    for path in CYPHER.rglob("*.cypher"):
        text = path.read_text()
        wanted = {
            f"{label}.{prop}"
            for labels, prop in loose.findall(text)
            for label in re.findall(r"\w+", labels)
            if (label, prop) in UNIQUE_KEYS
        }
        assert {where for where, _, _ in keyed_fields(text, UNIQUE_KEYS)} == wanted, path


def test_a_value_the_guard_cannot_see_is_refused() -> None:
    with pytest.raises(QueryRefusedError, match=r"Session\.id"):
        keyed_fields("MERGE (s:Session {id: $a + 'x'})", UNIQUE_KEYS)
    assert keyed_fields("MERGE (m:Migration {name: $a + 'x'})", UNIQUE_KEYS) == ()


def test_rows_and_params_are_both_checked() -> None:
    text = "UNWIND $rows AS row MERGE (c:Chunk:Segment {id: row.id}) SET c.x = $d"
    guard_write(text, {}, [{"id": "d:s0"}, {"id": "d:s1"}], UNIQUE_KEYS)
    with pytest.raises(InvalidKeyError, match=r"Chunk\.id.*whitespace"):
        guard_write(text, {"rows": [{"id": "d:s0"}, {"id": " d:s1"}]}, None, UNIQUE_KEYS)
    with pytest.raises(InvalidKeyError, match=r"Query\.id.*empty"):
        guard_write("MERGE (q:Query {id: $id})", {"id": ""}, None, UNIQUE_KEYS)


def test_a_null_the_statement_skips_is_not_a_key() -> None:
    """trace_query.cypher merges a Session only ``WHERE $session_id IS NOT NULL``: a question
    outside a session (session_id None) stores no Session and must not be refused."""
    text = (CYPHER / "trace_query.cypher").read_text()
    guard_write(text, {"id": "q_1", "session_id": None}, None, UNIQUE_KEYS)
    with pytest.raises(InvalidKeyError, match=r"Session\.id.*empty"):
        guard_write(text, {"id": "q_1", "session_id": ""}, None, UNIQUE_KEYS)
    with pytest.raises(InvalidKeyError, match=r"Query\.id.*NoneType"):  # no guard: fails closed
        guard_write("MERGE (q:Query {id: $id})", {"id": None}, None, UNIQUE_KEYS)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("", "empty"),
        (" a", "whitespace"),
        ("a\t", "whitespace"),
        ("a\x07b", "U+0007"),
        ("a\ud800", "surrogate"),
        ("x" * 1025, "1,025 bytes"),
        (7, "string"),
    ],
)
def test_the_rule(value: object, problem: str) -> None:
    assert problem in str(key_problem(value))
    with pytest.raises(InvalidKeyError):
        check_key("id", value)


def test_ordinary_ids_pass() -> None:
    for value in ("doc_0123:c7", "q_0123456789abcdef", "ada lovelace", "会議", "x" * 1024):
        assert check_key("id", value) == value
