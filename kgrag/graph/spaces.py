"""The EmbeddingSpace guard: one node per vector space records the model and dimension the store
was built with. Opening the store with another model or dimension is an error naming both, never a
silent mix of incomparable vectors."""

from __future__ import annotations

from typing import Protocol

from kgrag.core import Frozen
from kgrag.errors import EmbeddingSpaceMismatchError
from kgrag.graph.schema import VECTOR_INDEXES
from kgrag.graph.store import GraphStore


class EmbeddingSpace(Frozen):
    name: str  # "text" or "image"
    model: str
    dimensions: int
    similarity: str = "cosine"

    @classmethod
    def of(cls, name: str, model: EmbeddingModel) -> EmbeddingSpace:
        """The space of the vectors ``model`` (a text or image embedder) makes."""
        return cls(name=name, model=model.model_name, dimensions=model.dimensions)


class EmbeddingModel(Protocol):
    """What a space is named after: any embedder."""

    @property
    def model_name(self) -> str: ...

    @property
    def dimensions(self) -> int: ...


def registered(store: GraphStore) -> dict[str, EmbeddingSpace]:
    return {r["name"]: EmbeddingSpace(**r) for r in store.read("embedding_space_list")}


def ensure_space(store: GraphStore, space: EmbeddingSpace) -> None:
    """Register ``space`` and create its vector indexes, or check it matches the registered one."""
    existing = registered(store).get(space.name)
    if existing is not None:
        if (existing.model, existing.dimensions) != (space.model, space.dimensions):
            raise EmbeddingSpaceMismatchError(
                f"the store {store.uri} holds {space.name} vectors from {existing.model} "
                f"({existing.dimensions} dimensions), but kgrag was opened with {space.model} "
                f"({space.dimensions} dimensions). Use the original model, or ingest into a new "
                "store (--store) and re-embed."
            )
        return
    for index in VECTOR_INDEXES.values():
        if index.space == space.name:
            store.create_vector_index(index, space.dimensions)
    store.write("embedding_space_register", space.model_dump())
