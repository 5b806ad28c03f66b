"""The one guard for values under unique constraints, applied by every write of every store.

FalkorDB 4.22 (falkordblite 0.11.0) crashes (segfault of the server) when a node is created or
merged whose uniquely constrained property is empty, starts or ends with a space, or is longer
than 4,096 bytes (upstream FalkorDB issues #1340 and #2440; the empty string too, reproduced in
tests/integration/test_key_guard.py). Neo4j refuses index keys over about 8 KB with an error. So
no such value may reach a constrained property on either engine: :func:`check_key` refuses it with
:class:`InvalidKeyError` before any Cypher runs, and :func:`guard_write` finds, for a statement of
``cypher/``, which parameters and row fields land in constrained properties (``MERGE (x:Label
{prop: $param})`` or ``{prop: row.field}``) and checks them.

The rule (also for ids made by kgrag itself): a non-empty string of at most
:data:`KEY_MAX_BYTES` UTF-8 bytes, without leading or trailing whitespace, control characters or
lone surrogates.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from typing import Any

from kgrag.errors import InvalidKeyError, QueryRefusedError

#: Longest key, in UTF-8 bytes: far below FalkorDB's crash at 4,096 and Neo4j's index-key limit
#: (8,167 bytes for a range index), and long enough for any id kgrag makes or a person types.
KEY_MAX_BYTES = 1024

#: Characters a key may not start or end with (whitespace, controls), and characters it may not
#: contain (controls), as regex character-class bodies (the same in Python and ECMAScript).
KEY_EDGE_CHARS = r"\x00-\x20\x7f-\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
KEY_INNER_CHARS = r"\x00-\x1f\x7f-\x9f"

#: ``MERGE (x:Label:Other {prop: <value>})`` / ``CREATE (...)``: labels, property, value.
_KEYED_PATTERN = re.compile(
    r"\b(?:MERGE|CREATE)\s*\(\s*\w*((?:\s*:\s*`?\w+`?)+)\s*\{\s*`?(\w+)`?\s*:\s*([^,}]+)\}"
)
#: The two value forms the guard can check: ``$param`` and ``row.field``.
_VALUE = re.compile(r"^(?:\$(\w+)|row\.(\w+))$")


def key_problem(value: object) -> str | None:
    """Why ``value`` cannot be a key, or None when it can."""
    if not isinstance(value, str):
        return f"must be a string, not {type(value).__name__}"
    if not value:
        return "is empty"
    if value != value.strip():
        return "starts or ends with whitespace"
    for ch in value:
        category = unicodedata.category(ch)
        if category == "Cc":
            return f"contains the control character U+{ord(ch):04X}"
        if category == "Cs":
            return f"contains the lone surrogate U+{ord(ch):04X}"
    size = len(value.encode("utf-8"))
    if size > KEY_MAX_BYTES:
        return f"is {size:,} bytes long; at most {KEY_MAX_BYTES:,} are allowed"
    return None


def check_key(what: str, value: object) -> str:
    """Return ``value`` if it can be stored under a unique constraint, else raise
    :class:`InvalidKeyError` naming ``what`` (e.g. "session id") and the reason."""
    problem = key_problem(value)
    if problem:
        raise InvalidKeyError(what, problem)
    assert isinstance(value, str)
    return value


@cache
def keyed_fields(text: str, unique: frozenset[tuple[str, str]]) -> tuple[tuple[str, str, str], ...]:
    """``(label.property, 'param'|'row', name)`` for each constrained property that statement
    ``text`` MERGEs or CREATEs a node by."""
    found = []
    for labels, prop, value in _KEYED_PATTERN.findall(text):
        for label in re.findall(r"\w+", labels):
            if (label, prop) not in unique:
                continue
            form = _VALUE.match(value.strip())
            if form is None:  # fail closed: a value the guard cannot see is not written
                raise QueryRefusedError(
                    f"a statement stores {value.strip()!r} under the unique constraint "
                    f"{label}.{prop}; only $param or row.field values can be checked there"
                )
            param, field = form.groups()
            found.append((f"{label}.{prop}", "param" if param else "row", param or field))
    return tuple(found)


def guard_write(
    text: str,
    params: Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]] | None,
    unique: Iterable[tuple[str, str]],
) -> None:
    """Check every value statement ``text`` would store under a unique constraint: its
    ``$params`` and, for ``UNWIND $rows AS row`` statements, the fields of every row (``rows``,
    or ``params['rows']``). Raises :class:`InvalidKeyError` before anything is written."""
    fields = keyed_fields(text, frozenset(unique))
    if not fields:
        return
    batch = rows if rows is not None else params.get("rows", ())
    for where, source, name in fields:
        if source == "param":
            if name not in params:
                continue
            if params[name] is None and _skips_null(text, name):
                continue  # ``WHERE $name IS NOT NULL`` before the MERGE: nothing is stored
            check_key(where, params[name])
            continue
        for row in batch:
            if name in row:
                check_key(where, row[name])


@cache
def _skips_null(text: str, param: str) -> bool:
    """Whether statement ``text`` filters on ``$param IS NOT NULL`` (e.g. trace_query.cypher:
    a question outside a session is stored without a Session node). Both engines refuse a MERGE
    on a null property with an error, never a crash; the guard lets only such guarded nulls
    through, so an unguarded null still fails closed here."""
    return re.search(rf"\bWHERE\s+\${param}\s+IS\s+NOT\s+NULL\b", text, re.IGNORECASE) is not None
