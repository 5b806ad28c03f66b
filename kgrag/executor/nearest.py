"""Nearest-neighbour reads that return the ``k`` best neighbours a reader may read, whatever
the documents they may not read.

A vector index finds the nearest vectors of every document; the statements (``vector_chunks``,
``vector_images``, ``vector_entity_clip``) apply the ACL filter to a pool of candidates and keep
the best ``$k`` of what passes, out of a pool of at least :data:`BEAM`. When fewer than ``k``
candidates of that pool are readable while the index holds more, :func:`read_nearest` asks again
with a pool :data:`GROWTH` times wider, up to the index's size or :data:`MAX_POOL`: so the count
and the ranking of a reader's hits do not depend on how many unreadable vectors lie closer, up to
the :data:`MAX_POOL` nearest of all."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kgrag.executor.base import StatementReader

#: The smallest pool the statements search (their ``CASE WHEN $k > 200``): FalkorDB's efRuntime.
BEAM = 200
#: How much wider each further search is.
GROWTH = 4
#: The widest pool searched: beyond the 50,000 nearest vectors, readable ones are not sought.
MAX_POOL = 50_000

#: statement -> the statement counting the nodes its index can hold (a label count: read from
#: the engine's label statistics, not by scanning the nodes)
_SIZE_OF = {
    "vector_chunks": "vector_index_size_chunks",
    "vector_images": "vector_index_size_images",
    "vector_entity_clip": "vector_index_size_entities",
}


def read_nearest(
    reader: StatementReader, name: str, vector: Sequence[float], k: int
) -> list[dict[str, Any]]:
    """The ``k`` nearest readable rows of vector statement ``name``, best first."""
    if name not in _SIZE_OF:
        raise ValueError(f"{name!r} is not a vector statement: {', '.join(sorted(_SIZE_OF))}")
    vector = list(vector)
    rows = reader.read(name, {"vector": vector, "k": k})
    pool = max(k, BEAM)
    if len(rows) >= k:
        return rows[:k]
    size = int(reader.read(_SIZE_OF[name], {})[0]["size"])
    while len(rows) < k and pool < min(size, MAX_POOL):
        pool = min(pool * GROWTH, size, MAX_POOL)
        rows = reader.read(name, {"vector": vector, "k": pool})
    return rows[:k]
