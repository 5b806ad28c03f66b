"""Weighted reciprocal-rank fusion, the lexical stage's tokens and BM25, and the rule plan's
lexical step."""

from __future__ import annotations

import pytest

from kgrag.core import Hit
from kgrag.errors import PlanError
from kgrag.executor.fusion import fuse
from kgrag.executor.lexical import bm25
from kgrag.planner.models import Plan
from kgrag.planner.rule import (
    IDENTIFIER_LEXICAL_WEIGHT,
    LEXICAL_WEIGHT,
    fulltext_query,
    identifiers,
    lexical_weight,
    names_identifier,
    rule_plan,
)
from kgrag.text.tokens import lexical_tokens


def _hits(*ids: str, score: float = 0.5) -> list[Hit]:
    return [Hit(id=i, kind="chunk", score=score - n / 100) for n, i in enumerate(ids)]


def _ids(fused: list[tuple[Hit, float]]) -> list[str]:
    return [h.id for h, _ in fused]


def test_rrf_adds_weighted_reciprocal_ranks() -> None:
    fused = fuse([_hits("a", "b"), _hits("b", "c")], weights=[1.0, 0.5], rrf_k=60)
    scores = {h.id: round(v, 6) for h, v in fused}
    assert scores == {
        "a": round(1 / 61, 6),
        "b": round(1 / 62 + 0.5 / 61, 6),
        "c": round(0.5 / 62, 6),
    }
    assert _ids(fused) == ["b", "a", "c"]


def test_the_weight_decides_whether_a_lexical_only_first_hit_leads() -> None:
    dense = _hits("d1", "d2", "d3")
    lexical = _hits("x", "d3")
    assert _ids(fuse([dense, lexical], weights=[1.0, 0.5]))[0] == "d3"  # found by both
    low = _ids(fuse([dense, lexical], weights=[1.0, 0.25]))
    assert low.index("x") == 3  # the lexical-only first hit comes after every dense one
    high = _ids(fuse([dense, lexical], weights=[1.0, 3.0]))
    assert high[:2] == ["d3", "x"]  # ... and before every dense-only one when it leads
    # weight 0: the dense order, lexical-only hits after it
    assert _ids(fuse([dense, lexical], weights=[1.0, 0.0])) == ["d1", "d2", "d3", "x"]


def test_fusion_keeps_a_hit_once_and_its_first_occurrence() -> None:
    first = Hit(id="a", kind="chunk", score=0.9, text="from dense")
    again = Hit(id="a", kind="chunk", score=7.0, text="from lexical")
    fused = fuse([[first], [again]])
    assert len(fused) == 1 and fused[0][0].text == "from dense"
    assert fuse([[first], [again]], method="max")[0][1] == 7.0


def test_weights_must_match_the_lists() -> None:
    with pytest.raises(ValueError, match="2 weights for 3 lists"):
        fuse([[], [], []], weights=[1.0, 1.0])
    step = {
        "step_id": 3,
        "type": "aggregate",
        "parameters": {"sources": [1, 2], "weights": [1.0]},
        "dependencies": [1, 2],
    }
    search = {"type": "vector_search", "parameters": {"query": "q"}}
    with pytest.raises(PlanError, match="1 weights given for 2 sources"):
        Plan.parse({"plan": [{"step_id": 1, **search}, {"step_id": 2, **search}, step]})


def test_tokens_keep_an_identifier_whole_and_split_it() -> None:
    assert lexical_tokens("Call asn1_der_decoding() now") == [
        "call",
        "asn1_der_decoding",
        "asn1",
        "der",
        "decoding",
        "now",
    ]
    assert lexical_tokens("The X-200 pump") == ["the", "x-200", "x", "200", "pump"]


def test_bm25_ranks_the_exact_identifier_above_names_sharing_its_parts() -> None:
    texts = [
        "asn1_der_decoding_element fills one element; asn1_der_decoding_element is deprecated",
        "asn1_der_decoding fills the structure with values of a DER encoding",
        "asn1_der_decoding2 fills the structure and takes flags",
    ]
    ranked = bm25(lexical_tokens(fulltext_query("What does asn1_der_decoding do?")), texts)
    assert ranked[0].index == 1
    assert ranked[0].score > ranked[1].score


def test_bm25_weighs_rare_terms_and_the_title_field() -> None:
    texts = ["river town river town", "river town kestrin", "river town market"]
    ranked = bm25(["river", "kestrin"], texts)
    assert ranked[0].index == 1  # the rare term outweighs two more of the common one
    # a chunk of the document titled by the query term outranks one that only mentions it
    texts = ["Vastok painted boats near Kestrin", "She grew up there and taught drawing"]
    by_title = bm25(["vastok"], texts, titles=["The Quiet Harbour", "Mirela Vastok"])
    assert by_title[0].index == 1
    assert bm25(["vastok"], texts)[0].index == 0  # without the title field, the mention wins


