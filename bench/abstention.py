"""Fit the abstention model on folds of the dev questions and report it on the held-out fold.

Reads ``bench/results/answers.json`` (``kgrag eval answers --json``: for every dev question, the
support test's features when asked as it is, *answerable*, and when asked by a reader who cannot
read its supporting passages, *unanswerable*; plus out-of-domain questions) and writes
``bench/results/abstention.json``.

The model is kgrag.agent.support's: a logistic regression (L2 = :data:`L2`, Newton's method)
over its evidence features (:data:`kgrag.agent.support.MODEL_FEATURES`) predicting "answerable",
and a probability threshold below which the agent abstains. Folds: question ``n`` (dataset order)
is in fold ``n % FOLDS``; both settings of a question are in the same fold. For each fold, the
weights and the threshold are chosen on the other four folds and the rates are measured on it:
the threshold is the highest whose false abstention on the training folds is at most
``MAX_FALSE_ABSTENTION`` (``constrained``, what kgrag ships), or the one with the highest
difference of the two rates (``youden``, reported beside it). ``shipped_fit`` is the same
procedure on all the questions: the constants kgrag.agent.support carries. A question that names
nothing (or heard from a recording) is judged by kgrag's fixed rule instead (half of its terms
in the evidence, ``NAMELESS_THRESHOLD``): it is left out of the fits and counted in every rate
as that rule decides it, so its probability here is 1 (answered) or 0 (abstained).

What kgrag decides by, the subject model (``subject_model_folds``): a logistic regression over
``evidence_score`` and ``subject_phrases`` fitted on four folds (their named questions), then
the pair (probability threshold, ``evidence_score`` floor in 0, 0.05, ..., 1) with the most
abstention on those folds' unanswerable questions and at most ``MAX_FALSE_ABSTENTION`` false
abstention there, reported on the fifth; ``subject_model_fit`` is that procedure on all the
questions (the constants kgrag.agent.support carries: SUBJECT_MODEL, SUBJECT_PROBABILITY,
SUPPORT_THRESHOLD). The previous rule (``evidence_score >= a`` and ``subject_phrases >= b``) is
chosen the same way (``rule_folds``): for each fold, the pair of thresholds (each in 0, 0.05,
..., 1) with the most abstention on the training folds' unanswerable questions and at most
``MAX_FALSE_ABSTENTION`` false abstention there (ties: less false abstention, then lower
thresholds), reported on the held-out fold; ``rule_fit`` is that choice on all the questions.
``score_only_folds`` is the same procedure for ``evidence_score`` alone (the rule before
``subject_phrases``), for comparison.

The chain rule (``chain_rule_folds``) adds kgrag.agent.chains' ``chain_terms`` (the question's
terms held by the best chain of evidence sentences linked to its subject) to the rule, its three
thresholds chosen by the same procedure on the same folds; ``chain_model_folds`` adds
``subject_phrases`` and ``chain_terms`` to the model's features. Both are reported beside what
kgrag ships, with each rule's held-out false abstention split by retrieval.

The nameless rule's threshold chosen on folds (``nameless_folds``, reported, not shipped): the
subject model's procedure with the nameless rule's threshold chosen on the same four folds
(``choose_nameless``: the highest cut, a midpoint between observed ``evidence_terms`` of
nameless questions, that abstains on none of the training folds' nameless answerable
questions) instead of the fixed ``NAMELESS_THRESHOLD``; ``fit_on_all`` is that choice on all the
questions. With two nameless dev questions, a fold's training folds hold one or both.

The namesake gate (kgrag.agent.namesakes, ``namesake_gate``): the subject model's held-out
figures with the gate as the agent decides and with every row read as if it had not fired, the
model's constants chosen on four folds either way; the gate has no constant of its own.

    python bench/abstention.py [answers.json]
"""

from __future__ import annotations

import itertools
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from common import RESULTS

from kgrag.agent.support import (
    MODEL_FEATURES,
    NAMELESS_THRESHOLD,
    SUBJECT_MODEL,
    SUBJECT_PROBABILITY,
    SUPPORT_MODEL,
    SUPPORT_PROBABILITY,
    SUPPORT_THRESHOLD,
)

FOLDS = 5
MAX_FALSE_ABSTENTION = 0.05


