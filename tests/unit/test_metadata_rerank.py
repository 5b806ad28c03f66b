"""Metadata-aware reranking rules: each factor's contribution, determinism, the rule file."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from kgrag.core import Hit
from kgrag.errors import ConfigError, ExecutionError
from kgrag.executor.metadata_rerank import (
    AuthorityRule,
    DocumentMeta,
    RecencyRule,
    RuleSet,
    SourceRule,
    apply_rules,
    load_rule_book,
)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "rerank_rules.toml"


def _hit(i: str, score: float, doc: str) -> Hit:
    return Hit(id=i, kind="chunk", score=score, text=f"text {i}", document_id=doc)


DOCS = {
    "opinion": DocumentMeta(
        id="opinion",
        uri="/law/district/2024-opinion.pdf",
        modality="pdf",
        tags=("isolated-opinion",),
        date=dt.date(2024, 1, 1),
    ),
    "precedent": DocumentMeta(
        id="precedent",
        uri="/law/supreme-court/2014-ruling.pdf",
        modality="pdf",
        tags=("binding-precedent", "date:2014-01-01"),
        date=dt.date(2014, 1, 1),
    ),
}
HITS = [_hit("a", 0.80, "opinion"), _hit("b", 0.70, "precedent")]


def test_without_metadata_factors_the_retrieval_order_stands() -> None:
    scored = apply_rules(HITS, DOCS, RuleSet())
    assert [s.id for s in scored] == ["a", "b"]
    assert [s.score for s in scored] == [0.8, 0.7]
    assert all(s.authority == s.recency == s.source == 0.0 for s in scored)


def test_authority_puts_binding_precedent_above_an_isolated_opinion() -> None:
    rules = RuleSet(
        authority=AuthorityRule(
            weight=0.5, tags={"binding-precedent": 1.0, "isolated-opinion": 0.1}
        )
    )
    scored = apply_rules(HITS, DOCS, rules)
    assert [s.id for s in scored] == ["b", "a"]
    b, a = scored
    assert b.authority == pytest.approx(0.5) and a.authority == pytest.approx(0.05)
    assert b.score == pytest.approx(0.7 + 0.5) and a.score == pytest.approx(0.8 + 0.05)
    assert any("binding-precedent" in why for why in b.why)


def test_recency_halves_per_half_life_from_the_newest_candidate() -> None:
    rules = RuleSet(recency=RecencyRule(weight=1.0, half_life_days=3652))
    by_id = {s.id: s for s in apply_rules(HITS, DOCS, rules)}
    assert by_id["a"].recency == pytest.approx(1.0)  # the newest candidate: age 0
    assert by_id["b"].recency == pytest.approx(0.5, abs=1e-3)  # ten years older: one half-life
    fixed = RuleSet(
        recency=RecencyRule(weight=1.0, half_life_days=366, reference_date=dt.date(2025, 1, 1))
    )
    assert {s.id: s for s in apply_rules(HITS, DOCS, fixed)}["a"].recency == pytest.approx(0.5)


def test_source_priority_first_matching_pattern_wins() -> None:
    rules = RuleSet(
        source=SourceRule(
            weight=1.0,
            priorities={"*/supreme-court/*": 1.0, "*/law/*": 0.25},
            default=0.0,
        )
    )
    by_id = {s.id: s for s in apply_rules(HITS, DOCS, rules)}
    assert by_id["b"].source == 1.0 and by_id["a"].source == 0.25
    assert [s.id for s in apply_rules(HITS, DOCS, rules)] == ["b", "a"]


def test_type_weight_applies_when_no_tag_matches_and_unknown_documents_get_defaults() -> None:
    rules = RuleSet(authority=AuthorityRule(weight=1.0, modalities={"pdf": 0.6}, default=0.1))
    hits = [*HITS, _hit("c", 0.9, "missing")]
    by_id = {s.id: s for s in apply_rules(hits, DOCS, rules)}
    assert by_id["a"].authority == 0.6 and by_id["c"].authority == 0.1


def test_ties_keep_the_incoming_order_and_results_are_deterministic() -> None:
    hits = [_hit(str(i), 0.5, "opinion") for i in range(6)]
    rules = RuleSet(authority=AuthorityRule(weight=1.0, tags={"isolated-opinion": 0.3}))
    first = apply_rules(hits, DOCS, rules)
    assert [s.id for s in first] == [str(i) for i in range(6)]
    assert apply_rules(hits, DOCS, rules) == first


def test_the_example_rule_file_loads_and_names_its_rule_sets() -> None:
    book = load_rule_book(EXAMPLE)
    assert {"legal_precedent", "manuals_first", "newest_first"} <= set(book.rulesets)
    legal = book.get("legal_precedent")
    scored = apply_rules(HITS, DOCS, legal)
    assert scored[0].id == "b"  # the supreme court's binding precedent outranks the opinion
    with pytest.raises(ExecutionError, match=r"no rerank rule set 'nope'.*legal_precedent"):
        book.get("nope")


def test_bad_rule_files_are_config_errors_naming_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[rulesets.x\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_rule_book(bad)
    bad.write_text("[rulesets.x.recency]\nhalf_life_days = -1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"rulesets\.x\.recency\.half_life_days"):
        load_rule_book(bad)
    bad.write_text("[rulesets.x]\nboost = 2\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="boost"):
        load_rule_book(bad)
    with pytest.raises(ConfigError, match="cannot read"):
        load_rule_book(tmp_path / "missing.toml")
