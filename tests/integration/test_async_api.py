"""The asyncio API of KnowledgeAgent (``aask``, ``astream``, ``asearch``, ``aingest``) on the demo
corpus, on each engine: the same answers and events as the synchronous calls, ACLs applied, and
cancellation: a question whose awaiting task is cancelled mid-run stops at its next event and
leaves no trace (no Query node), and a stream closed early stops its run the same way."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from kgrag.agent.events import AgentEvent
from tests.support.demo_agent import ROSTER_GROUP, DemoCorpus, demo_agent
from tests.support.engines import Engine

QUESTION = "Who maintains the Pressure Valve PV-7?"


@pytest.fixture(scope="module")
def demo(module_engine: Engine) -> Iterator[DemoCorpus]:
    store = module_engine.open()
    yield demo_agent(store, module_engine.folder)
    store.close()


def _stored(demo: DemoCorpus, query_id: str) -> bool:
    return bool(demo.agent.store.read("trace_read_query", {"id": query_id}))


def test_aask_astream_and_asearch_answer_as_the_sync_calls(demo: DemoCorpus) -> None:
    agent = demo.agent
    roster = demo.documents["maintenance.md"]
    sync = agent.ask(QUESTION, groups=[ROSTER_GROUP])
    sync_kinds = [e.kind for e in agent.stream(QUESTION, groups=[ROSTER_GROUP])]

    async def main() -> None:
        answer, events, evidence, outsider = await asyncio.gather(
            agent.aask(QUESTION, groups=[ROSTER_GROUP]),
            _collect(agent.astream(QUESTION, groups=[ROSTER_GROUP])),
            agent.asearch(QUESTION, groups=[ROSTER_GROUP], limit=4),
            agent.asearch(QUESTION, limit=4),
        )
        assert answer.answer == sync.answer and answer.citations == sync.citations
        assert answer.query_id != sync.query_id and _stored(demo, answer.query_id)
        assert [e.kind for e in events] == sync_kinds
        assert sync_kinds[-2:] == ["answer", "complete"]
        assert len({e.query_id for e in events}) == 1
        assert events[-2].answer.citations == sync.citations  # type: ignore[union-attr]
        assert 0 < len(evidence.hits) <= 4 and evidence.hits[0].document_id == roster
        assert evidence.hits[0].text and "Ada Lovelace" in evidence.hits[0].text
        assert _stored(demo, evidence.query_id)
        assert roster not in {h.document_id for h in outsider.hits}

    asyncio.run(main())


async def _collect(events: object) -> list[AgentEvent]:
    return [e async for e in events]  # type: ignore[attr-defined]


def test_aingest_ingests_in_a_worker_thread(demo: DemoCorpus, tmp_path: Path) -> None:
    note = tmp_path / "spares.md"
    note.write_text("# Spares\n\nThe Spare Pump SP-4 is kept by Hedy Lamarr.\n")
    report = asyncio.run(demo.agent.aingest([str(note)], acl=["group:spares"]))
    assert report.ingested == 1 and report.failed == 0
    answer = demo.agent.ask("Who keeps the Spare Pump SP-4?", groups=["spares"])
    assert report.document_ids[0] in {c.document_id for c in answer.citations}


def test_a_cancelled_aask_stops_at_its_next_event_and_leaves_no_trace(demo: DemoCorpus) -> None:
    seen: list[AgentEvent] = []
    release = threading.Event()

    async def main() -> None:
        loop = asyncio.get_running_loop()
        reached = asyncio.Event()

        def on_event(event: AgentEvent) -> None:  # in the worker thread
            seen.append(event)
            if event.kind == "step" and not reached.is_set():
                loop.call_soon_threadsafe(reached.set)
                assert release.wait(60), "the test never released the run"

        task = asyncio.create_task(
            demo.agent.aask(QUESTION, groups=[ROSTER_GROUP], on_event=on_event)
        )
        await reached.wait()
        task.cancel()
        for _ in range(5):  # the task takes its cancellation: the run's token is set
            await asyncio.sleep(0)
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await task

    try:
        asyncio.run(main())
    finally:
        release.set()
    # aask returned once the run had stopped: the step it was in was its last event
    assert [e.kind for e in seen] == ["plan", "step"]
    assert not _stored(demo, seen[0].query_id)
    # the next question runs as usual
    assert _stored(demo, demo.agent.ask(QUESTION, groups=[ROSTER_GROUP]).query_id)


def test_a_stream_closed_early_stops_its_run_and_leaves_no_half_trace(demo: DemoCorpus) -> None:
    async def main() -> list[AgentEvent]:
        seen = []
        stream = demo.agent.astream(QUESTION, groups=[ROSTER_GROUP])
        async for event in stream:
            seen.append(event)
            if event.kind == "plan":
                break
        await stream.aclose()  # type: ignore[attr-defined]
        return seen

    seen = asyncio.run(main())
    assert [e.kind for e in seen] == ["plan"]
    # aclose returned once the run had stopped: its trace is absent (stopped at a step, as
    # almost always) or, had the run got past its last check first, complete; never partial
    rows = demo.agent.store.read("trace_read_query", {"id": seen[0].query_id})
    if rows:
        assert rows[0]["plan_id"] and rows[0]["answer"] is not None