def budget(fixed: np.ndarray, y: np.ndarray) -> float:
    """The false abstention a choice may make on these rows: ``MAX_FALSE_ABSTENTION``, or what
    the decisions outside the models (``fixed``: the gates, the nameless rule) already make on
    the answerable rows when that is more (the models can only add to it)."""
    answerable = fixed[y == 1]
    already = float(np.mean(answerable == 0.0)) if len(answerable) else 0.0
    return max(MAX_FALSE_ABSTENTION, already)


GOAL_ABSTENTION = 0.9
#: The logistic regression's L2 penalty (on the weights, not the intercept): a round value, not
#: tuned; the features are shares in [0, 1].
L2 = 1.0
CRITERIA = ("constrained", "youden")

Row = dict[str, Any]


#: The model's features with the rule's ``subject_phrases`` and the chain's ``chain_terms`` added
#: (kgrag.agent.chains), fitted and reported the same way beside it.
CHAIN_MODEL_FEATURES = (*MODEL_FEATURES, "subject_phrases", "chain_terms")


def features(row: Row, names: Sequence[str] = MODEL_FEATURES) -> list[float]:
    support = row["support"] or {}
    return [float(support.get(name, 0.0)) for name in names]


def nameless(row: Row) -> bool:
    return not (row["support"] or {}).get("named", True)


def fixed_rule(row: Row) -> float:
    """A nameless question's decision as kgrag's fixed rule makes it: 1 answered, 0 abstained."""
    return float(float((row["support"] or {}).get("evidence_terms", 0.0)) >= NAMELESS_THRESHOLD)


def quoted(row: Row) -> bool:
    """Do the quoted-names gate (kgrag.agent.support: the cited passages name what the
    question names, or a thing a passage naming it mentions) and the names-alone gate
    (kgrag.agent.relation: the evidence holds a word the question asks with besides the one
    thing it names, ``beyond_names``), the namesake gate, the table-row gate
    (kgrag.agent.rows, ``rows_relate``), the quantity gate (kgrag.agent.quantity,
    ``quantity_quoted``) and the who gate (kgrag.agent.someone, ``someone_quoted``) let the
    answer through? Read from ``quoted_names``; an
    older answers.json without it, from ``names`` (the gate before bridges: the cited passages
    hold one of the question's names)."""
    support = row["support"] or {}
    if not support.get("beyond_names", True):  # the evidence holds the name alone
        return False
    if support.get("namesake", False):  # a quote is about a namesake (kgrag.agent.namesakes)
        return False
    if not support.get("rows_relate", True):  # quoted rows only name it (kgrag.agent.rows)
        return False
    if not support.get("quantity_quoted", True):  # no quote states the quantity it asks for
        return False
    if not support.get("someone_quoted", True):  # no quote names anyone, for "who ...?"
        return False
    if "quoted_names" in support:
        return bool(support["quoted_names"])
    return float(support.get("names", 0.0)) > 0.0


def outside(row: Row) -> float:
    """The decision made outside the fitted models, NaN where they decide: a question with no
    support test (a document tool answered, or nothing was retrieved) as it went; a nameless
    question by the fixed rule; a named one the quoted-names or the names-alone gate stops,
    abstained (whatever the models say: the gates run after them in kgrag.agent.support)."""
    if not row["support"]:
        return 0.0 if row["abstained"] else 1.0
    if nameless(row):
        return fixed_rule(row)
    return np.nan if quoted(row) else 0.0


#: The rule's features (kgrag.agent.support) and the thresholds tried for each.
RULE_FEATURES = ("evidence_score", "subject_phrases")
#: The chain rule's features: the rule's, and the best evidence chain's share of the question's
#: terms (kgrag.agent.chains), chosen the same way.
CHAIN_RULE_FEATURES = (*RULE_FEATURES, "chain_terms")
GRID = tuple(round(0.05 * i, 2) for i in range(21))


def rule_decisions(
    rows: Sequence[Row], thresholds: Sequence[float], names: Sequence[str] = RULE_FEATURES
) -> np.ndarray:
    """1 answered, 0 abstained, for each row, by the rule with these thresholds (one per
    feature of ``names``, in order); a nameless question by the fixed rule."""
    values = np.array(
        [[float((r["support"] or {}).get(n, 0.0)) for n in names[: len(thresholds)]] for r in rows]
    ).reshape(len(rows), len(thresholds))
    fixed = np.array([outside(r) for r in rows])
    named = np.all(values >= np.asarray(thresholds, dtype=float), axis=1).astype(float)
    return np.where(np.isnan(fixed), named, fixed)


