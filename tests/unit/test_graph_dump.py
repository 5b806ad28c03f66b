"""kgrag.graph.dump.differences: what makes two canonical dumps the same graph."""

from __future__ import annotations

from kgrag.graph.dump import GraphDump, differences


def graph(vector: tuple[float, ...] = (0.1, 0.2), digest: str = "d1") -> GraphDump:
    return GraphDump(
        labels={"Chunk": 1, "Document": 1},
        types={"PART_OF": 1},
        digests={"Chunk:c1": digest, "Document:d": "d2", "Chunk:c1-[PART_OF]->Document:d": "d3"},
        vectors={"Chunk:c1.embedding": vector},
    )


def test_the_same_graph_has_no_differences_and_one_digest() -> None:
    assert differences(graph(), graph()) == []
    assert graph().digest == graph().digest


def test_vectors_within_the_tolerance_are_the_same() -> None:
    assert differences(graph(), graph((0.1 + 5e-5, 0.2))) == []
    assert graph().digest == graph((0.1 + 5e-5, 0.2)).digest  # vectors are not in the digest


def test_each_kind_of_difference_is_named() -> None:
    assert differences(graph(), graph((0.1, 0.25))) == [
        "vector Chunk:c1.embedding differs by up to 5.00e-02"
    ]
    assert differences(graph(), graph(digest="other")) == ["properties differ: Chunk:c1"]
    assert graph().digest != graph(digest="other").digest
    missing = graph()
    del missing.digests["Document:d"]
    missing.labels = {"Chunk": 1}
    assert differences(graph(), missing) == [
        "labels: {'Chunk': 1, 'Document': 1} != {'Chunk': 1}",
        "only in the first: Document:d",
    ]
    short = graph((0.1,))
    assert differences(graph(), short) == ["vector Chunk:c1.embedding: 2 != 1 dimensions"]
