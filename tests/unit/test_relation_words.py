"""The names-alone gate (kgrag.agent.relation): evidence holding the one thing a question names
and none of the words it asks with besides, as written or written otherwise, does not answer it.
The sentences are the suite's answer tests' and the real files' of tests/data/subject_only."""

from __future__ import annotations

import numpy as np
import pytest

from kgrag.agent.relation import asks_beyond_names, written_otherwise
from kgrag.agent.support import assess
from kgrag.agent.word_vectors import word_vectors
from kgrag.core import Hit
from kgrag.modalities.base import TextEmbedder
from kgrag.modalities.text import default_text_embedder
from kgrag.text import term_set
from tests.support.embedders import CountingEmbedder

KEPT = "The Spare Pump SP-4 is kept by Hedy Lamarr."
SEAL = (
    "On 3 March the Feed Pump FP-2 lost pressure after a seal failed. "
    "Grace Hopper replaced the seal."
)
HOBART = "AU\t-4253+14719\tAustralia/Hobart\tTasmania"


@pytest.fixture(scope="module")
def embedder() -> TextEmbedder:
    return default_text_embedder()


def _hit(text: str) -> Hit:
    return Hit(id=f"c{abs(hash(text))}", kind="chunk", score=1.0, text=text)


def _beyond(question: str, text: str, embedder: TextEmbedder | None) -> bool:
    hits = [_hit(text)]
    return asks_beyond_names(question, hits, term_set([text]), embedder)


@pytest.mark.parametrize(
    ("question", "text"),
    [
        ("Who keeps the Spare Pump SP-4?", KEPT),  # keeps / kept
        ("What happened to the Feed Pump FP-2?", SEAL),  # asks for anything said about it
        ("What happened to the Feed Pump FP-2 and who fixed it?", SEAL),
        ("Which time zone covers Tasmania?", f"TZ: {HOBART}; time zone"),  # as written
    ],
)
def test_words_written_otherwise_or_not_asked_with_pass(
    embedder: TextEmbedder, question: str, text: str
) -> None:
    assert _beyond(question, text, embedder)


@pytest.mark.parametrize(
    ("question", "text"),
    [
        ("What is the capital of Australia?", HOBART),
        ("Who founded NVIDIA?", "10de  NVIDIA Corporation\n\t0008  NV1 [STG2000X-B Series]"),
        ("Who keeps the Spare Pump SP-4?", "The Spare Pump SP-4 is blue."),
    ],
)
def test_evidence_holding_the_name_alone_does_not_pass(
    embedder: TextEmbedder, question: str, text: str
) -> None:
    assert not _beyond(question, text, embedder)


@pytest.mark.parametrize(
    "question", ["What does FFI mean?", "What does FFI stand for?", "What is the meaning of FFI?"]
)
def test_a_question_asking_what_a_name_is_needs_no_other_word(question: str) -> None:
    # "mean" is never written where it is answered, as "What is FFI?" asks with no other word
    assert _beyond(question, "FFI stands for Foreign Function Interface.", None)
    assert _beyond(question, "The FFI library gives C calls to interpreters.", None)


def test_without_an_embedder_only_words_as_written_count() -> None:
    assert not _beyond("Who keeps the Spare Pump SP-4?", KEPT, None)
    assert _beyond("Who keeps the Spare Pump SP-4?", "Ada keeps the Spare Pump SP-4.", None)


def test_the_support_test_abstains_on_the_name_alone(embedder: TextEmbedder) -> None:
    row = [_hit(HOBART)]
    found = assess("What is the capital of Australia?", row, row, embedder=embedder)
    assert not found.beyond_names and not found.supported
    kept = [_hit(KEPT)]
    assert assess("Who keeps the Spare Pump SP-4?", kept, kept, embedder=embedder).supported


def test_a_word_matches_its_inflections_not_its_neighbours(embedder: TextEmbedder) -> None:
    assert written_otherwise(["keeps"], ["kept"], embedder)
    assert written_otherwise(["wrote"], ["written"], embedder)
    assert not written_otherwise(["capital"], ["tasmania", "hobart"], embedder)
    assert not written_otherwise(["founded"], ["corporation", "series"], embedder)


def test_each_word_is_embedded_once_and_gives_the_same_decision(embedder: TextEmbedder) -> None:
    counting = CountingEmbedder(embedder)
    asked, near = ["steered"], ["steering", "harbourmaster", "tiller"]
    decision = written_otherwise(asked, near, counting)
    assert set(counting.given) <= {*asked, *near}  # some may be kept from an earlier question
    seen = len(counting.given)
    assert written_otherwise(asked, near, counting) == decision  # asked again: nothing embedded
    assert len(counting.given) == seen
    written_otherwise(asked, ["quillwrightery", "tiller"], counting)
    assert counting.given[seen:] == ["quillwrightery"]  # only the word not seen before
    # the kept vectors are the model's own
    kept = word_vectors(["steered", "quillwrightery"], counting)
    fresh = np.asarray(embedder.embed(["steered", "quillwrightery"]), dtype=np.float32)
    assert np.allclose(kept, fresh, atol=1e-5)
