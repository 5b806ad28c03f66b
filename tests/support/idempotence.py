"""A check of the ``// idempotent: yes`` declarations of ``cypher/``: a statement that creates
nodes or relationships unconditionally, or increments a property, is not idempotent, whatever its
header says. (The stores trust the header; this keeps the headers honest.)"""

from __future__ import annotations

import re

# A CREATE clause that is not "ON CREATE SET" and not schema DDL ("CREATE INDEX ... IF NOT EXISTS").
_CREATE_CLAUSE = re.compile(
    r"(?<!\bON\s)\bCREATE\b(?!\s+(?:OR\s+REPLACE\s+)?(?:VECTOR\s+|FULLTEXT\s+|RANGE\s+|TEXT\s+|"
    r"POINT\s+|LOOKUP\s+)?(?:INDEX|CONSTRAINT)\b)",
    re.IGNORECASE,
)
# SET a.b = a.b + ... or SET a.b = coalesce(a.b, 0) + ...: repeating it changes the value again.
_INCREMENT = re.compile(
    r"\b(\w+)\.(\w+)\s*=\s*(?:coalesce\(\s*\1\.\2\s*,[^)]*\)|\1\.\2)\s*[-+]",
    re.IGNORECASE,
)


# What makes an increment count once: the statement reads a marker's absence and sets the marker
# on what it counts ("... c.counted IS NULL ... SET c.counted = true"), in the same statement.
_MARKER_ABSENT = re.compile(r"\b(\w+)\.(\w+)\s+IS\s+NULL\b", re.IGNORECASE)


def _guarded(cypher: str) -> bool:
    return any(
        re.search(rf"\bSET\s+{var}\.{prop}\s*=\s*true\b", cypher, re.IGNORECASE)
        for var, prop in _MARKER_ABSENT.findall(cypher)
    )


# CREATE (a)-[...]->(b) ... DETACH DELETE a, b: what it creates it deletes in the same statement
# (declaring a relationship type: cypher/schema/relationship_type.cypher).
_CREATED_NODES = re.compile(r"\bCREATE\s+(.*?)(?=\bDETACH\s+DELETE\b)", re.IGNORECASE | re.DOTALL)
_DETACH_DELETE = re.compile(r"\bDETACH\s+DELETE\s+([\w\s,]+)", re.IGNORECASE)


def _creates_only_what_it_deletes(cypher: str) -> bool:
    created = _CREATED_NODES.search(cypher)
    deleted = _DETACH_DELETE.search(cypher)
    if created is None or deleted is None or len(_CREATE_CLAUSE.findall(cypher)) != 1:
        return False
    made = set(re.findall(r"\((\w+)\)", created.group(1)))
    gone = {v.strip() for v in deleted.group(1).split(",") if v.strip()}
    return bool(made) and made <= gone


def looks_idempotent(cypher: str) -> bool:
    """Whether running ``cypher`` twice leaves the same graph as running it once, as far as its
    text shows: no unconditional CREATE (but of nodes the statement deletes again), no increment
    but one guarded by a marker."""
    if _CREATE_CLAUSE.search(cypher) and not _creates_only_what_it_deletes(cypher):
        return False
    return not _INCREMENT.search(cypher) or _guarded(cypher)