def choose_rule(
    rows: Sequence[Row], y: np.ndarray, features: int, names: Sequence[str] = RULE_FEATURES
) -> tuple[float, ...]:
    """The thresholds with the most abstention on unanswerable ``rows`` and at most
    ``MAX_FALSE_ABSTENTION`` false abstention (ties: less false abstention, lower thresholds)."""
    names = names[:features]
    values = np.array(
        [[float((r["support"] or {}).get(n, 0.0)) for n in names] for r in rows]
    ).reshape(len(rows), features)
    fixed = np.array([outside(r) for r in rows])
    allowed = budget(fixed, y)
    best: tuple[tuple[float, ...], tuple[float, ...]] | None = None
    for thresholds in itertools.product(GRID, repeat=features):
        named = np.all(values >= np.asarray(thresholds), axis=1).astype(float)
        u, a = rates(np.where(np.isnan(fixed), named, fixed), y, 0.5)
        if a > allowed:
            continue
        key = (u, -a, -sum(thresholds))
        if best is None or key > best[0]:
            best = (key, thresholds)
    assert best is not None  # all thresholds 0 abstain on nothing named
    return best[1]


def rule_cross_validation(
    rows: Sequence[Row],
    y: np.ndarray,
    folds: np.ndarray,
    features: int,
    names: Sequence[str] = RULE_FEATURES,
) -> list[Row]:
    out = []
    for k in range(FOLDS):
        train = [r for r, f in zip(rows, folds, strict=True) if f != k]
        held = [r for r, f in zip(rows, folds, strict=True) if f == k]
        thresholds = choose_rule(train, y[folds != k], features, names)
        tu, ta = rates(rule_decisions(train, thresholds, names), y[folds != k], 0.5)
        hu, ha = rates(rule_decisions(held, thresholds, names), y[folds == k], 0.5)
        out.append(
            {
                "fold": k,
                "thresholds": dict(zip(names, thresholds, strict=False)),
                "train": {
                    "unanswerable_abstention": round(tu, 4),
                    "false_abstention": round(ta, 4),
                },
                "held_out": {
                    "questions": int(np.sum((folds == k) & (y == 1))),
                    "unanswerable_abstention": round(hu, 4),
                    "false_abstention": round(ha, 4),
                },
            }
        )
    return out


def rule_by_retrieval(
    rows: Sequence[Row], folds: np.ndarray, cv: Sequence[Row], names: Sequence[str]
) -> Row:
    """False abstention of a rule on the held-out folds (each with its fold's thresholds),
    split by whether retrieval put every supporting passage in the best 5."""
    out: Row = {}
    for name, complete in (("all_supporting_retrieved", True), ("a_supporting_missed", False)):
        picked = [
            i
            for i, r in enumerate(rows)
            if r["setting"] == "answerable" and ((r.get("recall_at_5") or 0.0) >= 1.0) == complete
        ]
        abstained = sum(
            rule_decisions([rows[i]], tuple(cv[folds[i]]["thresholds"].values()), names)[0] < 0.5
            for i in picked
        )
        out[name] = {
            "questions": len(picked),
            "false_abstention": round(abstained / len(picked), 4) if picked else None,
        }
    return out


def fit(x: np.ndarray, y: np.ndarray, l2: float = L2) -> np.ndarray:
    """Weights then intercept of the L2-penalised logistic regression of ``y`` on ``x``."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(xb.shape[1])
    penalty = np.eye(xb.shape[1]) * l2
    penalty[-1, -1] = 0.0
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(xb @ w)))
        grad = xb.T @ (p - y) + penalty @ w
        hess = xb.T @ (xb * (p * (1 - p))[:, None]) + penalty + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w -= step
        if float(np.abs(step).max()) < 1e-10:
            break
    return w


def prob(w: Sequence[float], x: np.ndarray, fixed: np.ndarray | None = None) -> np.ndarray:
    """The model's probabilities; where ``fixed`` is not NaN (a nameless question), its value."""
    w = np.asarray(w, dtype=float)
    p = np.asarray(1.0 / (1.0 + np.exp(-(x @ w[:-1] + w[-1]))))
    return p if fixed is None else np.where(np.isnan(fixed), p, fixed)


def rates(p: np.ndarray, y: np.ndarray, t: float) -> tuple[float, float]:
    """(abstention on unanswerable, false abstention on answerable) abstaining when p < t."""
    return float(np.mean(p[y == 0] < t)), float(np.mean(p[y == 1] < t))


