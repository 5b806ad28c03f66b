"""Why kgrag's recall@5 lead over dense narrows as distractors join the corpus (issue 17 item 1).

The growth benchmark (bench/growth.py) measures kgrag recall@5 at 1.197x dense over the 1,890
MuSiQue passages and 1.138x once 6,118 Wikipedia distractors join them (8,008 passages). This
script finds where the lost passages go and measures changes of the bridge retrieval against it,
under the fold discipline of bench/fusion_folds.py (question i in fold i mod 5 + 1; a change is
chosen on folds 1-3 at 8,008 and reported on folds 4-5; the five rotations show how stable the
choice is; the 1,890 figures must not fall).

1. Two embedded stores are built once and cached under ``bench/.cache/growth_diagnosis``: the
   MuSiQue corpus (1,890), copied, then the distractors added to the copy (8,008). Each passage
   is embedded once (ONNX text model).
2. Attribution: each question runs through the rule plan on both stores; for every gold passage
   in kgrag's top 5 at 1,890 and not at 8,008, where it came from at 1,890 (the first dense
   search, or only the bridge hop) and where it is at 8,008; how many top-5 places distractors
   take; how often the second seed of the bridge retrieval (``BRIDGE_SEED_CHUNKS``) is one.
3. Variants, each scored with ``kgrag.eval.retrieval.score_retrieval`` on both stores: today's
   plan (since 2026-11-27 a passage found through a bridge counts only when it names the bridge,
   and scores as the mean of its similarity and its seed's: kgrag/executor/bridge_links.py);
   bridges from the best 1 or 3 seed chunks instead of 2; three passages in the chain (``hops``
   3); and the bridge hop as it was before (every passage found counts, at its similarity).

Writes ``bench/results/growth_diagnosis.json``.

    python bench/growth_diagnosis.py           # builds the stores the first time (about 6 min)
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import shutil
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from common import CACHE, MUSIQUE_QUESTIONS, load_corpus, quiet_models, write_result
from growth import grown_corpus

log = logging.getLogger("bench.growth_diagnosis")

STORES = CACHE / "growth_diagnosis"
SMALL, LARGE = 1890, 8008
FOLDS = 5
KS = (2, 5)


# ------------------------------------------------------------------------------------- stores
def _settings(size: int) -> Any:
    from kgrag.config import Settings

    return Settings(
        store=f"falkordb-lite://{STORES / f's{size}' / 'kg.db'}",
        data_dir=STORES / "data",
        text_backend="onnx",
    )


def build_stores() -> None:
    """Ingest the 1,890 MuSiQue passages, copy that store, add the distractors to the copy."""
    from kgrag.agent.agent import KnowledgeAgent
    from kgrag.eval.datasets import load_dataset
    from kgrag.eval.retrieval import corpus_documents

    data = load_dataset(MUSIQUE_QUESTIONS, grown_corpus(LARGE), None)
    documents = corpus_documents(data)  # URIs name the largest corpus: the same in both stores
    shutil.rmtree(STORES, ignore_errors=True)
    (STORES / f"s{LARGE}").mkdir(parents=True)
    done = 0
    for size in (SMALL, LARGE):
        with KnowledgeAgent.open(_settings(LARGE)) as agent:
            report = agent.ingestor().ingest_documents(documents[done:size])
            if report.failed:
                raise SystemExit(f"{report.failed} passages failed to ingest")
            log.info("%d -> %d passages in %.0f s", done, size, report.seconds)
            store: Any = agent.store  # the embedded store (FalkorStore.snapshot)
            store.snapshot()
        done = size
        if size == SMALL:
            shutil.copytree(STORES / f"s{LARGE}", STORES / f"s{SMALL}")


@contextmanager
def open_agent(size: int) -> Iterator[Any]:
    """An agent on the cached store of ``size`` passages, once its vector index answers (an
    embedded store opened from its files rebuilds the index first: a search meanwhile fails)."""
    from kgrag.agent.agent import KnowledgeAgent

    with KnowledgeAgent.open(_settings(size)) as agent:
        probe = {"vector": [0.05] * 384, "k": 1, "principals": [], "admin": True}
        for _ in range(600):
            try:
                agent.store.read("vector_chunks", probe)
                break
            except Exception:  # the index is still being built
                time.sleep(0.5)
        yield agent


# -------------------------------------------------------------------------------- attribution
@dataclass(frozen=True)
class Run:
    """One question's rankings (distinct titles, best first) on one store."""

    gold: tuple[str, ...]
    first_search: tuple[str, ...]
    evidence: tuple[str, ...]


