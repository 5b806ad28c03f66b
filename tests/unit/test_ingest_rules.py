"""Ingestion rules that need no model or store: display names, part codes, per-document
extraction, order-independent extraction after ``observe``, DEPICTS threshold choice,
inference-time accounting."""

from __future__ import annotations

import pytest

from kgrag.ingest.entities import (
    EntityRecord,
    RuleEntityExtractor,
    display_rank,
    split_by_document,
)
from kgrag.ingest.pipeline.ingestor import union_seconds
from kgrag.ingest.writer import _entity_row
from kgrag.modalities.calibration import choose_threshold, store_score


def test_display_name_rule_prefers_well_formed_plain_long_forms() -> None:
    assert display_rank("Ada Lovelace") > display_rank("Lovelace")
    assert display_rank("Ada Lovelace") > display_rank("ada lovelace")
    assert display_rank("Ada Lovelace") > display_rank("ADA LOVELACE")
    assert display_rank("Ada Lovelace") > display_rank("Dr. Ada Lovelace")
    assert display_rank("Feed Pump FP-2") > display_rank("FP-2")


def test_entity_row_takes_the_best_form_whatever_the_resolver_picked() -> None:
    rec = EntityRecord(id="ada lovelace", name="Lovelace", aliases=("ADA LOVELACE", "Ada Lovelace"))
    row = _entity_row(rec)
    assert row["name"] == "Ada Lovelace" and row["name_rank"] == display_rank("Ada Lovelace")
    # ties go to the alphabetically first form: the same name whatever the order of aliases
    a = _entity_row(EntityRecord(id="x", name="Abc Def", aliases=("Abd Dee",)))
    b = _entity_row(EntityRecord(id="x", name="Abd Dee", aliases=("Abc Def",)))
    assert a == b


def test_part_code_resolves_to_the_one_name_of_its_document_ending_with_it() -> None:
    ex = RuleEntityExtractor()
    result = ex.extract(
        [
            ("a:c0", "The Feed Pump FP-2 leaked. The crew fixed FP-2 on Monday."),
            ("b:c0", "FP-2 was checked again."),
            ("c:c0", "Feed Pump FP-2 and Spare Pump FP-2 are twins. FP-2 is ambiguous here."),
        ],
        document_ids=["a", "b", "c"],
    )
    counts = {(m.chunk_id, m.entity_id): m.count for m in result.mentions}
    assert counts[("a:c0", "feed pump fp2")] == 2
    assert ("a:c0", "fp2") not in counts
    assert counts[("b:c0", "fp2")] == 1  # never across documents
    assert counts[("c:c0", "fp2")] == 1  # two names end with it: stays its own entity


def test_split_by_document_gives_each_document_its_mentions_and_pairs() -> None:
    ex = RuleEntityExtractor()
    result = ex.extract(
        [
            ("a:c0", "Ada Lovelace met Charles Babbage."),
            ("a:c1", "Ada Lovelace wrote to Charles Babbage."),
            ("b:c0", "Charles Babbage visited London."),
        ],
        document_ids=["a", "a", "b"],
    )
    parts = split_by_document(result, {"a:c0": "a", "a:c1": "a", "b:c0": "b"})
    assert {e.id for e in parts["a"].entities} == {"ada lovelace", "charles babbage"}
    assert {e.id for e in parts["b"].entities} == {"charles babbage", "london"}
    (rel_a,) = parts["a"].relations
    assert (rel_a.source_id, rel_a.target_id, rel_a.weight) == (
        "ada lovelace",
        "charles babbage",
        2.0,
    )
    assert all(m.chunk_id.startswith("b:") for m in parts["b"].mentions)


def test_observe_makes_extraction_independent_of_what_came_before() -> None:
    texts = [
        ("d1:c0", "Marble was quarried near Carrara. The marble went to Rome."),
        ("d2:c0", "Marble Arch stands in London. Marble is a stone."),
    ]
    corpus = [t for _, t in texts]
    whole = RuleEntityExtractor()
    whole.observe(corpus)
    together = whole.extract(texts, document_ids=["d1", "d2"])
    resumed = RuleEntityExtractor()
    resumed.observe(corpus)
    alone = resumed.extract(texts[1:], document_ids=["d2"])
    assert {m for m in together.mentions if m.chunk_id == "d2:c0"} == set(alone.mentions)


def test_choose_threshold_keeps_precision_and_sits_between_scores() -> None:
    scored = [(0.95, True), (0.93, True), (0.90, True), (0.91, False), (0.5, False), (0.4, False)]
    choice = choose_threshold(scored, min_precision=0.9)
    assert 0.91 < choice.threshold < 0.93
    assert (choice.precision, choice.recall) == (1.0, pytest.approx(2 / 3, abs=1e-3))
    lenient = choose_threshold(scored, min_precision=0.7)
    assert 0.5 < lenient.threshold < 0.90 and lenient.recall == 1.0
    with pytest.raises(ValueError):
        choose_threshold([(0.9, True)])
    assert store_score(1.0) == 1.0 and store_score(-1.0) == 0.0


def test_inference_time_counts_overlapping_calls_once() -> None:
    assert union_seconds([]) == 0.0
    assert union_seconds([(0, 2), (1, 3), (5, 6)]) == 4.0
    assert union_seconds([(0, 10), (2, 3)]) == 10.0
