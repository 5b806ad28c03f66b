"""The trace retention policy (issue 22, item 3), on each engine: a prune keeps the traces and
audits of flagged answers and the newest ``keep_last`` questions of each session (those asked
outside a session count as one session), and removes the rest of what is old enough; the evidence
is never touched. Flagging is ``POST /queries/{id}/flag`` (the asker or an admin) or
``kgrag flag ID``; clearing a flag needs an admin (``DELETE /queries/{id}/flag`` or
``kgrag flag --clear``); an erasure of a user removes their flagged answers too. A prune pauses
after each batch for its duty cycle (``--duty``, ``KGRAG_TRACE_PRUNE_DUTY``)."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from kgrag.agent.agent import KnowledgeAgent
from kgrag.auth.principal import Role
from kgrag.cli import app as cli_app
from kgrag.errors import NotFoundError
from kgrag.graph.store import GraphStore
from kgrag.modalities.text import default_text_embedder
from kgrag.retention import MAX_FLAG_REASON, Pacer, flag_query, forget_user, prune_traces
from kgrag.server.app import create_app
from tests.support.credentials import bearer, new_key
from tests.support.engines import Engine

TRACE_LABELS = {"Query", "Plan", "Step", "Answer", "Session"}


@dataclass
class Served:
    engine: Engine
    store: GraphStore
    client: TestClient
    admin: dict[str, str]
    carol: dict[str, str]
    dan: dict[str, str]


@pytest.fixture
def served(engine: Engine) -> Iterator[Served]:
    folder = engine.folder
    docs = folder / "docs"
    docs.mkdir()
    (docs / "ada.md").write_text(
        "# Ada Lovelace\n\nAda Lovelace wrote the first program for Charles Babbage's "
        "Analytical Engine in 1843.\n",
        encoding="utf-8",
    )
    keys = folder / "keys.json"
    admin = new_key(keys, "root", Role.ADMIN)[1]
    carol = new_key(keys, "carol", Role.READER)[1]
    dan = new_key(keys, "dan", Role.READER)[1]
    store = engine.fresh()
    with KnowledgeAgent(store, default_text_embedder()) as agent:
        assert agent.ingest([str(docs)]).ingested == 1
        app = create_app(engine.settings(api_keys_file=keys), agent=agent)
        with TestClient(app, base_url="http://127.0.0.1") as client:
            yield Served(engine, store, client, bearer(admin), bearer(carol), bearer(dan))


def _ask(s: Served, who: dict[str, str], question: str, session: str | None = None) -> str:
    r = s.client.post("/ask", json={"question": question, "session_id": session}, headers=who)
    assert r.status_code == 200, r.text
    return str(r.json()["query_id"])


def _queries(store: GraphStore) -> set[str]:
    return {str(r["id"]) for r in store.read_freeform("MATCH (q:Query) RETURN q.id AS id")}


def _evidence(store: GraphStore) -> dict[str, int]:
    rows = store.read("stats_labels")
    return {r["label"]: int(r["n"]) for r in rows if int(r["n"]) and r["label"] not in TRACE_LABELS}


def _cli(s: Served, *args: str, env: dict[str, str] | None = None) -> dict[str, object]:
    result = CliRunner().invoke(
        cli_app, [*args, "--store", s.engine.uri, "--json"], env=s.engine.env() | (env or {})
    )
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def test_a_prune_keeps_flagged_answers_and_the_newest_turns_of_each_session(
    served: Served,
) -> None:
    s = served
    evidence = _evidence(s.store)
    talk = [
        _ask(s, s.carol, q, "talk") for q in ("Who wrote the first program?", "When?", "For whom?")
    ]
    chat = [_ask(s, s.dan, q, "chat") for q in ("What did Ada Lovelace write?", "In which year?")]
    alone = [
        _ask(s, s.carol, q) for q in ("Who was Ada Lovelace?", "What is the Analytical Engine?")
    ]
    theirs = _ask(s, s.dan, "Who was Charles Babbage?")

    # the asker flags her own old answer; another reader may not (as absent as an unknown id)
    path = f"/queries/{alone[0]}/flag"
    assert s.client.post(path, json={"reason": "x"}, headers=s.dan).status_code == 404
    r = s.client.post(path, json={"reason": "cites the wrong year"}, headers=s.carol)
    assert r.status_code == 200, r.text
    assert r.json()["flagged"] is True and r.json()["reason"] == "cites the wrong year"
    assert r.json()["flagged_by"].startswith("key:")
    too_long = {"reason": "x" * (MAX_FLAG_REASON + 1)}
    assert (
        s.client.post(f"/queries/{talk[0]}/flag", json=too_long, headers=s.carol).status_code == 422
    )
    nul = {"reason": "a\x00b"}
    assert s.client.post(f"/queries/{talk[0]}/flag", json=nul, headers=s.carol).status_code == 422
    with pytest.raises(ValueError, match="NUL"):
        flag_query(s.store, talk[0], by="operator", reason="a\x00b")
    assert s.client.post("/queries/q_nope/flag", headers=s.admin).status_code == 404
    # the operator flags the first turn of "talk" from the command line
    assert _cli(s, "flag", talk[0], "--reason", "complaint 17")["flagged_by"] == "operator"

    # old enough: everything; kept: the flagged two, the newest turn of each session and the
    # newest question asked outside a session
    report = prune_traces(s.store, older_than_days=0, keep_last=1)
    kept = {alone[0], talk[0], talk[-1], chat[-1], theirs}
    assert _queries(s.store) == kept
    assert report.queries == 8 - len(kept) and report.sessions == 0
    audit = s.client.get(f"/queries/{alone[0]}/audit", headers=s.carol)
    assert audit.status_code == 200 and audit.json()["question"] == "Who was Ada Lovelace?"
    assert _evidence(s.store) == evidence

    # only an admin clears a flag; then a prune removes the answer
    unflag = f"/queries/{alone[0]}/flag"
    assert s.client.delete(unflag, headers=s.carol).status_code == 403
    r = s.client.delete(unflag, headers=s.admin)
    assert r.status_code == 200 and r.json()["flagged"] is False and r.json()["reason"] is None
    prune_traces(s.store, older_than_days=0)
    assert _queries(s.store) == {talk[0]}  # still flagged
    assert (
        s.store.read("trace_read_query", {"id": talk[0]})[0]["text"]
        == "Who wrote the first program?"
    )

    # an erasure of its user removes a flagged answer too
    assert forget_user(s.store, "carol").queries == 1
    assert _queries(s.store) == set()
    assert not TRACE_LABELS & {r["label"] for r in s.store.read("stats_labels") if int(r["n"])}
    assert _evidence(s.store) == evidence


def test_a_prune_pauses_after_each_batch_for_its_duty_cycle(served: Served) -> None:
    """After each batch a prune sleeps ``work * (1 / duty - 1)``: with a clock that advances one
    second a reading, each batch takes 1 s, so at duty 0.25 each pause is 3 s (recorded, not
    slept). The command line's ``--duty``, else ``KGRAG_TRACE_PRUNE_DUTY``, reaches the prune;
    an erasure is paced the same way. Only traces go."""
    s = served
    evidence = _evidence(s.store)
    for question in ("Who wrote the first program?", "When?"):
        _ask(s, s.carol, question, "talk")
    _ask(s, s.dan, "Who was Ada Lovelace?")
    ticks = itertools.count()
    pauses: list[float] = []
    pacer = Pacer(0.25, clock=lambda: float(next(ticks)), sleep=pauses.append)
    report = prune_traces(s.store, older_than_days=0, batch=1, pacer=pacer)
    assert report.queries == 3 and report.sessions == 1 and _queries(s.store) == set()
    # a pause after each batch of one question, and after the session's delete
    assert len(pauses) >= 4 and set(pauses) == {3.0}
    assert report.duty == 0.25 and report.work_seconds == len(pauses)
    assert report.pause_seconds == sum(pauses) == 3 * report.work_seconds
    assert _evidence(s.store) == evidence

    # duty 1 never pauses
    _ask(s, s.carol, "Who was Ada Lovelace?")
    never: list[float] = []
    erased = forget_user(s.store, "carol", pacer=Pacer(1.0, sleep=never.append))
    assert erased.queries == 1 and erased.pause_seconds == 0 and never == []

    # the command line: --duty 0.5 pauses as long as the work, really sleeping
    _ask(s, s.dan, "Who was Charles Babbage?")
    started = time.monotonic()
    pruned = _cli(s, "traces", "prune", "--older-than", "0", "--duty", "0.5")
    wall = time.monotonic() - started
    assert pruned["queries"] == 1 and pruned["duty"] == 0.5
    work, paused = float(str(pruned["work_seconds"])), float(str(pruned["pause_seconds"]))
    assert paused == work > 0 and wall >= paused - 0.001  # both rounded to the millisecond
    # ... and without --duty, the setting's
    _ask(s, s.dan, "Who was Charles Babbage?")
    pruned = _cli(s, "traces", "prune", "--older-than", "0", env={"KGRAG_TRACE_PRUNE_DUTY": "1"})
    assert pruned["queries"] == 1 and pruned["duty"] == 1.0 and pruned["pause_seconds"] == 0
    assert _queries(s.store) == set() and _evidence(s.store) == evidence


def test_flag_from_the_command_line_refuses_bad_input(engine: Engine) -> None:
    runner = CliRunner()
    base = ["--store", engine.uri]
    unknown = runner.invoke(cli_app, ["flag", "q_nope", *base], env=engine.env())
    assert isinstance(unknown.exception, NotFoundError), unknown.output  # kgrag exits 8
    both = runner.invoke(cli_app, ["flag", "q_x", "--clear", "--reason", "r", *base])
    assert both.exit_code == 2 and "--reason" in both.output
    long = runner.invoke(cli_app, ["flag", "q_x", "--reason", "x" * (MAX_FLAG_REASON + 1), *base])
    assert long.exit_code == 2 and "--reason" in long.output
