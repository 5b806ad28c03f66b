"""Results compared across the two engines within one pytest run.

A test that runs on both engines (``engine`` / ``module_engine``) records what it found with
:func:`same_on_both_engines`; when the other engine already recorded a value under the same key
(the same test, the same non-engine parameters, the same label), the two must be equal, floats
(vector and PageRank scores) up to noise. A run of one engine only (``-k falkordb``) compares
nothing. Values are plain data: dicts, lists, tuples, strings, numbers, None.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path
from pprint import pformat
from typing import Any

import pytest

from tests.support.engines import ENGINE_PARAMS

_ENGINE_FIXTURES = ("engine", "module_engine")
_ENGINE_NAMES = {p.values[0] for p in ENGINE_PARAMS}
_SEEN: dict[tuple[Any, ...], dict[str, Any]] = {}

#: Scores are float32 on FalkorDB and float64 on Neo4j (and summed in another order).
REL, ABS = 1e-4, 1e-5


def shared_folder(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """A folder of this pytest run that is the same for both engines: a corpus written there is
    ingested from the same paths on each, so its document ids (derived from the resolved path)
    and every order whose ties are broken by id are the same too. Each caller writes the same
    files into it (``name`` says whose, e.g. the test module's)."""
    folder = tmp_path_factory.getbasetemp() / "shared" / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _engine_and_key(request: pytest.FixtureRequest, label: str) -> tuple[str, tuple[Any, ...]]:
    node = request.node
    params = dict(getattr(getattr(node, "callspec", None), "params", {}))
    names = [params.pop(f) for f in _ENGINE_FIXTURES if f in params]
    assert len(names) == 1 and names[0] in _ENGINE_NAMES, f"{node.nodeid} runs on no engine"
    others = tuple(sorted((k, repr(v)) for k, v in params.items()))
    return names[0], (node.module.__name__, node.originalname, others, label)


def _differences(a: Any, b: Any, path: str = "") -> list[str]:
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return [] if a == b and type(a) is type(b) else [f"{path or '.'}: {a!r} != {b!r}"]
    if isinstance(a, int | float) and isinstance(b, int | float):
        if isinstance(a, int) and isinstance(b, int):
            return [] if a == b else [f"{path or '.'}: {a!r} != {b!r}"]
        close = math.isclose(a, b, rel_tol=REL, abs_tol=ABS)
        return [] if close else [f"{path or '.'}: {a!r} != {b!r}"]
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return [f"{path or '.'}: keys {sorted(a)} != {sorted(b)}"]
        return [d for k in a for d in _differences(a[k], b[k], f"{path}.{k}")]
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        if len(a) != len(b):
            return [f"{path or '.'}: {len(a)} items != {len(b)}: {a!r} != {b!r}"]
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in _differences(x, y, f"{path}[{i}]")
        ]
    return [] if a == b else [f"{path or '.'}: {a!r} != {b!r}"]


def same_on_both_engines(request: pytest.FixtureRequest, label: str, value: Any) -> None:
    """Record ``value`` for this test's engine; if the other engine recorded one under the same
    key, assert the two are equal (floats up to :data:`REL` / :data:`ABS`)."""
    engine, key = _engine_and_key(request, label)
    seen = _SEEN.setdefault(key, {})
    seen[engine] = value
    for other, theirs in seen.items():
        if other == engine:
            continue
        diff = _differences(theirs, value)
        assert not diff, (
            f"{label}: {other} and {engine} differ:\n"
            + "\n".join(diff[:20])
            + f"\n{other}: {pformat(theirs)[:3000]}\n{engine}: {pformat(value)[:3000]}"
        )


