"""Pieces of the agent that need no store and no model: follow-up detection and the offline
rewrite, reformat requests, the offline judge's decisions, plan merging for the trace,
citation renumbering and image alt texts."""

from __future__ import annotations

import pytest

from kgrag.agent.evaluate import OfflineJudge
from kgrag.agent.groundedness import (
    GroundednessReport,
    SentenceCheck,
    claim_sentences,
    remove_unsupported,
)
from kgrag.agent.loop import fuse
from kgrag.agent.memory import Turn, carry_entities, is_follow_up, reformat_kind
from kgrag.agent.planning import filter_plan, merge_iterations
from kgrag.agent.synthesis import alt_text, renumber, source_label
from kgrag.core import Hit
from kgrag.executor.base import StepOutcome
from kgrag.planner.analysis import ResolvedEntity
from kgrag.planner.rule import rule_plan
from kgrag.text import stem, terms


def _hit(i: str, text: str, doc: str = "d1", **kw: object) -> Hit:
    return Hit(id=i, kind="chunk", score=1.0, text=text, document_id=doc, **kw)  # type: ignore[arg-type]


def test_stems_meet() -> None:
    assert stem("maintains") == stem("maintained") == stem("maintain")
    assert stem("replace") == stem("replaced")
    assert terms("Who maintains the part?") == ["maintain", "part"]


@pytest.mark.parametrize(
    ("question", "follow_up"),
    [
        ("what does it build?", True),
        ("tell me more about that", True),
        ("What about its warranty?", True),
        ("Who maintains the part that the meeting agreed to replace?", False),
        ("Who maintains the Feed Pump FP-2?", False),
        ("give me that as a list", True),
    ],
)
def test_follow_up_detection(question: str, follow_up: bool) -> None:
    assert is_follow_up(question) is follow_up


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("give me that as a list", "list"),
        ("Can you put it in a table?", "table"),
        ("make that shorter", "short"),
        ("as a list please", "list"),
        ("What does it build?", None),
        ("List the pumps that failed", None),
    ],
)
def test_reformat_requests(question: str, kind: str | None) -> None:
    assert reformat_kind(question) == kind


def test_offline_rewrite_carries_entities() -> None:
    prev = Turn(n=1, query_id="q", text="What happened to FP-2?", entity_names=("Feed Pump FP-2",))
    assert carry_entities("what does it build?", prev) == "what does Feed Pump FP-2 build?"
    assert carry_entities("what is its price?", prev) == "what is Feed Pump FP-2's price?"
    assert carry_entities("tell me more about that", prev) == "tell me more about Feed Pump FP-2"
    bare = Turn(n=1, query_id="q", text="Who fixed the seal?")
    assert carry_entities("and when?", bare) == "and when? (follow-up to: Who fixed the seal?)"
    by_answer = Turn(n=1, query_id="q", text="Who?", answer_entities=("Ada Lovelace", "PV-7", "X"))
    assert carry_entities("what does she do?", by_answer) == "what does Ada Lovelace and PV-7 do?"


def test_offline_judge_decisions() -> None:
    judge = OfflineJudge()
    pump = ResolvedEntity(id="feed pump fp2", name="Feed Pump FP-2", score=1.0, surface="x")
    good = [_hit("c1", "The Feed Pump FP-2 is maintained by Grace Hopper.")]
    ok = judge.judge("Who maintains the Feed Pump FP-2?", [pump], good, [])
    assert ok.decision == "SATISFIED" and ok.coverage == 1.0
    empty = judge.judge("Who maintains the Feed Pump FP-2?", [pump], [], [])
    assert empty.decision == "REFINE" and empty.next_query == "maintains feed pump fp-2"
    valve = ResolvedEntity(
        id="pressure valve pv7", name="Pressure Valve PV-7", score=1.0, surface="y"
    )
    expand = judge.judge("Who maintains the Pressure Valve PV-7?", [valve], good, [])
    assert expand.decision == "EXPAND" and expand.focus_entities == ("pressure valve pv7",)
    assert expand.next_query is not None and expand.next_query.startswith("Pressure Valve PV-7")
    refine = judge.judge(
        "Which quasar did the zeppelin orbit?",
        [],
        [_hit("c2", "The zeppelin was moored at the station mast.")],
        [],
    )
    assert refine.decision == "REFINE" and refine.next_query is not None
    assert "quasar" in refine.next_query and "moored" in refine.next_query  # missing + bridge
    unrelated = [
        "Soup is served on Fridays.",
        "The car park closes at nine in the evening.",
        "Tickets for the concert cost five pounds each.",
        "The choir rehearses in the old hall on Tuesdays.",
    ]
    noise = [_hit(f"n{i}", text, doc=f"n{i}") for i, text in enumerate(unrelated)]
    filtered = judge.judge("Who maintains the Feed Pump FP-2?", [pump], [*good, *noise], [])
    assert filtered.decision == "FILTER" and filtered.document_ids == ("d1",)
    # four files holding one passage are one passage of the two read, not four noisy hits
    copies = [_hit(f"s{i}", unrelated[0], doc=f"s{i}") for i in range(4)]
    one = judge.judge("Who maintains the Feed Pump FP-2?", [pump], [*good, *copies], [])
    assert one.decision == "SATISFIED", one