def threshold(p: np.ndarray, y: np.ndarray, criterion: str, allowed: float) -> float:
    """The abstention threshold the criterion prefers on these probabilities (a midpoint
    between two observed probabilities, so a question exactly on it is not the one deciding)."""
    values = np.unique(p)
    cuts = [0.0, *((values[:-1] + values[1:]) / 2).tolist(), 1.0]
    scored = [(t, *rates(p, y, t)) for t in cuts]
    if criterion == "constrained":
        feasible = [t for t, _, a in scored if a <= allowed]
        return max(feasible)
    return max(scored, key=lambda s: (s[1] - s[2], -s[0]))[0]


def cross_validate(
    x: np.ndarray, y: np.ndarray, fixed: np.ndarray, folds: np.ndarray, criterion: str
) -> list[Row]:
    out = []
    named = np.isnan(fixed)
    for k in range(FOLDS):
        train, held = folds != k, folds == k
        w = fit(x[train & named], y[train & named])
        p_train = prob(w, x[train], fixed[train])
        t = threshold(p_train, y[train], criterion, budget(fixed[train], y[train]))
        tu, ta = rates(p_train, y[train], t)
        hu, ha = rates(prob(w, x[held], fixed[held]), y[held], t)
        out.append(_fold_row(k, w, t, (tu, ta), (hu, ha), int(np.sum(held & (y == 1)))))
    return out


def _fold_row(
    fold: int,
    w: Sequence[float],
    t: float,
    train: tuple[float, float],
    held_out: tuple[float, float],
    held_questions: int,
    **extra: float,
) -> Row:
    """One fold of a cross-validation: its fitted constants, and the (abstention on
    unanswerable, false abstention) rates on its training folds and on itself."""
    return {
        "fold": fold,
        "weights": [round(float(v), 4) for v in w],
        "threshold": round(t, 4),
        **extra,
        "train": {
            "unanswerable_abstention": round(train[0], 4),
            "false_abstention": round(train[1], 4),
        },
        "held_out": {
            "questions": held_questions,
            "unanswerable_abstention": round(held_out[0], 4),
            "false_abstention": round(held_out[1], 4),
        },
    }


#: The subject model's features (kgrag.agent.support.SUBJECT_MODEL): the rule's two.
SUBJECT_FEATURES = ("evidence_score", "subject_phrases")
#: The subject model with the plan's own dense search scores (kgrag.agent.dense) added: the
#: nearest passage's similarity, and its margin over the others; fitted and chosen the same way.
DENSE_VARIANTS = {
    "dense_top": (*SUBJECT_FEATURES, "dense_top"),
    "dense_margin": (*SUBJECT_FEATURES, "dense_margin"),
    "dense_both": (*SUBJECT_FEATURES, "dense_top", "dense_margin"),
}


def choose_subject(
    w: Sequence[float], x: np.ndarray, y: np.ndarray, fixed: np.ndarray
) -> tuple[float, float]:
    """(probability threshold, ``evidence_score`` floor) of the subject model with weights
    ``w``: the pair with the most abstention on unanswerable questions and at most
    :func:`budget` false abstention, every decision as :func:`subject_decisions` makes it
    (ties: less false abstention, lower floor, lower threshold); the thresholds are midpoints
    between the probabilities of the rows the model decides, the floors those of :data:`GRID`."""
    allowed = budget(fixed, y)
    values = np.unique(np.round(prob(w, x[np.isnan(fixed)]), 6))
    cuts = [0.0, *((values[:-1] + values[1:]) / 2).tolist()]
    best: tuple[tuple[float, ...], tuple[float, float]] | None = None
    for floor in GRID:
        for t in cuts:
            u, a = rates(subject_decisions(w, t, floor, x, fixed), y, 0.5)
            if a > allowed:
                continue
            key = (u, -a, -floor, -t)
            if best is None or key > best[0]:
                best = (key, (t, floor))
    assert best is not None  # threshold and floor 0 abstain on nothing the model decides
    return best[1]


def subject_decisions(
    w: Sequence[float], t: float, floor: float, x: np.ndarray, fixed: np.ndarray
) -> np.ndarray:
    """1 answered, 0 abstained: ``p >= t`` and ``evidence_score >= floor`` (``x``'s first
    column); a nameless question by the fixed rule."""
    p = prob(w, x)
    named = ((p >= t) & (x[:, 0] >= floor)).astype(float)
    return np.where(np.isnan(fixed), named, fixed)


