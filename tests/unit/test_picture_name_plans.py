"""The plans of picture questions find pictures by their file names (``named_images``), those of
other questions do not, and an LLM's picture plan gets the same name match (kgrag/planner/rule.py,
kgrag/agent/planning.py)."""

from __future__ import annotations

from kgrag.agent.planning import with_picture_names
from kgrag.planner.models import Plan
from kgrag.planner.rule import NAMED_PICTURE_WEIGHT, rule_plan


def _named(plan: Plan) -> list[tuple[int, list[str]]]:
    return [
        (s.step_id, list(s.parameters.params["terms"]))  # type: ignore[union-attr]
        for s in plan.plan
        if getattr(s.parameters, "template", None) == "named_images"
    ]


def test_a_picture_question_fuses_the_pictures_named_by_its_words_first() -> None:
    plan = rule_plan("Show me photos of flowers.", want_images=True)
    ((step, terms),) = _named(plan)
    assert terms == ["flower"]
    fusion = plan.plan[-1]
    assert fusion.type == "aggregate" and fusion.modality == "image"
    weights = dict(
        zip(fusion.parameters.sources, fusion.parameters.weights or (), strict=True)  # type: ignore[union-attr]
    )
    assert weights[step] == NAMED_PICTURE_WEIGHT > max(w for s, w in weights.items() if s != step)


def test_other_plans_have_no_name_match_and_keep_their_fusion() -> None:
    assert not _named(rule_plan("Show me photos of flowers."))  # pictures not wanted
    plain = rule_plan("Show me a picture of it.", want_images=True)  # names nothing
    assert not _named(plain)
    assert plain.plan[-1].parameters.weights is None  # type: ignore[union-attr]


def _llm_plan(question: str, index: str) -> Plan:
    return Plan.parse(
        {
            "plan": [
                {
                    "step_id": 1,
                    "type": "vector_search",
                    "parameters": {"query": question, "index": index, "k": 3},
                }
            ]
        }
    )


def test_an_llm_picture_plan_gets_the_name_match_once() -> None:
    question = "Show me a photo of a flower."
    plan = with_picture_names(_llm_plan(question, "image_embedding"), question)
    assert [s.type for s in plan.plan] == ["vector_search", "graph_query", "aggregate"]
    assert _named(plan) == [(2, ["flower"])]
    fused = plan.plan[2].parameters
    assert fused.sources == (1, 2) and fused.weights == (1.0, NAMED_PICTURE_WEIGHT)  # type: ignore[union-attr]
    assert with_picture_names(plan, question).plan == plan.plan
    # a plan without pictures, or a question that names nothing, is left as it is
    text = _llm_plan(question, "chunk_embedding")
    assert with_picture_names(text, question) is text
    it = _llm_plan("Show me a picture of it.", "image_embedding")
    assert with_picture_names(it, "Show me a picture of it.") is it
