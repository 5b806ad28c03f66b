"""bench/abstention.py simulates the agent's whole decision: an answer the quoted-names gate
stops counts as abstained whatever the fitted model says, and the choice of constants may make
no more false abstention than those decisions already make (or 5%)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
abstention = pytest.importorskip("abstention")


def _row(setting: str, score: float, subject: float, **support: object) -> dict[str, object]:
    return {
        "id": f"q{score}{subject}",
        "setting": setting,
        "abstained": False,
        "support": {
            "named": True,
            "names": 1.0,
            "evidence_score": score,
            "subject_phrases": subject,
            **support,
        },
    }


def test_the_quoted_names_gate_decides_outside_the_models() -> None:
    assert math.isnan(abstention.outside(_row("answerable", 0.9, 1.0, quoted_names=True)))
    assert abstention.outside(_row("answerable", 0.9, 1.0, quoted_names=False)) == 0.0
    # an answers.json older than quoted_names: the gate as it was, the cited passages' names
    assert abstention.outside(_row("answerable", 0.9, 1.0, names=0.0)) == 0.0
    assert abstention.outside(_row("answerable", 0.9, 1.0, named=False, evidence_terms=0.6)) == 1.0
    no_test = {"id": "x", "setting": "answerable", "abstained": True, "support": None}
    assert abstention.outside(no_test) == 0.0


def test_a_gated_answer_is_abstained_whatever_the_model_says() -> None:
    rows = [
        _row("answerable", 1.0, 1.0, quoted_names=False),
        _row("answerable", 1.0, 1.0),
        _row("unanswerable", 0.2, 0.0),
    ]
    fixed = np.array([abstention.outside(r) for r in rows])
    x = np.array([abstention.features(r, abstention.SUBJECT_FEATURES) for r in rows])
    decided = abstention.subject_decisions([1.0, 1.0, 0.0], 0.0, 0.0, x, fixed)
    assert decided.tolist() == [0.0, 1.0, 1.0]
    # one of two answerable questions is abstained on outside the models: that is the budget
    assert abstention.budget(fixed, np.array([1.0, 1.0, 0.0])) == 0.5


def test_the_nameless_threshold_is_chosen_on_the_rows_given() -> None:
    """The nameless rule's threshold (bench/abstention.py ``choose_nameless``), chosen as the
    models' is: the highest cut that abstains on no nameless answerable question of these rows
    (the MuSiQue figures: the locomotives question's evidence holds 44% of its terms asked as
    it is, 33% with its supporting passages hidden); the fixed 0.5 without such rows."""
    rows = [
        _row("answerable", 0.44, 0.44, named=False, evidence_terms=0.4444),
        _row("unanswerable", 0.33, 0.33, named=False, evidence_terms=0.3333),
        _row("answerable", 1.0, 1.0),
    ]
    y = np.array([1.0, 0.0, 1.0])
    terms = abstention.nameless_terms(rows)
    assert math.isnan(terms[2])
    t = abstention.choose_nameless(terms, y)
    assert 0.3333 < t <= 0.4444  # the midpoint, 0.3889
    fixed = np.array([abstention.outside(r) for r in rows])
    assert fixed[:2].tolist() == [0.0, 0.0]  # the fixed rule (0.5) abstains on both
    assert abstention.with_nameless(fixed, terms, t)[:2].tolist() == [1.0, 0.0]
    assert abstention.choose_nameless(terms[2:], y[2:]) == abstention.NAMELESS_THRESHOLD