def nameless_terms(rows: Sequence[Row]) -> np.ndarray:
    """``evidence_terms`` of each nameless question the rule decides (it had a support test),
    NaN for every other row."""
    return np.array(
        [
            float((r["support"] or {}).get("evidence_terms", 0.0))
            if r["support"] and nameless(r)
            else np.nan
            for r in rows
        ]
    )


def choose_nameless(terms: np.ndarray, y: np.ndarray) -> float:
    """The nameless rule's threshold on these rows (``terms``: :func:`nameless_terms`), chosen
    as the models' threshold is (:func:`threshold`, ``constrained``): the highest cut (0, a
    midpoint between two observed ``evidence_terms`` of nameless questions, or 1) whose false
    abstention on the nameless answerable questions is at most ``MAX_FALSE_ABSTENTION``: with
    a handful of such questions, none of them abstained. ``NAMELESS_THRESHOLD`` when these rows
    hold no nameless answerable question."""
    picked = ~np.isnan(terms)
    if not np.any(picked & (y == 1)):
        return NAMELESS_THRESHOLD
    return round(threshold(terms[picked], y[picked], "constrained", MAX_FALSE_ABSTENTION), 4)


def with_nameless(fixed: np.ndarray, terms: np.ndarray, t: float) -> np.ndarray:
    """``fixed`` with each nameless question decided by the threshold ``t`` instead of
    ``NAMELESS_THRESHOLD``."""
    out = fixed.copy()
    picked = ~np.isnan(terms)
    out[picked] = (terms[picked] >= t).astype(float)
    return out


def subject_cross_validation(
    x: np.ndarray,
    y: np.ndarray,
    fixed: np.ndarray,
    folds: np.ndarray,
    terms: np.ndarray | None = None,
) -> list[Row]:
    """The subject model fitted on four folds (weights, then threshold and floor), reported on
    the fifth; with ``terms`` (:func:`nameless_terms`), the nameless rule's threshold is chosen
    on the four folds too (:func:`choose_nameless`), else it is ``NAMELESS_THRESHOLD``."""
    out = []
    named = np.isnan(fixed)
    for k in range(FOLDS):
        train, held = folds != k, folds == k
        t_nameless = NAMELESS_THRESHOLD
        decided = fixed
        if terms is not None:
            t_nameless = choose_nameless(terms[train], y[train])
            decided = with_nameless(fixed, terms, t_nameless)
        w = fit(x[train & named], y[train & named])
        t, floor = choose_subject(w, x[train], y[train], decided[train])
        tu, ta = rates(subject_decisions(w, t, floor, x[train], decided[train]), y[train], 0.5)
        hu, ha = rates(subject_decisions(w, t, floor, x[held], decided[held]), y[held], 0.5)
        out.append(
            _fold_row(
                k,
                w,
                t,
                (tu, ta),
                (hu, ha),
                int(np.sum(held & (y == 1))),
                evidence_score_floor=floor,
                nameless_threshold=t_nameless,
            )
        )
    return out


def subject_by_retrieval(
    rows: Sequence[Row],
    x: np.ndarray,
    fixed: np.ndarray,
    folds: np.ndarray,
    cv: Sequence[Row],
    terms: np.ndarray | None = None,
) -> Row:
    """False abstention of the subject model on the held-out folds (each with its fold's
    constants, its nameless threshold with ``terms``), split by whether retrieval put every
    supporting passage in the best 5."""
    out: Row = {}
    for name, complete in (("all_supporting_retrieved", True), ("a_supporting_missed", False)):
        picked = [
            i
            for i, r in enumerate(rows)
            if r["setting"] == "answerable" and ((r.get("recall_at_5") or 0.0) >= 1.0) == complete
        ]
        abstained = 0
        for i in picked:
            f = cv[folds[i]]
            decided = fixed[i : i + 1]
            if terms is not None:
                decided = with_nameless(decided, terms[i : i + 1], f["nameless_threshold"])
            d = subject_decisions(
                f["weights"],
                f["threshold"],
                f["evidence_score_floor"],
                x[i : i + 1],
                decided,
            )
            abstained += int(d[0] < 0.5)
        out[name] = {
            "questions": len(picked),
            "false_abstention": round(abstained / len(picked), 4) if picked else None,
        }
    return out


