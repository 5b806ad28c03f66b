"""A question about "the recordings" whose words match nothing they say reads the recordings'
first segments (``templates/recording_segments``). It took every segment of the newest recording
before any of the next, so with a long recording first, the other recordings gave no segment
at all (a ninth-folder test, two spoken recordings: all 10 places went to one). The recordings
now take turns (both engines). The segments are written as ingestion writes them, with real
vectors; the template reads the graph only, so no speech recognition is needed here."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kgrag.core import AccessContext
from kgrag.executor.base import ExecutionEnv
from kgrag.executor.scheduler import Executor
from kgrag.graph.store import GraphStore
from kgrag.ingest.records import ChunkRecord, DocumentBundle, ExtractionResult
from kgrag.ingest.writer import GraphWriter
from kgrag.modalities.base import TextEmbedder
from kgrag.modalities.text import default_text_embedder
from kgrag.planner.models import Plan
from tests.support.engines import Engine

#: (file, ingested order, what is said, one sentence a segment): the long lecture is newest.
RECORDINGS = {
    "briefing.wav": [
        "Good morning, this is the safety briefing.",
        "Exits are at the back of the hall.",
    ],
    "interview.ogg": [
        "Thank you for joining us today.",
        "Tell us how the project started.",
        "It began as a weekend experiment.",
    ],
    "lecture.mp3": [f"This is part {n} of the lecture on pumps." for n in range(1, 13)],
}


@pytest.fixture(scope="module")
def store(module_engine: Engine) -> Iterator[GraphStore]:
    embedder = default_text_embedder()
    s = module_engine.fresh()
    writer = GraphWriter(s)
    for name, said in RECORDINGS.items():  # one write each: ingested in this order
        vectors = embedder.embed(said)
        writer.write_many(
            [
                DocumentBundle(
                    id=f"doc_{name.split('.')[0]}",
                    uri=f"/recordings/{name}",
                    sha256=name,
                    modality="audio",
                    mime="audio/mpeg",
                    title=name,
                    bytes=1000,
                    acl=("*",),
                    duration_s=5.0 * len(said),
                    segments=True,
                    chunks=tuple(
                        ChunkRecord(
                            id=f"doc_{name.split('.')[0]}:s{n}",
                            text=text,
                            position=n,
                            start_s=5.0 * n,
                            end_s=5.0 * (n + 1),
                            embedding=tuple(vector),
                        )
                        for n, (text, vector) in enumerate(zip(said, vectors, strict=True))
                    ),
                    extraction=ExtractionResult(),
                )
            ]
        )
    yield s
    s.close()


def _first_segments(store: GraphStore, embedder: TextEmbedder, k: int) -> list[str]:
    plan = Plan.parse(
        {
            "plan": [
                {
                    "step_id": 1,
                    "type": "graph_query",
                    "modality": "audio",
                    "parameters": {"template": "recording_segments", "params": {}, "k": k},
                }
            ]
        }
    )
    env = ExecutionEnv(store=store, text_embedder=embedder, access=AccessContext(admin=True))
    (outcome,) = Executor(env).run(plan).values()
    assert outcome.status == "ok", outcome.error
    return [h.id for h in outcome.result]


def test_the_recordings_take_turns_in_the_first_segments(store: GraphStore) -> None:
    got = _first_segments(store, default_text_embedder(), 10)
    # newest first, each recording's segments in time order, one of each in turn
    assert got == [
        "doc_lecture:s0",
        "doc_interview:s0",
        "doc_briefing:s0",
        "doc_lecture:s1",
        "doc_interview:s1",
        "doc_briefing:s1",
        "doc_lecture:s2",
        "doc_interview:s2",
        "doc_lecture:s3",
        "doc_lecture:s4",
    ]


def test_fewer_places_than_recordings_take_the_newest(store: GraphStore) -> None:
    assert _first_segments(store, default_text_embedder(), 2) == [
        "doc_lecture:s0",
        "doc_interview:s0",
    ]