def stable_ids(store: Any, value: Any) -> Any:
    """``value`` with every document id replaced by ``<file name>``: a document's id is derived
    from its resolved path, and each engine's test ingests its own copy of the files."""
    names = {
        r["id"]: "<" + str(r["uri"]).rsplit("/", 1)[-1] + ">"
        for r in store.read("document_list", {"principals": [], "admin": True})
    }

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            for doc, name in names.items():
                v = v.replace(doc, name)
            return v
        if isinstance(v, dict):
            return {walk(k): walk(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [walk(x) for x in v]
        return v

    return walk(value)


def ties_by_id(items: list[tuple[Any, ...]], score: int, key: int) -> list[tuple[Any, ...]]:
    """``items`` in their order, but each run of equal scores (item[score]) ordered by
    item[key]: how an engine orders ties (a step with no ORDER BY, equal scores) is its own."""
    out: list[tuple[Any, ...]] = []
    run: list[tuple[Any, ...]] = []
    for item in items:
        if run and item[score] != run[-1][score]:
            out += sorted(run, key=lambda i: str(i[key]))
            run = []
        run.append(item)
    return out + sorted(run, key=lambda i: str(i[key]))


def trace_digest(store: Any, query_id: str) -> list[dict[str, Any]]:
    """What each step of a stored trace did, without what legitimately differs between engines
    (ids of the query, timings, the Cypher text of the FalkorDB overlays and its parameters)."""
    from kgrag.core import OPERATOR
    from kgrag.executor.trace import read_trace

    return [
        {
            "step_id": s["step_id"],
            "type": s["type"],
            "status": s["status"],
            "result_count": s["result_count"],
            # rank is the position: recomputed once ties are put in id order
            "returned": [
                (r[0], r[1], rank, r[3])
                for rank, r in enumerate(
                    ties_by_id(
                        [(r["id"], r["kind"], r["rank"], r["score"]) for r in s["returned"]], 3, 0
                    )
                )
            ],
        }
        for s in read_trace(store, query_id, OPERATOR).to_json()["steps"]
    ]


#: A moment an answer states to the minute (``document_dates``: when a document was ingested, its
#: file's modification time): each engine's store ingests its own copy of a test's files, in
#: another minute when a run is slow.
_CLOCK = re.compile(r"\b\d{4}-\d{2}-\d{2} at \d{2}:\d{2} UTC")


def answer_digest(store: Any, answer: Any) -> dict[str, Any]:
    """An answer (text, citations, loop) and its stored trace, for :func:`same_on_both_engines`."""
    digest = {
        "answer": _CLOCK.sub("<time> UTC", answer.answer.replace(answer.query_id, "<query id>")),
        "mode": answer.mode,
        "exit_reason": answer.exit_reason,
        "iterations": answer.iterations,
        "citations": [(c.marker, c.node_id, c.document_id) for c in answer.citations],
        "trace": trace_digest(store, answer.query_id) if answer.iterations else None,
    }
    return stable_ids(store, digest)


def outcomes_digest(store: Any, outcomes: dict[int, Any]) -> dict[int, Any]:
    """What each step of an executed plan returned (ids in order, scores), with stable ids."""
    digest = {
        sid: {
            "status": o.status,
            "hits": ties_by_id([(h.id, h.kind, h.document_id, h.score) for h in o.result], 3, 0),
        }
        for sid, o in sorted(outcomes.items())
    }
    return stable_ids(store, digest)


@pytest.fixture
def compared_across_engines(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """Every plan the test runs (``Executor.run``) and every answer it gets
    (``KnowledgeAgent.ask``, the CLI's included) is recorded, the real calls unchanged; after the
    test the record must be the same on the other engine (:func:`same_on_both_engines`).
    Use it with ``pytestmark = pytest.mark.usefixtures("compared_across_engines")``; tests of the
    module that run on no engine are not compared."""
    from kgrag.agent.agent import KnowledgeAgent
    from kgrag.executor.scheduler import Executor

    params = getattr(getattr(request.node, "callspec", None), "params", {})
    if not any(f in params for f in _ENGINE_FIXTURES):
        yield
        return
    record: list[tuple[str, Any]] = []
    run, ask = Executor.run, KnowledgeAgent.ask

    def recorded_run(self: Executor, *args: Any, **kwargs: Any) -> Any:
        outcomes = run(self, *args, **kwargs)
        record.append(("run", outcomes_digest(self.env.store, outcomes)))
        return outcomes

    def recorded_ask(self: KnowledgeAgent, *args: Any, **kwargs: Any) -> Any:
        answer = ask(self, *args, **kwargs)
        record.append(("ask", answer_digest(self.store, answer)))
        return answer

    monkeypatch.setattr(Executor, "run", recorded_run)
    monkeypatch.setattr(KnowledgeAgent, "ask", recorded_ask)
    yield
    same_on_both_engines(request, "runs", record)
