"""The offline groundedness check with the real MiniLM embedder: a sentence that paraphrases its
cited evidence is supported, a fabricated one citing the same evidence is flagged and removed,
and the score and verdict follow."""

from __future__ import annotations

import pytest

from kgrag.agent.groundedness import check, remove_unsupported
from kgrag.modalities.base import TextEmbedder
from kgrag.modalities.text import default_text_embedder

EVIDENCE = {
    1: "The Feed Pump FP-2 lost pressure in March after a seal failed. Grace Hopper replaced "
    "the seal on the following Monday.",
    2: "The canteen serves tomato soup on Thursdays.",
}


@pytest.fixture(scope="module")
def embedder() -> TextEmbedder:
    return default_text_embedder()


def test_a_paraphrase_is_supported_and_a_fabrication_is_flagged(embedder: TextEmbedder) -> None:
    answer = (
        "The Feed Pump FP-2 lost pressure after its seal failed [1]. "
        "Grace Hopper replaced the seal [1]. "
        "The pump was designed by Nikola Tesla in Belgrade in 1931 [1]."
    )
    report = check(answer, EVIDENCE, embedder)
    supported = {s.sentence.split(" [")[0]: s.supported for s in report.sentences}
    assert supported == {
        "The Feed Pump FP-2 lost pressure after its seal failed": True,
        "Grace Hopper replaced the seal": True,
        "The pump was designed by Nikola Tesla in Belgrade in 1931": False,
    }
    fabricated = report.unsupported[0]
    assert fabricated.lexical < 0.5  # few of its words are in the evidence it cites
    assert report.score == pytest.approx(2 / 3, abs=1e-3)
    assert report.verdict == "partially_grounded" and report.judge == "offline"
    kept = remove_unsupported(answer, report)
    assert "Nikola Tesla" not in kept and "Grace Hopper replaced the seal [1]" in kept


def test_a_true_sentence_citing_the_wrong_source_is_not_supported(embedder: TextEmbedder) -> None:
    report = check("Grace Hopper replaced the seal of the Feed Pump FP-2 [2].", EVIDENCE, embedder)
    assert [s.supported for s in report.sentences] == [False]
    assert report.verdict == "ungrounded" and report.score == 0.0