def namesake_gate(rows: Sequence[Row], y: np.ndarray, folds: np.ndarray) -> Row:
    """The subject model's held-out figures with and without the namesake gate
    (kgrag.agent.namesakes, ``namesake``: a quoted passage names another thing with a word of
    the question's name phrase): without it, every row is read as if the gate had not fired
    (what the agent decided before it, the gate being the last test of
    kgrag.agent.support.assess); with it, as the agent decides. The gate has no constant of its
    own: the model's weights, threshold and floor are chosen on four folds either way."""
    out: Row = {}
    for name, gated in (("without", False), ("with", True)):
        read = [r if gated else _without_namesake(r) for r in rows]
        fixed = np.array([outside(r) for r in read])
        x = np.array([features(r, SUBJECT_FEATURES) for r in read], dtype=float)
        cv = subject_cross_validation(x, y, fixed, folds)
        out[name] = {"folds": cv, "held_out_pooled": pooled(cv)}
    out["stopped"] = {
        s: [r["id"] for r in rows if r["setting"] == s and (r["support"] or {}).get("namesake")]
        for s in ("answerable", "unanswerable")
    }
    return out


def _without_namesake(row: Row) -> Row:
    """``row`` as the agent would have decided it without the namesake gate: the other tests
    of its support (kgrag.agent.support.assess) decide, and a gated abstention answers when
    they pass."""
    support = row["support"] or {}
    if not support.get("namesake", False):
        return row
    return {**row, "support": {**support, "namesake": False}}


def pooled(folds: Sequence[Row]) -> dict[str, float]:
    n = sum(x["held_out"]["questions"] for x in folds)
    return {
        key: round(sum(x["held_out"][key] * x["held_out"]["questions"] for x in folds) / n, 4)
        for key in ("unanswerable_abstention", "false_abstention")
    }


def by_retrieval(
    rows: Sequence[Row], x: np.ndarray, fixed: np.ndarray, folds: np.ndarray, cv: Sequence[Row]
) -> Row:
    """False abstention on the held-out folds (each with its fold's model), split by whether
    retrieval put every supporting passage in the best 5 (``recall_at_5`` 1.0)."""
    out: Row = {}
    for name, complete in (("all_supporting_retrieved", True), ("a_supporting_missed", False)):
        picked = [
            i
            for i, r in enumerate(rows)
            if r["setting"] == "answerable" and ((r.get("recall_at_5") or 0.0) >= 1.0) == complete
        ]
        abstained = sum(
            bool(
                prob(cv[folds[i]]["weights"], x[i : i + 1], fixed[i : i + 1])[0]
                < cv[folds[i]]["threshold"]
            )
            for i in picked
        )
        out[name] = {
            "questions": len(picked),
            "false_abstention": round(abstained / len(picked), 4) if picked else None,
        }
    return out


