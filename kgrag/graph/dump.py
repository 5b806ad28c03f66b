"""A canonical dump of a graph, to prove two jobs (serial and Ray, interrupted and not, one engine
and the other) built the same graph.

:func:`dump` reads every node and relationship and keeps: the count per label and per
relationship type, the sorted keys of each (a node's label and ``id``; a relationship's type and
ends), a SHA-256 digest of every property of each, and floats (vectors, and scores or weights
computed from them) apart, so :func:`differences` compares them within a tolerance (the same
model on other batches or another machine rounds differently in the last bits). Properties
that say *when* (ingestion and ACL-change times) and bookkeeping nodes (job leases,
migrations) are left out: they differ between two runs of the same job by design.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from kgrag.graph.store import GraphStore

#: Properties that record when something happened (they differ between two identical jobs).
VOLATILE_PROPERTIES = frozenset({"ingested_at", "at", "started_at", "heartbeat_at", "created_at"})
#: Labels of bookkeeping nodes (ingestion leases, applied migrations, embedding spaces).
BOOKKEEPING_LABELS = frozenset({"IngestJob", "Migration", "SchemaMigration", "EmbeddingSpace"})
_NODES = "MATCH (n) RETURN labels(n) AS labels, properties(n) AS p"
_RELATIONSHIPS = (
    "MATCH (a)-[r]->(b) RETURN type(r) AS type, labels(a) AS la, properties(a) AS pa, "
    "labels(b) AS lb, properties(b) AS pb, properties(r) AS p"
)


@dataclass
class GraphDump:
    """What :func:`differences` compares."""

    labels: dict[str, int] = field(default_factory=dict)
    types: dict[str, int] = field(default_factory=dict)
    digests: dict[str, str] = field(default_factory=dict)
    """Key of each node and relationship -> digest of its properties without vectors."""
    vectors: dict[str, tuple[float, ...]] = field(default_factory=dict)
    """``key.property`` -> its vector, or its float as a vector of one."""

    @property
    def digest(self) -> str:
        """One digest of the whole graph without its floats."""
        text = json.dumps([self.labels, self.types, sorted(self.digests.items())])
        return hashlib.sha256(text.encode()).hexdigest()


def dump(store: GraphStore) -> GraphDump:
    """The canonical dump of ``store`` (see the module doc)."""
    out = GraphDump()
    labels: Counter[str] = Counter()
    types: Counter[str] = Counter()
    for row in store.read_freeform(_NODES):
        names = sorted(row["labels"])
        if BOOKKEEPING_LABELS.intersection(names):
            continue
        labels.update(names)
        key = _node_key(names, row["p"])
        out.digests[key] = _digest(key, row["p"], out.vectors)
    for row in store.read_freeform(_RELATIONSHIPS):
        ends = sorted(row["la"]) + sorted(row["lb"])
        if BOOKKEEPING_LABELS.intersection(ends):
            continue
        types[row["type"]] += 1
        key = (
            f"{_node_key(sorted(row['la']), row['pa'])}-[{row['type']}]->"
            f"{_node_key(sorted(row['lb']), row['pb'])}"
        )
        out.digests[key] = _digest(key, row["p"], out.vectors)
    out.labels = dict(sorted(labels.items()))
    out.types = dict(sorted(types.items()))
    out.digests = dict(sorted(out.digests.items()))
    return out


def differences(a: GraphDump, b: GraphDump, tolerance: float = 1e-4, most: int = 20) -> list[str]:
    """How ``b`` differs from ``a`` (at most ``most`` lines); empty when they are the same
    graph: same counts, same keys, same properties, vectors within ``tolerance`` per value."""
    out: list[str] = []
    if a.labels != b.labels:
        out.append(f"labels: {a.labels} != {b.labels}")
    if a.types != b.types:
        out.append(f"relationship types: {a.types} != {b.types}")
    for key in sorted(a.digests.keys() - b.digests.keys()):
        out.append(f"only in the first: {key}")
    for key in sorted(b.digests.keys() - a.digests.keys()):
        out.append(f"only in the second: {key}")
    for key in sorted(a.digests.keys() & b.digests.keys()):
        if a.digests[key] != b.digests[key]:
            out.append(f"properties differ: {key}")
    for key in sorted(a.vectors.keys() ^ b.vectors.keys()):
        out.append(f"vector in one graph only: {key}")
    for key in sorted(a.vectors.keys() & b.vectors.keys()):
        x, y = a.vectors[key], b.vectors[key]
        if len(x) != len(y):
            out.append(f"vector {key}: {len(x)} != {len(y)} dimensions")
        elif any(abs(p - q) > tolerance for p, q in zip(x, y, strict=True)):
            worst = max(abs(p - q) for p, q in zip(x, y, strict=True))
            out.append(f"vector {key} differs by up to {worst:.2e}")
    return out[:most]


def _node_key(labels: list[str], props: dict[str, Any]) -> str:
    ident = props.get("id")
    if ident is None:  # no id: the node is known by all its properties
        ident = "#" + hashlib.sha256(_canonical(props).encode()).hexdigest()[:16]
    return f"{':'.join(labels)}:{ident}"


def _digest(key: str, props: dict[str, Any], vectors: dict[str, tuple[float, ...]]) -> str:
    kept: dict[str, Any] = {}
    for name, value in props.items():
        if name in VOLATILE_PROPERTIES:
            continue
        vector = _as_vector(value)
        if vector is not None:
            vectors[f"{key}.{name}"] = vector
        else:
            kept[name] = value
    return hashlib.sha256(_canonical(kept).encode()).hexdigest()


def _as_vector(value: Any) -> tuple[float, ...] | None:
    """``value`` as a vector when it is a float or a non-empty list of floats."""
    if isinstance(value, float):
        return (value,)
    if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__iter__"):
        return None
    items = list(value)
    if items and all(isinstance(v, float) for v in items):
        return tuple(items)
    return None


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)
