"""bench/report.py: generated sections replace only what stands between their markers, and the
goal verdicts follow the figures."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
report = pytest.importorskip("report")


def _run(size: int, recall: float, p50: float, m: int = 32, efr: int = 200) -> dict[str, object]:
    return {
        "size": size,
        "M": m,
        "efConstruction": 200,
        "efRuntime": efr,
        "recall_at_10": recall,
        "latency_ms": {"p50": p50, "p95": 2 * p50},
        "index_only_latency_ms": {"p50": p50 / 2},
        "load_rows_per_s": 1000.0,
    }


def test_replace_section_keeps_the_prose_around_it() -> None:
    text = (
        "intro\n<!-- BEGIN GENERATED: goals -->\nold table\n<!-- END GENERATED: goals -->\n"
        "hand-written\n<!-- BEGIN GENERATED: plots -->\n<!-- END GENERATED: plots -->\nend\n"
    )
    once = report.replace_section(text, "goals", "| new |")
    twice = report.replace_section(once, "goals", "| new |")
    assert once == twice
    assert "old table" not in once
    assert once.startswith("intro\n<!-- BEGIN GENERATED: goals -->\n| new |\n<!-- END")
    assert "hand-written\n<!-- BEGIN GENERATED: plots -->\n<!-- END GENERATED: plots -->" in once
    assert report.replace_section(text, "missing", "x") == text


def test_chosen_config_is_the_fastest_meeting_recall_at_the_largest_size() -> None:
    doc = {
        "runs": [
            _run(10_000, 1.0, 1.0, m=16),
            _run(100_000, 0.97, 9.0, m=32),
            _run(100_000, 0.99, 15.0, m=64),
            _run(100_000, 0.90, 3.0, m=16),
        ]
    }
    assert report.chosen_config(doc) == (32, 200, 200)
    text, ok = report.vector_goal(doc)
    assert ok is True and "0.970" in text


def test_vector_goal_not_met_states_the_figures() -> None:
    doc = {"runs": [_run(100_000, 0.91, 25.0)]}
    assert report.chosen_config(doc) == (32, 200, 200)
    text, ok = report.vector_goal(doc)
    assert ok is False and "0.910" in text and "25.0 ms" in text
    assert report.vector_goal({"runs": [_run(10_000, 1.0, 1.0)]})[1] is None


def test_retrieval_goal_needs_the_lift_and_recall_at_2() -> None:
    good = {
        "kgrag": {"recall@2": 0.55, "recall@5": 0.75},
        "dense": {"recall@2": 0.52, "recall@5": 0.63},
    }
    low = {
        "kgrag": {"recall@2": 0.50, "recall@5": 0.75},
        "dense": {"recall@2": 0.52, "recall@5": 0.63},
    }
    assert report.retrieval_goal(good)[1] is True
    assert report.retrieval_goal(low)[1] is False
    assert report.retrieval_goal(None) == ("not run", None)


def test_flatten_gives_dotted_scalar_leaves() -> None:
    doc = {"machine": {"cpu": "x"}, "a": {"b": 1, "c": [1, 2]}, "runs": [{"d": 2.5}]}
    assert report.flatten(doc) == [("a.b", 1), ("a.c", "1, 2"), ("runs[0].d", 2.5)]


def test_engines_table_puts_each_engine_in_its_column() -> None:
    falkor = _run(10_000, 0.999, 1.5)
    neo = {**_run(10_000, 1.0, 40.0), "engine": "neo4j"}
    results = {
        "vector_search": {"runs": [falkor, neo]},
        "retrieval": {"kgrag": {"recall@2": 0.542, "recall@5": 0.76}},
        "retrieval_neo4j": {"kgrag": {"recall@2": 0.55, "recall@5": 0.74}},
    }
    lines = report.engines_section(results).splitlines()
    assert "FalkorDB" in lines[0] and "Neo4j" in lines[0]
    row = {line.split(" | ")[0].strip("| "): line.split(" | ")[1:] for line in lines[2:]}
    assert row["MuSiQue dev: kgrag recall@5"][:2] == ["76.0", "74.0 |"]
    assert row["10,000 vectors: recall@10"][0] == "0.999"
    assert row["10,000 vectors: search p50 / p95 ms"][1].startswith("40.0 / 80.0")
    # FalkorDB's HNSW sweep rows do not leak into its column: only the chosen setting's
    sweep = _run(10_000, 0.5, 0.1, m=16, efr=50)
    results["vector_search"]["runs"].append(sweep)
    again = report.engines_section(results)
    assert "0.5 " not in again and "| 0.5 |" not in again


def test_engines_table_says_how_to_run_it_when_nothing_was_measured() -> None:
    assert "make bench" in report.engines_section({})