def main(argv: Sequence[str] = ()) -> int:
    source = Path(argv[0]) if argv else RESULTS / "answers.json"
    report = json.loads(source.read_text(encoding="utf-8"))
    every: list[Row] = list(report["per_question"])
    order = {r["id"]: n for n, r in enumerate(x for x in every if x["setting"] == "answerable")}
    rows = [r for r in every if r["setting"] in ("answerable", "unanswerable")]
    ood = [r for r in every if r["setting"] == "out_of_domain"]
    x = np.array([features(r) for r in rows], dtype=float)
    y = np.array([r["setting"] == "answerable" for r in rows], dtype=float)
    fixed = np.array([outside(r) for r in rows])
    folds = np.array([order[r["id"]] % FOLDS for r in rows])
    cv = {c: cross_validate(x, y, fixed, folds, c) for c in CRITERIA}
    x_chain = np.array([features(r, CHAIN_MODEL_FEATURES) for r in rows], dtype=float)
    chain_model_cv = cross_validate(x_chain, y, fixed, folds, "constrained")
    w_all = fit(x[np.isnan(fixed)], y[np.isnan(fixed)])
    t_all = threshold(prob(w_all, x, fixed), y, "constrained", budget(fixed, y))
    x_ood = np.array([features(r) for r in ood], dtype=float).reshape(len(ood), len(MODEL_FEATURES))
    fixed_ood = np.array([outside(r) for r in ood])
    model_p = prob(SUPPORT_MODEL, x, fixed)
    model_ood = prob(SUPPORT_MODEL, x_ood, fixed_ood)
    su, sa = rates(model_p, y, SUPPORT_PROBABILITY)
    rule_cv = rule_cross_validation(rows, y, folds, len(RULE_FEATURES))
    score_cv = rule_cross_validation(rows, y, folds, 1)
    rule_fit = choose_rule(rows, y, len(RULE_FEATURES))
    x_subject = np.array([features(r, SUBJECT_FEATURES) for r in rows], dtype=float)
    subject_cv = subject_cross_validation(x_subject, y, fixed, folds)
    # the nameless rule's threshold chosen on the same folds (reported, not shipped)
    terms = nameless_terms(rows)
    nameless_cv = subject_cross_validation(x_subject, y, fixed, folds, terms)
    nameless_fit = choose_nameless(terms, y)
    named = np.isnan(fixed)
    w_subject = fit(x_subject[named], y[named])
    t_subject, floor_subject = choose_subject(w_subject, x_subject, y, fixed)
    chain_cv = rule_cross_validation(rows, y, folds, len(CHAIN_RULE_FEATURES), CHAIN_RULE_FEATURES)
    chain_fit = choose_rule(rows, y, len(CHAIN_RULE_FEATURES), CHAIN_RULE_FEATURES)
    chain_ood = rule_decisions(ood, chain_fit, CHAIN_RULE_FEATURES) if ood else np.array([])
    rule_ood = rule_decisions(ood, rule_fit) if ood else np.array([])
    rule_u, rule_a = rates(rule_decisions(rows, rule_fit), y, 0.5)
    # what kgrag ships (kgrag.agent.support's constants), on every question
    x_subject_ood = np.array([features(r, SUBJECT_FEATURES) for r in ood], dtype=float).reshape(
        len(ood), len(SUBJECT_FEATURES)
    )
    shipped = (SUBJECT_MODEL, SUBJECT_PROBABILITY, SUPPORT_THRESHOLD)
    ru, ra = rates(subject_decisions(*shipped, x_subject, fixed), y, 0.5)
    shipped_ood = subject_decisions(*shipped, x_subject_ood, fixed_ood) if ood else np.array([])
    # the simulation is the decision: with the shipped constants it must abstain exactly where
    # the agent did (every gate accounted for)
    simulated = subject_decisions(*shipped, x_subject, fixed)
    mismatches = [
        f"{r['setting']} {r['id']}"
        for r, d in zip(rows, simulated, strict=True)
        if bool(d < 0.5) != bool(r["abstained"])
    ]
    variants = {
        name: subject_cross_validation(
            np.array([features(r, names) for r in rows], dtype=float), y, fixed, folds
        )
        for name, names in DENSE_VARIANTS.items()
    }
    out = {
        "features": list(MODEL_FEATURES),
        "l2": L2,
        "nameless_questions": sum(nameless(r) for r in rows) // 2,
        # rows the models do not decide (no support test, a nameless question, the
        # quoted-names gate), by setting
        "decided_outside_the_models": {
            s: int(
                sum(
                    1
                    for r, f in zip(rows, fixed, strict=True)
                    if r["setting"] == s and not np.isnan(f)
                )
            )
            for s in ("answerable", "unanswerable")
        },
        "criterion": "constrained",
        "folds": cv["constrained"],
        "held_out_pooled": pooled(cv["constrained"]),
        "held_out_false_abstention_by_retrieval": by_retrieval(
            rows, x, fixed, folds, cv["constrained"]
        ),
        "youden_folds": cv["youden"],
        "youden_held_out_pooled": pooled(cv["youden"]),
        # the same model with subject_phrases and chain_terms added, the same folds
        "chain_model_features": list(CHAIN_MODEL_FEATURES),
        "chain_model_folds": chain_model_cv,
        "chain_model_held_out_pooled": pooled(chain_model_cv),
        "shipped_fit": {
            "weights": [round(float(v), 4) for v in w_all],
            "threshold": round(t_all, 4),
        },
        # the rule kgrag decides by, its thresholds chosen on four folds, reported on the fifth
        "rule_folds": rule_cv,
        "rule_held_out_pooled": pooled(rule_cv),
        "rule_fit": dict(zip(RULE_FEATURES, rule_fit, strict=False)),
        "rule_held_out_false_abstention_by_retrieval": rule_by_retrieval(
            rows, folds, rule_cv, RULE_FEATURES
        ),
        "rule_in_sample": {
            "unanswerable_abstention": round(rule_u, 4),
            "false_abstention": round(rule_a, 4),
            "out_of_domain_abstention": round(float(np.mean(rule_ood < 0.5)) if ood else 0.0, 4),
        },
        # the subject model kgrag decides by: a logistic regression over the rule's two
        # features, its threshold and an evidence_score floor chosen on four folds
        "subject_model_features": list(SUBJECT_FEATURES),
        "subject_model_folds": subject_cv,
        "subject_model_held_out_pooled": pooled(subject_cv),
        "subject_model_held_out_false_abstention_by_retrieval": subject_by_retrieval(
            rows, x_subject, fixed, folds, subject_cv
        ),
        "subject_model_fit": {
            "weights": [round(float(v), 4) for v in w_subject],
            "threshold": round(t_subject, 4),
            "evidence_score_floor": floor_subject,
        },
        # the subject model with the nameless rule's threshold chosen on the same four folds
        # (choose_nameless) instead of NAMELESS_THRESHOLD; reported, not what kgrag ships
        "nameless_folds": {
            "folds": nameless_cv,
            "held_out_pooled": pooled(nameless_cv),
            "held_out_false_abstention_by_retrieval": subject_by_retrieval(
                rows, x_subject, fixed, folds, nameless_cv, terms
            ),
            "fit_on_all": nameless_fit,
        },
        # the chain rule (kgrag.agent.chains' chain_terms added), chosen the same way on the
        # same folds
        "chain_rule_folds": chain_cv,
        "chain_rule_held_out_pooled": pooled(chain_cv),
        "chain_rule_fit": dict(zip(CHAIN_RULE_FEATURES, chain_fit, strict=False)),
        "chain_rule_held_out_false_abstention_by_retrieval": rule_by_retrieval(
            rows, folds, chain_cv, CHAIN_RULE_FEATURES
        ),
        "chain_rule_out_of_domain_abstention": round(
            float(np.mean(chain_ood < 0.5)) if ood else 0.0, 4
        ),
        # the rule before subject_phrases (evidence_score alone), chosen the same way
        "score_only_folds": score_cv,
        "score_only_held_out_pooled": pooled(score_cv),
        # what kgrag.agent.support ships (subject_model_fit when it was last refitted), on every
        # question
        "shipped": {
            "rule": f"evidence_score >= {SUPPORT_THRESHOLD} and p >= {SUBJECT_PROBABILITY} "
            f"(weights {list(SUBJECT_MODEL)} over {', '.join(SUBJECT_FEATURES)})",
            "unanswerable_abstention": round(ru, 4),
            "false_abstention": round(ra, 4),
            "out_of_domain_abstention": round(float(np.mean(shipped_ood < 0.5)) if ood else 0.0, 4),
            "simulation_mismatches": mismatches,
        },
        # the subject model with the plan's own dense search scores added (kgrag.agent.dense),
        # chosen the same way on the same folds
        "dense_variants": {
            name: {
                "features": list(DENSE_VARIANTS[name]),
                "folds": cv_rows,
                "held_out_pooled": pooled(cv_rows),
            }
            for name, cv_rows in variants.items()
        },
        # the namesake gate (kgrag.agent.namesakes): the subject model's held-out figures
        # without and with it
        "namesake_gate": namesake_gate(rows, y, folds),
        # the model (reported beside each answer, not deciding), over every question
        "model": {
            "weights": list(SUPPORT_MODEL),
            "threshold": SUPPORT_PROBABILITY,
            "unanswerable_abstention": round(su, 4),
            "false_abstention": round(sa, 4),
            "out_of_domain_abstention": round(
                float(np.mean(model_ood < SUPPORT_PROBABILITY)) if ood else 0.0, 4
            ),
        },
        "goals": {
            "unanswerable_abstention": GOAL_ABSTENTION,
            "false_abstention": MAX_FALSE_ABSTENTION,
        },
        "source": str(source),
        "measured_at": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
    }
    (RESULTS / "abstention.json").write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    print(
        json.dumps(
            {
                k: out[k]
                for k in (
                    "rule_held_out_pooled",
                    "chain_rule_held_out_pooled",
                    "chain_rule_fit",
                    "chain_model_held_out_pooled",
                    "subject_model_held_out_pooled",
                    "subject_model_fit",
                    "score_only_held_out_pooled",
                    "rule_fit",
                    "shipped",
                    "held_out_pooled",
                )
            }
            | {k: v["held_out_pooled"] for k, v in out["dense_variants"].items()}
            | {"nameless_folds": out["nameless_folds"]["held_out_pooled"]}
            | {
                f"namesake_gate_{k}": out["namesake_gate"][k]["held_out_pooled"]
                for k in ("without", "with")
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
