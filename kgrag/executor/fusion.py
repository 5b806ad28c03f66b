"""Fusing ranked lists (the ``aggregate`` step): weighted reciprocal-rank fusion, best score or
sum of scores. Reciprocal-rank fusion reads ranks only, so it fuses lists whose scores are not
comparable (cosine similarities and BM25); a source's weight scales its contribution."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
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
    groups: Mapping[str, str] | None = None,
) -> list[tuple[_H, float]]:
    """The hits of ``lists`` (each best first) with their fused scores, best first. A hit is
    identified by id, or by its passage with ``groups`` (hit id -> one id for all copies of a
    passage, :func:`kgrag.executor.duplicates.copy_groups`): a list ranks each passage once,
    where its best copy stands, and copies below it take no rank. With ``rrf`` a passage at
    rank r (from 0) of list i adds ``weights[i] / (rrf_k + r + 1)``; ``max`` keeps its best
    score, ``sum`` adds its scores (weighted). A passage is returned as its first occurrence,
    or as a copy that alone counted more (the best-ranked copy). Ties keep the order in which
    passages were first seen."""
    if weights is not None and len(weights) != len(lists):
        raise ValueError(f"{len(weights)} weights for {len(lists)} lists")
    w = list(weights) if weights is not None else [1.0] * len(lists)
    fused: dict[str, float] = {}
    shown: dict[str, tuple[_H, float]] = {}  # passage -> the copy shown, what it counted
    for weight, hits in zip(w, lists, strict=True):
        ranked: set[str] = set()
        for hit in hits:
            key = groups.get(hit.id, hit.id) if groups is not None else hit.id
            if key in ranked:
                continue
            rank = len(ranked)
            ranked.add(key)
            if method == "rrf":
                counted = weight / (rrf_k + rank + 1)
                fused[key] = fused.get(key, 0.0) + counted
            elif method == "max":
                counted = hit.score
                fused[key] = max(fused.get(key, -math.inf), counted)
            else:
                counted = weight * hit.score
                fused[key] = fused.get(key, 0.0) + counted
            best = shown.get(key)
            if best is None or (hit.id != best[0].id and counted > best[1]):
                shown[key] = (hit, counted)
            elif hit.id == best[0].id and counted > best[1]:
                shown[key] = (best[0], counted)
    order = sorted(fused, key=lambda i: -fused[i])
    return [(shown[i][0], fused[i]) for i in order]