def test_merged_plan_offsets_ids_sources_and_conditions() -> None:
    first = rule_plan("Who maintains the pump?", entity_ids=["pump"])
    second = filter_plan("Who maintains the pump?", ["d1"])
    outcomes = {s: StepOutcome(status="ok") for s in first.step_ids}
    plan, merged = merge_iterations(
        [(first, outcomes, "iteration 1"), (second, {1: StepOutcome(status="ok")}, "iteration 2")]
    )
    n = len(first.plan)
    assert plan.step_ids == tuple(range(1, n + 3))
    moved = plan.step(n + 2)
    assert moved.dependencies == (n + 1,) and moved.parameters.source == n + 1  # type: ignore[union-attr]
    assert moved.trace.explanation.startswith("iteration 2: ")
    conditions = [s.condition for s in plan.plan if s.condition]
    assert conditions == [s.condition for s in first.plan if s.condition]
    assert set(merged) == set(range(1, n + 1)) | {n + 1}


def test_renumber_drops_markers_without_evidence() -> None:
    numbered = [
        _hit("a", "Alpha.", title="alpha notes", page=4),
        _hit("b", "Beta."),
        Hit(
            id="i", kind="image", score=1.0, image_uri="/x/red_circle.png", uri="/x/red_circle.png"
        ),
    ]
    text, cites = renumber("Beta holds [2][7]. Alpha too [1]. See [3].", numbered)
    assert [(c.marker, c.node_id) for c in cites] == [(1, "b"), (2, "a"), (3, "i")]
    assert text.startswith("Beta holds [1]. Alpha too [2]. See [3].")
    assert "![Red circle](/x/red_circle.png) [3]" in text
    assert "[2] (Source: alpha notes, p. 4)" in text and "[7]" not in text


def test_source_labels_and_alt_texts() -> None:
    seg = _hit("s", "hello", title="meeting", start_s=12.2, end_s=19.0)
    assert source_label(seg) == "(Source: meeting, 00:12–00:19)"
    long_title = _hit("t", "x", title="A first line that goes on " * 4, uri="/d/notes.txt")
    assert source_label(long_title) == "(Source: notes.txt)"
    by_name = _hit("r", "x", title="roster", uri="/d/roster.md")  # titled by its file name
    assert source_label(by_name) == "(Source: roster.md)"
    # a man page (zstd.1.gz) titled zstd(1) was cited as "zstd1"
    man = Hit(id="m", kind="chunk", score=1.0, title="zstd(1)", uri="file:///m/zstd.1.gz")
    assert source_label(man) == "(Source: zstd 1)"
    generic = Hit(id="g", kind="chunk", score=1.0, title="changelog (jq)", uri="file:///jq/x.gz")
    assert source_label(generic) == "(Source: changelog jq)"
    assert alt_text(Hit(id="i", kind="image", score=1.0)) == "Image"
    assert alt_text(Hit(id="i", kind="image", score=1.0, title="[x]")) == "X"


def test_claims_and_removal() -> None:
    answer = (
        "Extractive answer (no LLM configured; ...):\n- First claim here. [1] (Source: a)\n"
        "- ![pic](/p.png) [2] (Source: b)\n\nSources:\n[1] (Source: a)"
    )
    assert claim_sentences(answer) == ["First claim here. [1]"]
    report = GroundednessReport(
        score=0.0,
        verdict="ungrounded",
        sentences=(
            SentenceCheck(
                sentence="Bad one [1].", markers=(1,), lexical=0, semantic=0, supported=False
            ),
        ),
    )
    assert remove_unsupported("Good [1]. Bad one [1].", report) == "Good [1]."


def test_fuse_is_reciprocal_rank_fusion() -> None:
    a, b, c = _hit("a", "."), _hit("b", "."), _hit("c", ".")
    assert [h.id for h in fuse([[a, b], [b, c]], 10)] == ["b", "a", "c"]
    assert [h.id for h in fuse([[a, b]], 1)] == ["a"]
