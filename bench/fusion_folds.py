"""The lexical weight of the rule plan's fusion, chosen on folds and reported on held-out ones.

The 50 MuSiQue dev questions are split into 5 folds (question i in fold i mod 5). Each question
runs once through the agent's rule plan (the real planner, executor and store); its rankings are
kept: the first dense search, the lexical stage (BM25 over full-text candidates) and the dense
evidence (first search and next hops, fused by best similarity). The final ranking is then
re-fused offline for each candidate lexical weight with the executor's own fusion
(kgrag.executor.fusion.fuse, weighted reciprocal rank, k = 60 as published).

The weight is chosen on folds 1-3 (best recall@2 + recall@5, ties to the smaller weight) and
reported on folds 4-5; the same is repeated for the five rotations of the folds (choose on three
consecutive folds, report on the two others) to show how stable the choice is. Writes
bench/results/fusion_folds.json.

    python bench/fusion_folds.py [--store URI]   # default: the store `kgrag eval retrieval` keeps
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import MUSIQUE_CORPUS, MUSIQUE_QUESTIONS, quiet_models, require, write_result

FOLDS = 5
WEIGHTS = (0.0, 0.05, 0.1, 0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0)
KS = (2, 5)


@dataclass(frozen=True)
class Rankings:
    """One question's gold titles and the titles of each ranking, best first."""

    gold: tuple[str, ...]
    dense: tuple[str, ...]
    lists: dict[str, Any]  # step role -> list of Hit (dense evidence, lexical)
    plan_titles: tuple[str, ...]


def collect(store: str | None) -> list[Rankings]:
    from kgrag.agent.loop import final_evidence
    from kgrag.config import Settings
    from kgrag.core import OPERATOR
    from kgrag.eval.retrieval import ingest_corpus, open_eval_agent
    from kgrag.executor.base import ExecutionEnv
    from kgrag.executor.scheduler import Executor

    out: list[Rankings] = []
    with open_eval_agent(MUSIQUE_QUESTIONS, MUSIQUE_CORPUS, Settings(), store=store) as (
        agent,
        data,
    ):
        ingest_corpus(agent, data)
        env = ExecutionEnv(
            store=agent.store,
            text_embedder=agent.text_embedder,
            access=OPERATOR,
            name_seeds=agent.name_seeds,
        )
        for q in data.questions:
            plan, _ = agent.plan(q.question)
            outcomes = Executor(env).run(plan)
            roles: dict[str, Any] = {}
            for step in plan.plan:
                p: Any = step.parameters
                if step.type == "vector_search" and "vector" not in roles:
                    roles["vector"] = outcomes[step.step_id].result
                elif step.type == "graph_query" and p.template == "chunks_fulltext":
                    roles["lexical"] = outcomes[step.step_id].result
                elif step.type == "multi_hop":
                    roles["hop"] = outcomes[step.step_id].result
                elif step.type == "aggregate" and p.method == "max":
                    roles["dense_hops"] = outcomes[step.step_id].result
            missing = {"vector", "lexical", "dense_hops"} - set(roles)
            if missing:
                raise SystemExit(f"the rule plan has no {sorted(missing)} step: {plan.to_json()}")
            text, _ = final_evidence(plan, outcomes)
            out.append(
                Rankings(
                    gold=q.gold_titles,
                    dense=_titles(roles["vector"]),
                    lists=roles,
                    plan_titles=_titles(text),
                )
            )
    return out


def _titles(hits: Sequence[Any]) -> tuple[str, ...]:
    from kgrag.eval.metrics import distinct_titles

    return tuple(distinct_titles([h.title for h in hits]))


def fused_titles(r: Rankings, weight: float) -> tuple[str, ...]:
    from kgrag.executor.fusion import fuse

    hits = fuse([r.lists["dense_hops"], r.lists["lexical"]], weights=[1.0, weight])
    return _titles([h for h, _ in hits])


def recall(rows: Sequence[tuple[tuple[str, ...], tuple[str, ...]]]) -> dict[str, float]:
    """Mean recall@2 and @5 (percent) of (ranked titles, gold titles) pairs."""
    from kgrag.eval.metrics import recall_at_k

    return {
        f"recall@{k}": round(100 * sum(recall_at_k(t, g, k) for t, g in rows) / len(rows), 1)
        for k in KS
    }


def evaluate(rankings: Sequence[Rankings], folds: Sequence[int]) -> dict[str, Any]:
    chosen = [r for i, r in enumerate(rankings) if i % FOLDS in folds]
    by_weight = {w: recall([(fused_titles(r, w), r.gold) for r in chosen]) for w in WEIGHTS}
    return {
        "questions": len(chosen),
        "dense": recall([(r.dense, r.gold) for r in chosen]),
        "plan": recall([(r.plan_titles, r.gold) for r in chosen]),
        "by_lexical_weight": {str(w): v for w, v in by_weight.items()},
    }


def choose(figures: dict[str, Any]) -> float:
    """The weight with the best recall@2 + recall@5 (ties: the smaller weight)."""
    table = figures["by_lexical_weight"]
    return max(WEIGHTS, key=lambda w: (table[str(w)]["recall@2"] + table[str(w)]["recall@5"], -w))


def split(rankings: Sequence[Rankings], train: Sequence[int]) -> dict[str, Any]:
    test = [f for f in range(FOLDS) if f not in train]
    on_train = evaluate(rankings, train)
    weight = choose(on_train)
    on_test = evaluate(rankings, test)
    held = on_test["by_lexical_weight"][str(weight)]
    dense = on_test["dense"]
    return {
        "train_folds": [f + 1 for f in train],
        "test_folds": [f + 1 for f in test],
        "chosen_lexical_weight": weight,
        "train": on_train,
        "held_out": {
            "dense": dense,
            "fused": held,
            "no_lexical": on_test["by_lexical_weight"]["0.0"],
            "ratio_recall@2": round(held["recall@2"] / dense["recall@2"], 3),
            "ratio_recall@5": round(held["recall@5"] / dense["recall@5"], 3),
        },
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", default=None, help="store URI (default: the eval's own)")
    parser.add_argument("--keep", type=Path, default=None, help="pickle the rankings here")
    args = parser.parse_args(argv)
    quiet_models()
    require(MUSIQUE_CORPUS)
    require(MUSIQUE_QUESTIONS)
    rankings = collect(args.store)
    if args.keep:
        import pickle

        args.keep.write_bytes(pickle.dumps(rankings))
    primary = split(rankings, [0, 1, 2])
    rotations = [split(rankings, [(r + i) % FOLDS for i in range(3)]) for r in range(FOLDS)]
    everything = evaluate(rankings, range(FOLDS))
    for s in [primary, *rotations[1:]]:
        h = s["held_out"]
        print(
            f"choose on folds {s['train_folds']}: lexical weight {s['chosen_lexical_weight']}; "
            f"held out {s['test_folds']}: recall@2 {h['fused']['recall@2']} "
            f"(dense {h['dense']['recall@2']}, x{h['ratio_recall@2']}), recall@5 "
            f"{h['fused']['recall@5']} (dense {h['dense']['recall@5']}, x{h['ratio_recall@5']})"
        )
    print(f"all 50: {everything}")
    path = write_result(
        "fusion_folds",
        {
            "questions": len(rankings),
            "folds": FOLDS,
            "fold_of_question": "question i (0-based, file order) is in fold i mod 5 + 1",
            "weights_tried": list(WEIGHTS),
            "rrf_k": 60,
            "primary": primary,
            "rotations": rotations,
            "all_questions": everything,
        },
    )
    print(f"wrote {Path(path)}")


if __name__ == "__main__":
    main()
