"""Two clients MERGE the same relationships between existing nodes at once, on new embedded
FalkorDB graphs: how often is a relationship created twice?

Each race: a new graph with 30 pairs of nodes; two connections (as two ``kgrag ingest --shard``
processes have) wait at a barrier, then each sends the one statement
``UNWIND ... MATCH (a), (b) MERGE (a)-[r:R]->(b) SET r.w = coalesce(r.w, 0) + 1``. Variant
``new type``: R does not exist in the graph yet; ``declared type``: it was created first (a
relationship of it created and deleted: what migration 0009_relationship_types does for every
relationship type of kgrag's schema). Prints, per variant, the races that left more than 30
relationships. Measured on FalkorDB 4.22 (falkordblite 0.11.0), two runs: 138 and 112 of 300
with a new type, 0 and 0 of 300 with a declared one.

    python bench/falkordb_merge_race.py [RACES]
"""

from __future__ import annotations

import sys
import tempfile
import threading
from pathlib import Path

from kgrag.graph import open_store

PAIRS = 30
MERGE = (
    "UNWIND range(1, $pairs) AS i MATCH (a:N {id: i}), (b:N {id: i + 1000}) "
    "MERGE (a)-[r:R]->(b) SET r.w = coalesce(r.w, 0) + 1"
)


def race(connection: object, name: str, declared: bool) -> int:
    """The relationships one race left (``PAIRS`` when no MERGE created one twice)."""
    graph = connection.select_graph(name)  # type: ignore[attr-defined]
    graph.query(
        "UNWIND range(1, $pairs) AS i CREATE (:N {id: i}), (:N {id: i + 1000})", {"pairs": PAIRS}
    )
    if declared:
        graph.query("CREATE (a)-[:R]->(b) DETACH DELETE a, b")
    barrier = threading.Barrier(2)

    def merge() -> None:
        mine = connection.select_graph(name)  # type: ignore[attr-defined]
        barrier.wait()
        mine.query(MERGE, {"pairs": PAIRS})

    workers = [threading.Thread(target=merge) for _ in range(2)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    n = int(graph.ro_query("MATCH (:N)-[r:R]->(:N) RETURN count(r)").result_set[0][0])
    graph.delete()
    return n


def main() -> None:
    races = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    with tempfile.TemporaryDirectory() as folder:
        store = open_store(f"falkordb-lite:///{Path(folder)}/kg.db", run_migrations=False)
        try:
            connection = store._connection  # type: ignore[attr-defined]
            for declared in (False, True):
                doubled = sum(
                    race(connection, f"race_{declared}_{i}", declared) != PAIRS
                    for i in range(races)
                )
                what = "declared type" if declared else "new type"
                print(f"{what}: {doubled} of {races} races created a relationship twice")
        finally:
            store.close()


if __name__ == "__main__":
    main()
