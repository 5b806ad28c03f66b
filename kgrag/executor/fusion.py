"""Fusing ranked lists (the ``aggregate`` step): weighted reciprocal-rank fusion, best score or
sum of scores. Reciprocal-rank fusion reads ranks only, so it fuses lists whose scores are not
comparable (cosine similarities and BM25); a source's weight scales its contribution."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, TypeVar

from kgrag.core import Hit

FusionMethod = Literal["rrf", "max", "sum"]
#: The reciprocal-rank constant of Cormack et al. (2009), used as published (not tuned).
RRF_K = 60

_H = TypeVar("_H", bound=Hit)


def fuse(
    lists: Sequence[Sequence[_H]],
    *,
    method: FusionMethod = "rrf",
    weights: Sequence[float] | None = None,
    rrf_k: int = RRF_K,
) -> list[tuple[_H, float]]:
    """The hits of ``lists`` (each best first) with their fused scores, best first; a hit is
    identified by id and keeps its first occurrence. With ``rrf`` a hit at rank r (from 0) of
    list i adds ``weights[i] / (rrf_k + r + 1)``; ``max`` keeps its best score, ``sum`` adds
    its scores (weighted). Ties keep the order in which hits were first seen."""
    if weights is not None and len(weights) != len(lists):
        raise ValueError(f"{len(weights)} weights for {len(lists)} lists")
    w = list(weights) if weights is not None else [1.0] * len(lists)
    fused: dict[str, float] = {}
    first: dict[str, _H] = {}
    for weight, hits in zip(w, lists, strict=True):
        for rank, hit in enumerate(hits):
            first.setdefault(hit.id, hit)
            if method == "rrf":
                fused[hit.id] = fused.get(hit.id, 0.0) + weight / (rrf_k + rank + 1)
            elif method == "max":
                fused[hit.id] = max(fused.get(hit.id, -math.inf), hit.score)
            else:
                fused[hit.id] = fused.get(hit.id, 0.0) + weight * hit.score
    order = sorted(fused, key=lambda i: -fused[i])
    return [(first[i], fused[i]) for i in order]
