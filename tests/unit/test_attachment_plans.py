"""Plans of questions with attachments and the session's demotion step: their shape, their
DAG (validated), and which step reads which (no models, no store)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kgrag.agent.attachments import attachment_plan, has_own_terms
from kgrag.agent.memory import DiscussedSource
from kgrag.agent.planning import Demotion, offset_steps, with_demotion
from kgrag.executor.attachments import Attachment
from kgrag.planner.models import Plan
from kgrag.planner.rule import rule_plan
from kgrag.planner.validate import validate_plan


def _att(name: str, modality: str) -> Attachment:
    return Attachment(
        name=name,
        path=Path("/nowhere") / name,
        modality=modality,  # type: ignore[arg-type]
        mime="x/y",
        sha256="0" * 64,
        bytes=1,
    )


def _valid(plan: Plan) -> None:
    validate_plan(plan, template_exists=lambda name: True, tool_exists=lambda name: False)


def test_a_recording_is_transcribed_and_its_transcript_feeds_the_text_search() -> None:
    plan = attachment_plan("", [_att("q.wav", "audio")])
    _valid(plan)
    types = [s.type for s in plan.plan]
    assert types == ["audio_transcription", "vector_search", "graph_query"]
    search = plan.plan[1]
    assert search.parameters.query_from == 1 and search.dependencies == (1,)  # type: ignore[union-attr]
    assert plan.plan[2].modality == "image" and plan.plan[2].dependencies == (2,)


def test_an_image_with_its_own_question_is_searched_both_ways_and_fused() -> None:
    plan = attachment_plan("Who maintains it?", [_att("a.png", "image")])
    _valid(plan)
    types = [(s.type, s.modality) for s in plan.plan]
    assert types == [
        ("image_embedding", "image"),
        ("graph_query", "text"),
        ("graph_query", "text"),
        ("vector_search", "text"),
        ("aggregate", "text"),
    ]
    assert plan.plan[4].parameters.sources == (2, 4)  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("question", "own"),
    [
        ("", False),
        ("What does the attached file ask or show?", False),
        ("find similar", False),
        ("Who maintains it?", True),
    ],
)
def test_has_own_terms(question: str, own: bool) -> None:
    assert has_own_terms(question) is own


def test_demotion_follows_the_last_text_and_image_steps_and_survives_merging() -> None:
    plan = rule_plan("Show me a picture of the valve", want_images=True)
    demoted = with_demotion(plan, Demotion(document_ids=("doc_a",), named_again=("doc_b",)))
    _valid(demoted)
    added = [s for s in demoted.plan if s.type == "demote"]
    assert [s.modality for s in added] == ["text", "image"]
    last_text = max(s.step_id for s in plan.plan if s.modality == "text")
    last_image = max(s.step_id for s in plan.plan if s.modality == "image")
    assert [s.parameters.source for s in added] == [last_text, last_image]  # type: ignore[union-attr]
    moved = offset_steps(demoted, 10, "iteration 2")
    assert [s["parameters"]["source"] for s in moved if s["type"] == "demote"] == [
        last_text + 10,
        last_image + 10,
    ]


def test_a_discussed_source_is_named_again_by_title_file_name_or_entity() -> None:
    source = DiscussedSource(
        document_id="d",
        title="Incident log, Riverside pumping station.",
        uri="/data/incidents.txt",
        entity_ids=("march the feed pump fp2", "grace hopper"),
    )
    assert source.named_in("what does the incident log, riverside pumping station say?", [])
    assert source.named_in("anything else in incidents?", [])
    assert source.named_in("what about it?", ["feed pump fp2"])
    assert not source.named_in("who replaced the seal?", [])
    assert not source.named_in("who replaced the seal?", ["pump"])