def collect(agent: Any, data: Any) -> list[Run]:
    from kgrag.agent.loop import final_evidence
    from kgrag.core import OPERATOR
    from kgrag.eval.metrics import distinct_titles
    from kgrag.executor.base import ExecutionEnv
    from kgrag.executor.scheduler import Executor

    env = ExecutionEnv(store=agent.store, text_embedder=agent.text_embedder, access=OPERATOR)
    runs = []
    for q in data.questions:
        plan, _ = agent.plan(q.question)
        outcomes = Executor(env).run(plan)
        first = next(s for s in plan.plan if s.type == "vector_search")
        text, _ = final_evidence(plan, outcomes)
        runs.append(
            Run(
                gold=q.gold_titles,
                first_search=tuple(
                    distinct_titles([h.title for h in outcomes[first.step_id].result])
                ),
                evidence=tuple(distinct_titles([h.title for h in text])),
            )
        )
    return runs


def attribute(small: Sequence[Run], large: Sequence[Run], musique: set[str]) -> dict[str, Any]:
    """Where the gold passages kgrag loses from its top 5 come from and go."""
    lost: list[dict[str, Any]] = []
    gained = 0
    for n, (a, b) in enumerate(zip(small, large, strict=True)):
        for g in a.gold:
            if g in b.evidence[:5] and g not in a.evidence[:5]:
                gained += 1
            if g not in a.evidence[:5] or g in b.evidence[:5]:
                continue
            lost.append(
                {
                    "question": n,
                    "fold": n % FOLDS + 1,
                    "passage": g,
                    "at_1890_from": "first search" if g in a.first_search else "bridge hop only",
                    "at_8008_rank": b.evidence.index(g) + 1 if g in b.evidence else None,
                    "at_8008_in_first_search": g in b.first_search,
                    "distractors_above": sum(
                        1
                        for t in b.evidence[: b.evidence.index(g) if g in b.evidence else 5]
                        if t not in musique
                    ),
                }
            )

    def slots(runs: Sequence[Run], which: Callable[[Run], Sequence[str]]) -> int:
        return sum(1 for r in runs for t in which(r)[:5] if t not in musique)

    def gold_top5(runs: Sequence[Run], which: Callable[[Run], Sequence[str]]) -> int:
        return sum(1 for r in runs for g in r.gold if g in which(r)[:5])

    def evidence(r: Run) -> Sequence[str]:
        return r.evidence

    def first(r: Run) -> Sequence[str]:
        return r.first_search

    return {
        "gold_passages": sum(len(r.gold) for r in small),
        "gold_in_top5": {
            "kgrag": {SMALL: gold_top5(small, evidence), LARGE: gold_top5(large, evidence)},
            "dense": {SMALL: gold_top5(small, first), LARGE: gold_top5(large, first)},
        },
        "distractor_places_in_top5_at_8008": {
            "kgrag": slots(large, evidence),
            "dense": slots(large, first),
            "of": 5 * len(large),
        },
        "second_seed_is_a_distractor_at_8008": sum(
            1 for r in large if len(r.first_search) > 1 and r.first_search[1] not in musique
        ),
        "kgrag_lost_from_top5": lost,
        "kgrag_gained_in_top5": gained,
    }


# ----------------------------------------------------------------------------------- variants
def plain_bridge_hops(step: Any, query: str, inputs: Mapping[int, Any], rec: Any) -> list[Any]:
    """``kgrag.executor.handlers._bridge_hops`` for a two-passage chain (the rule plan's) as it
    was before 2026-11-27: every passage a search for "question + bridge" finds counts, at its
    own similarity (no check that it names the bridge, no chain score)."""
    from kgrag.core import Hit
    from kgrag.executor import handlers

    p = step.parameters
    seeds = handlers._dedupe(
        h for s in p.seeds_from if inputs[s].query for h in inputs[s].result if h.kind == "chunk"
    )
    frontier = seeds[: handlers.BRIDGE_SEED_CHUNKS]
    rows = rec.read(
        "bridge_entities",
        {"ids": [h.id for h in frontier], "question": query, "k": handlers.MAX_BRIDGES},
    )
    bridges = rows[: handlers.MAX_BRIDGES]
    if not bridges:
        return []
    vectors = rec.env.text_embedder.embed([f"{query} {r['name']}" for r in bridges])
    found: dict[str, Hit] = {}
    for vector in vectors:
        for row in handlers.read_nearest(rec, "vector_chunks", vector, p.k):
            hit = Hit.from_row(row, None, step.step_id)
            if hit.id not in found or hit.score > found[hit.id].score:
                found[hit.id] = hit
    return sorted(found.values(), key=lambda h: -h.score)[: p.k]


