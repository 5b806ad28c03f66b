"""Choose the abstention rule on folds of the dev questions and report it on the held-out fold.

Reads ``bench/results/answers.json`` (``kgrag eval answers --json``: for every dev question, the
support test's features when asked as it is, *answerable*, and when asked by a reader who cannot
read its supporting passages, *unanswerable*; plus out-of-domain questions) and writes
``bench/results/abstention.json``.

Folds: question ``n`` (dataset order) is in fold ``n % FOLDS``; both settings of a question are in
the same fold. For each fold, the rule (a feature of kgrag.agent.support and a threshold) is chosen
on the other folds: the highest abstention on unanswerable questions with at most
``MAX_FALSE_ABSTENTION`` false abstention on answerable ones, or, when no threshold meets that,
the highest difference of the two rates (``constrained``); and the highest difference of the
two rates (``youden``, the criterion kgrag's rule is chosen by: no threshold meets both goals).
Its rates on the held-out fold are reported, with the
trade-off curve of every feature over all questions (for reading, not for choosing).

    python bench/abstention.py
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from common import RESULTS

from kgrag.agent.support import NAMELESS_THRESHOLD, SUPPORT_THRESHOLD, question_names

FOLDS = 5
MAX_FALSE_ABSTENTION = 0.05
THRESHOLDS = [round(t * 0.05, 2) for t in range(0, 21)]
#: How the rule is chosen on the training folds (see :func:`choose`): no threshold of any feature
#: meets both goals on these questions, so both error rates weigh the same.
CRITERION = "youden"
FEATURES = ("score", "evidence_score", "names", "evidence_names", "mean")

Row = dict[str, Any]


def feature(row: Row, name: str) -> float:
    s = row["support"] or {}
    if name == "mean":
        return (s.get("score", 0.0) + s.get("evidence_score", 0.0)) / 2
    return float(s.get(name, 0.0))


def abstains(row: Row, name: str, t: float) -> bool:
    """Would the rule ``name >= t`` abstain? A question that names nothing is judged by kgrag's
    fixed NAMELESS_THRESHOLD on its terms, whatever the rule."""
    support = row["support"] or {}
    named = support.get("named", bool(question_names(row["question"])))
    if not named:
        return float(support.get("evidence_terms", 0.0)) < NAMELESS_THRESHOLD
    return feature(row, name) < t


def rates(rows: Sequence[Row], name: str, t: float) -> tuple[float, float]:
    """(abstention on unanswerable, false abstention on answerable) when abstaining below t."""
    una = [r for r in rows if r["setting"] == "unanswerable"]
    ans = [r for r in rows if r["setting"] == "answerable"]
    abstain_u = sum(abstains(r, name, t) for r in una) / max(1, len(una))
    abstain_a = sum(abstains(r, name, t) for r in ans) / max(1, len(ans))
    return abstain_u, abstain_a


def choose(rows: Sequence[Row], criterion: str) -> tuple[str, float]:
    """The (feature, threshold) the criterion prefers on ``rows``: ``youden``, the highest
    abstention on unanswerable less false abstention on answerable (both errors weigh the same);
    ``constrained``, the highest abstention with at most MAX_FALSE_ABSTENTION false abstention
    (youden when no threshold meets it)."""
    scored = [(f, t, *rates(rows, f, t)) for f in FEATURES for t in THRESHOLDS]
    if criterion == "constrained":
        feasible = [(u, -t, f, t) for f, t, u, a in scored if a <= MAX_FALSE_ABSTENTION]
        if feasible and max(feasible)[0] > 0:
            _, _, f, t = max(feasible)
            return f, t
    best = max((u - a, -t, f, t) for f, t, u, a in scored)
    return best[2], best[3]


def cross_validate(folded: Sequence[Row], order: dict[str, int], criterion: str) -> list[Row]:
    folds = []
    for k in range(FOLDS):
        train = [r for r in folded if order[r["id"]] % FOLDS != k]
        held = [r for r in folded if order[r["id"]] % FOLDS == k]
        f, t = choose(train, criterion)
        tu, ta = rates(train, f, t)
        hu, ha = rates(held, f, t)
        folds.append(
            {
                "fold": k,
                "feature": f,
                "threshold": t,
                "train": {
                    "unanswerable_abstention": round(tu, 4),
                    "false_abstention": round(ta, 4),
                },
                "held_out": {
                    "questions": sum(r["setting"] == "answerable" for r in held),
                    "unanswerable_abstention": round(hu, 4),
                    "false_abstention": round(ha, 4),
                },
            }
        )
    return folds


def pooled(folds: Sequence[Row]) -> dict[str, float]:
    n = sum(x["held_out"]["questions"] for x in folds)
    return {
        key: round(sum(x["held_out"][key] * x["held_out"]["questions"] for x in folds) / n, 4)
        for key in ("unanswerable_abstention", "false_abstention")
    }


def by_retrieval(folded: Sequence[Row], order: dict[str, int], folds: Sequence[Row]) -> Row:
    """False abstention on the held-out folds (each with its fold's rule), split by whether
    retrieval put every supporting passage in the best 5 (``recall_at_5`` 1.0): an abstention
    when a supporting passage was not retrieved is a retrieval miss the support test sees."""
    out: Row = {}
    for name, complete in (("all_supporting_retrieved", True), ("a_supporting_missed", False)):
        rows = [
            (r, folds[order[r["id"]] % FOLDS])
            for r in folded
            if r["setting"] == "answerable" and ((r.get("recall_at_5") or 0.0) >= 1.0) == complete
        ]
        abstained = sum(abstains(r, fold["feature"], fold["threshold"]) for r, fold in rows)
        out[name] = {
            "questions": len(rows),
            "false_abstention": round(abstained / len(rows), 4) if rows else None,
        }
    return out


def main() -> int:
    report = json.loads((RESULTS / "answers.json").read_text(encoding="utf-8"))
    rows: list[Row] = list(report["per_question"])
    order = {r["id"]: n for n, r in enumerate(x for x in rows if x["setting"] == "answerable")}
    folded = [r for r in rows if r["setting"] in ("answerable", "unanswerable")]
    ood = [r for r in rows if r["setting"] == "out_of_domain"]
    results = {c: cross_validate(folded, order, c) for c in ("youden", "constrained")}
    folds = results[CRITERION]
    chosen = Counter((x["feature"], x["threshold"]) for x in folds).most_common(1)[0][0]
    ood_rate = sum(abstains(r, *chosen) for r in ood) / max(1, len(ood))
    shipped = rates(folded, "evidence_score", SUPPORT_THRESHOLD)
    curve = {
        f: [
            {
                "threshold": t,
                "unanswerable_abstention": round(u, 4),
                "false_abstention": round(a, 4),
            }
            for t in THRESHOLDS
            for u, a in [rates(folded, f, t)]
        ]
        for f in FEATURES
    }
    out = {
        "criterion": CRITERION,
        "folds": folds,
        "held_out_pooled": pooled(folds),
        "held_out_false_abstention_by_retrieval": by_retrieval(folded, order, folds),
        "constrained_folds": results["constrained"],
        "constrained_held_out_pooled": pooled(results["constrained"]),
        "chosen": {"feature": chosen[0], "threshold": chosen[1]},
        "out_of_domain_abstention_at_chosen": round(ood_rate, 4),
        # the rule kgrag ships (kgrag.agent.support), over every question (not held out)
        "shipped": {
            "feature": "evidence_score",
            "threshold": SUPPORT_THRESHOLD,
            "unanswerable_abstention": round(shipped[0], 4),
            "false_abstention": round(shipped[1], 4),
            "out_of_domain_abstention": round(
                sum(abstains(r, "evidence_score", SUPPORT_THRESHOLD) for r in ood)
                / max(1, len(ood)),
                4,
            ),
        },
        "goals": {"unanswerable_abstention": 0.9, "false_abstention": MAX_FALSE_ABSTENTION},
        "curve": curve,
        "source": "bench/results/answers.json",
        "measured_at": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }
    (RESULTS / "abstention.json").write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(
        json.dumps(
            {k: out[k] for k in ("held_out_pooled", "constrained_held_out_pooled", "chosen")}
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