def test_fulltext_query_keeps_identifiers_and_no_operators() -> None:
    q = fulltext_query('What does "asn1_der_decoding" do with -x AND der*?')
    assert q == "asn1_der_decoding | asn1 | der | decoding"


def test_names_identifier() -> None:
    assert names_identifier("What does asn1_der_decoding do?")
    assert names_identifier("what does getElementById return")
    assert names_identifier("Who maintains the Zephyr Turbine ZT-9?")
    assert not names_identifier("Who painted The Quiet Harbour in 1887?")
    assert not names_identifier("Which 19th-century painter worked in the 1890s?")
    assert names_identifier("What changed in Valgrind 3.19?")  # a version


def test_a_word_the_question_calls_a_code_is_an_identifier() -> None:
    """The tenth real folder's "Which language has the ISO 639-2 code haw?": "haw" was no
    identifier, so the lexical ranking that finds the row ``"alpha_3": "haw"`` had weight 0
    (the embedding scores "hau" and "hat" alike). A word the question calls a code, ending it
    or a clause, is one; a stop word there is not ("what is the code for?"), nor a word the
    question does not call a code."""
    assert identifiers("Which language has the ISO 639-2 code haw?") == ("haw",)
    assert identifiers("Which currency has the ISO 4217 code CHF?") == ("chf",)
    assert lexical_weight("Which language has the ISO 639-2 code haw?") == (
        IDENTIFIER_LEXICAL_WEIGHT
    )
    assert not names_identifier("What is the numeric ISO 4217 code of the yen?")
    assert not names_identifier("What is the code for?")
    assert not names_identifier("Which language do they speak in Hawaii?")
    assert not names_identifier("Who wrote the code?")
    # a code of two letters is asked for, as other words of two letters are not
    assert fulltext_query("Which country has the ISO 3166 code KY?") == (
        "country | has | iso | 3166 | code | ky"
    )


def test_bm25_finds_a_version_written_with_more_numbers_and_not_its_neighbour() -> None:
    assert lexical_tokens("Release 3.19.0") == ["release", "3.19.0", "3", "19", "0", "3.19"]
    assert {"2.39.5", "2.39"} <= set(lexical_tokens("Git v2.39.5 Release Notes"))  # with its v
    texts = [
        "Release 3.18.0 (15 Oct 2021): 19 fixes for 3 platforms",
        "Release 3.19.0 (11 Apr 2022): the highlights",
        "Release 3.1.19 (2 Jan 2006): what was fixed",
    ]
    ranked = bm25(lexical_tokens(fulltext_query("What changed in 3.19?")), texts)
    assert ranked[0].index == 1
    assert ranked[0].score > ranked[1].score


def test_the_rule_plan_always_has_a_lexical_first_stage_fused_by_weighted_rrf() -> None:
    for question, weight in (
        ("Who painted The Quiet Harbour?", LEXICAL_WEIGHT),
        ("What does asn1_der_decoding do?", IDENTIFIER_LEXICAL_WEIGHT),
    ):
        plan = rule_plan(question)
        lexical = [
            s
            for s in plan.plan
            if s.type == "graph_query" and s.parameters.template == "chunks_fulltext"  # type: ignore[union-attr]
        ]
        assert len(lexical) == 1 and lexical[0].condition is None and not lexical[0].dependencies
        final = plan.plan[-1]
        assert final.type == "aggregate"
        p = final.parameters
        assert p.method == "rrf" and lexical[0].step_id in p.sources  # type: ignore[union-attr]
        assert p.weights == (1.0, weight)  # type: ignore[union-attr]


def test_an_llm_plan_gets_the_lexical_stage_fused_with_its_evidence() -> None:
    from kgrag.agent.planning import with_lexical

    question = "What does asn1_der_decoding do?"
    plan = Plan.parse(
        {
            "plan": [
                {"step_id": 1, "type": "vector_search", "parameters": {"query": question}},
                {
                    "step_id": 2,
                    "type": "rerank",
                    "parameters": {"sources": [1], "query": question},
                    "dependencies": [1],
                },
            ]
        }
    )
    steps = with_lexical(plan, question).plan
    assert [s.type for s in steps] == ["vector_search", "rerank", "graph_query", "aggregate"]
    lexical, fused = steps[2].parameters, steps[3].parameters
    assert lexical.params["query"] == fulltext_query(question)  # type: ignore[union-attr]
    assert fused.sources == (2, 3) and fused.weights == (1.0, IDENTIFIER_LEXICAL_WEIGHT)  # type: ignore[union-attr]
    # a plan that already searches the full-text index, or searches no text, is left as it is
    assert with_lexical(with_lexical(plan, question), question).plan == steps
    images = Plan.parse(
        {
            "plan": [
                {
                    "step_id": 1,
                    "type": "vector_search",
                    "modality": "image",
                    "parameters": {"query": question, "index": "image_embedding"},
                }
            ]
        }
    )
    assert with_lexical(images, question) == images