@contextmanager
def variant(name: str) -> Iterator[None]:
    """The executor and planner as the variant ``name`` wants them, restored after."""
    import kgrag.agent.agent as agent_module
    from kgrag.executor import handlers
    from kgrag.planner.rule import rule_plan

    saved = (handlers.BRIDGE_SEED_CHUNKS, handlers._bridge_hops, agent_module.rule_plan)
    try:
        if name.startswith("bridge seed chunks "):
            handlers.BRIDGE_SEED_CHUNKS = int(name.rsplit(" ", 1)[1])
        elif name == "hops 3":
            agent_module.rule_plan = functools.partial(rule_plan, hops=3)
        elif name == "before 2026-11-27":
            handlers._bridge_hops = plain_bridge_hops
        elif name != "today":
            raise ValueError(name)
        yield
    finally:
        handlers.BRIDGE_SEED_CHUNKS, handlers._bridge_hops, agent_module.rule_plan = saved


VARIANTS = (
    "today",
    "bridge seed chunks 1",
    "bridge seed chunks 3",
    "hops 3",
    "before 2026-11-27",
)


def fold_recall(results: Sequence[Any], which: str, folds: Sequence[int]) -> dict[str, float]:
    from kgrag.eval.metrics import recall_at_k

    chosen = [r for n, r in enumerate(results) if n % FOLDS in folds]
    return {
        f"recall@{k}": round(
            100 * sum(recall_at_k(getattr(r, which), r.gold, k) for r in chosen) / len(chosen), 1
        )
        for k in KS
    }


def choose(
    scored: Mapping[str, Mapping[int, Sequence[Any]]], train: Sequence[int]
) -> dict[str, Any]:
    """The variant with the best recall@2 + recall@5 at 8,008 on the ``train`` folds (ties:
    today's), reported on the others, at both sizes."""
    test = [f for f in range(FOLDS) if f not in train]

    def merit(name: str) -> float:
        r = fold_recall(scored[name][LARGE], "kgrag", train)
        return r["recall@2"] + r["recall@5"]

    best = max(VARIANTS, key=lambda v: (merit(v), v == "today"))
    return {
        "train_folds": [f + 1 for f in train],
        "test_folds": [f + 1 for f in test],
        "chosen": best,
        "held_out": {
            str(size): {
                "chosen": fold_recall(scored[best][size], "kgrag", test),
                "today": fold_recall(scored["today"][size], "kgrag", test),
                "dense": fold_recall(scored["today"][size], "dense", test),
            }
            for size in (SMALL, LARGE)
        },
    }


# -------------------------------------------------------------------------------------- main
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rebuild", action="store_true", help="ingest the two stores again")
    parser.add_argument("--questions", type=int, default=None, help="first N questions only")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    quiet_models()
    from kgrag.eval.datasets import load_dataset
    from kgrag.eval.retrieval import score_retrieval
    from kgrag.ingest.pipeline import IngestReport

    if args.rebuild or not all((STORES / f"s{s}" / "kg.db").exists() for s in (SMALL, LARGE)):
        build_stores()
    data = load_dataset(MUSIQUE_QUESTIONS, grown_corpus(LARGE), args.questions)
    musique = {p["title"] for p in load_corpus()}
    runs: dict[int, list[Run]] = {}
    scored: dict[str, dict[int, Sequence[Any]]] = {v: {} for v in VARIANTS}
    everything: dict[str, dict[str, Any]] = {v: {} for v in VARIANTS}
    for size in (SMALL, LARGE):
        view = data.model_copy(update={"passages": data.passages[:size]})
        with open_agent(size) as agent:
            runs[size] = collect(agent, view)
            for name in VARIANTS:
                with variant(name):
                    report = score_retrieval(view, agent, IngestReport())
                scored[name][size] = report.per_question
                everything[name][str(size)] = {
                    "kgrag": report.kgrag.model_dump(by_alias=True),
                    "dense": report.dense.model_dump(by_alias=True),
                    "kgrag_by_fold": [
                        fold_recall(report.per_question, "kgrag", [f]) for f in range(FOLDS)
                    ],
                    "dense_by_fold": [
                        fold_recall(report.per_question, "dense", [f]) for f in range(FOLDS)
                    ],
                }
                log.info("%s @ %d: kgrag %s", name, size, report.kgrag)
    rotations = [choose(scored, [(r + i) % FOLDS for i in range(3)]) for r in range(FOLDS)]
    payload = {
        "questions": len(data.questions),
        "sizes": [SMALL, LARGE],
        "fold_of_question": "question i (0-based, file order) is in fold i mod 5 + 1",
        "attribution": attribute(runs[SMALL], runs[LARGE], musique),
        "variants": everything,
        "primary": rotations[0],
        "rotations": rotations,
    }
    path = write_result(
        "growth_diagnosis" if args.questions is None else "growth_diagnosis_try", payload
    )
    print(json.dumps({k: payload[k] for k in ("primary",)}, indent=1))
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
