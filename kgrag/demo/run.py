"""`kgrag demo`: make the corpus, ingest it into a fresh store (the embedded one in the demo
folder, or any store URI, Neo4j included, emptied first), answer questions.

Every answer is printed with its citations, its query id and the three ways to open its trace:
``kgrag trace ID --store ...`` (a tree in the terminal), ``--html FILE`` (a self-contained page;
the demo writes the first answer's into its folder) and the Cypher for Neo4j Browser (on Neo4j,
with the Browser URL of that server). The demo fails (a :class:`DemoError`, non-zero exit) when
a file could not be ingested or an answer cites nothing, and warns when the meeting recording
was not heard as expected.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from rich.console import Console
from rich.markup import escape

from kgrag.agent.answer import Answer
from kgrag.config import Settings
from kgrag.demo.corpus import MEETING_KEYWORDS, make_corpus, missing_keywords
from kgrag.errors import KgragError
from kgrag.graph.schema import VECTOR_INDEXES
from kgrag.graph.store import GraphStore
from kgrag.ingest.pipeline import IngestReport

#: Open one answer's whole story in Neo4j Browser (docs/neo4j-browser.md), after
#: ``:param id => 'q_...'``.
BROWSER_CYPHER = "MATCH p=(:Query {id: $id})-[*..3]->() RETURN p"
#: Store URI schemes of Neo4j (the demo prints the Browser URL of such a server).
NEO4J_SCHEMES = frozenset({"neo4j", "bolt", "neo4j+s", "neo4j+ssc", "bolt+s", "bolt+ssc"})
#: Nodes deleted per transaction when the demo empties a store it was pointed at.
CLEAR_BATCH = 5000


@dataclass(frozen=True)
class DemoQuestion:
    text: str
    shows: str
    """What the question demonstrates (printed above its answer)."""
    session: str | None = None
    """Questions of one session are turns of one conversation (follow-ups)."""


#: The part the meeting agreed to replace is named only in the recording, its maintainer only in
#: the roster, and its picture is linked to it only through the graph.
CHAIN_QUESTION = DemoQuestion(
    "Who maintains the part the meeting agreed to replace?",
    "two hops, two modalities: the part from the meeting recording, its maintainer from the roster",
)
PART_QUESTION = DemoQuestion(
    "Which part did the meeting agree to replace?",
    "a recording cited with its timestamp",
    session="demo-meeting",
)
PICTURE_QUESTION = DemoQuestion(
    "Show me a picture of it.",
    "a follow-up: 'it' is the part of the previous answer; its drawing is the figure linked to "
    "that part in the graph (no text says what it looks like)",
    session="demo-meeting",
)
INCIDENT_QUESTION = DemoQuestion(
    "What happened to the Feed Pump FP-2 and who fixed it?",
    "a plain document question",
)
QUESTIONS: tuple[DemoQuestion, ...] = (
    CHAIN_QUESTION,
    PART_QUESTION,
    PICTURE_QUESTION,
    INCIDENT_QUESTION,
)


class DemoError(KgragError):
    """The demo did not work end to end: a file failed to ingest or an answer cites nothing."""


@dataclass(frozen=True)
class DemoResult:
    corpus: list[Path]
    store: str
    ingest: IngestReport
    transcript: str
    """What the meeting recording was heard as (its segments, joined)."""
    answers: list[tuple[DemoQuestion, Answer]]
    trace_html: Path
    """The trace viewer page of the first answer."""
    seconds: float
    browser_url: str | None = None
    """Neo4j Browser on the demo's store (Neo4j only)."""


def run_demo(workdir: Path, console: Console, settings: Settings | None = None) -> DemoResult:
    """Make the corpus in ``workdir/corpus``, ingest it into a fresh store, answer
    :data:`QUESTIONS` and write the first answer's trace page into ``workdir``.

    The store is ``settings.store`` (Neo4j credentials from ``settings`` too), emptied first of
    everything but its applied migrations; without ``settings``, a new embedded store in
    ``workdir/store``. Raises :class:`DemoError` when a file failed to ingest or an answer has no
    citation, and :class:`~kgrag.demo.corpus.SpeechSynthesisError` when espeak-ng is missing.
    """
    from kgrag.agent.agent import KnowledgeAgent
    from kgrag.core import OPERATOR
    from kgrag.executor.trace import read_trace
    from kgrag.viewer import render_trace_html

    started = time.perf_counter()
    corpus = workdir / "corpus"
    store_dir = workdir / "store"
    for stale in workdir.glob("trace-q_*.html"):  # pages of an earlier run's (removed) store
        stale.unlink()
    paths = make_corpus(corpus)
    console.print(f"[bold]demo corpus[/bold]: {len(paths)} files in {corpus}")
    if settings is None:
        shutil.rmtree(store_dir, ignore_errors=True)
        settings = Settings(
            store=f"falkordb-lite:///{store_dir.resolve()}/kg.db", data_dir=store_dir
        )
    else:
        deleted = empty_store(settings)
        console.print(
            f"emptied the store {settings.store} ({deleted} nodes deleted)", highlight=False
        )
    answers: list[tuple[DemoQuestion, Answer]] = []
    browser_url: str | None = None
    with KnowledgeAgent.open(settings) as agent:
        report = agent.ingest([str(p) for p in paths])
        console.print(
            f"ingested {report.ingested} documents, {report.failed} failed, "
            f"in {report.seconds:.1f} s"
        )
        for f in report.failures:
            console.print(f"  [red]failed[/red] {escape(f.path)}: {escape(f.reason)}")
        if report.failed:
            raise DemoError(
                f"{report.failed} of {len(paths)} demo files failed to ingest; see the reasons "
                "above"
            )
        if report.ingested != len(paths):
            raise DemoError(f"only {report.ingested} of {len(paths)} demo files were ingested")
        transcript = _transcript(agent.store, corpus / "meeting.wav")
        console.print(f"the meeting recording was heard as: {transcript!r}", highlight=False)
        missing = missing_keywords(transcript)
        if missing:
            console.print(
                f"[yellow]warning:[/yellow] the transcript lacks {', '.join(map(repr, missing))} "
                f"(expected {', '.join(map(repr, MEETING_KEYWORDS))}); the questions about the "
                "meeting may not be answered from it",
                highlight=False,
            )
        for question in QUESTIONS:
            answer = agent.ask(question.text, session_id=question.session)
            answers.append((question, answer))
            _print_answer(console, question, answer, settings.store)
        first = answers[0][1].query_id
        trace_html = workdir / f"trace-{first}.html"
        trace_html.write_text(
            render_trace_html(read_trace(agent.store, first, OPERATOR)), encoding="utf-8"
        )
        if is_neo4j(settings.store):
            browser_url = neo4j_browser_url(agent.store)
    seconds = time.perf_counter() - started
    console.print(
        f"\nwrote the trace of the first answer to {trace_html} (open it in a browser)",
        highlight=False,
        soft_wrap=True,
    )
    if browser_url is not None:
        _print_browser(console, browser_url, settings, first)
    console.print(f"demo finished in {seconds:.1f} s")
    uncited = [q.text for q, a in answers if not a.citations]
    if uncited:
        raise DemoError(
            f"{len(uncited)} demo answer(s) cite nothing: {'; '.join(uncited)}; the corpus or "
            "the models did not give the evidence they should (see the traces above)"
        )
    return DemoResult(
        corpus=paths,
        store=settings.store,
        ingest=report,
        transcript=transcript,
        answers=answers,
        trace_html=trace_html,
        seconds=seconds,
        browser_url=browser_url,
    )


def empty_store(settings: Settings) -> int:
    """Delete every node and relationship of the store ``settings`` names, and its vector
    indexes (the demo's embedders may differ from the ones it was built with); return the number
    of nodes deleted. Neo4j: :meth:`~kgrag.graph.neo4j_store.Neo4jStore.erase`; a FalkorDB
    store: the same batches."""
    from kgrag.graph import open_settings_store
    from kgrag.graph.neo4j_store import Neo4jStore

    with open_settings_store(settings, run_migrations=False) as store:
        if isinstance(store, Neo4jStore):
            return store.erase(CLEAR_BATCH)
        deleted = 0
        while count := int(store.write("erase_batch", {"batch": CLEAR_BATCH})[0]["deleted"]):
            deleted += count
        for index in VECTOR_INDEXES.values():
            store.drop_vector_index(index)
        return deleted


def is_neo4j(uri: str) -> bool:
    return urlparse(uri).scheme.lower() in NEO4J_SCHEMES


def neo4j_browser_url(store: GraphStore) -> str:
    """Neo4j Browser's address on the server behind ``store``: ``/browser/`` at the HTTP
    address it advertises (the Bolt host and port 7474, Neo4j's default, when the settings
    cannot be read)."""
    host = urlparse(store.uri).hostname or "localhost"
    address = f"{host}:7474"
    try:
        found = {str(r["name"]): str(r["value"]) for r in store.read("server_http_address")}
    except KgragError:  # a user not allowed to see the settings
        found = {}
    advertised = found.get("server.http.advertised_address", "")
    if advertised:
        # ":7474" advertises the default address (the Bolt host's, seen from here)
        address = advertised if not advertised.startswith(":") else f"{host}{advertised}"
    return f"http://{address}/browser/"


def _print_browser(console: Console, url: str, settings: Settings, query_id: str) -> None:
    lines = [
        f"open the first answer's trace in Neo4j Browser: {url}",
        f"  connect to {settings.store} as {settings.neo4j_user}, apply the style sheet "
        "docs/kgrag.grass (`:style`, docs/neo4j-browser.md), then run:",
        f"  :param id => '{query_id}'",
        f"  {BROWSER_CYPHER}",
    ]
    for line in lines:
        console.print(line, markup=False, highlight=False, soft_wrap=True)


def _transcript(store: GraphStore, recording: Path) -> str:
    """The stored transcript segments of ``recording``, joined in order."""
    access = {"principals": [], "admin": True}
    docs = [
        r
        for r in store.read("document_list", access)
        if Path(r["uri"]).resolve() == recording.resolve()
    ]
    if not docs:
        return ""
    did, count = docs[0]["id"], int(docs[0]["chunk_count"] or 0)
    rows = store.read("chunks_by_ids", {"ids": [f"{did}:s{n}" for n in range(count)], **access})
    rows.sort(key=lambda r: float(r["start_s"] or 0.0))
    return " ".join(str(r["text"]).strip() for r in rows)


def _print_answer(console: Console, question: DemoQuestion, answer: Answer, store: str) -> None:
    console.rule(f"[bold]{question.text}")
    note = question.shows
    if question.session:
        note += f" (session {question.session})"
    console.print(f"[dim]{note}[/dim]", highlight=False)
    if answer.resolved_question and answer.resolved_question != question.text:
        console.print(f"understood as: {answer.resolved_question}", markup=False, highlight=False)
    console.print(answer.answer, markup=False, highlight=False)
    qid = answer.query_id
    lines = [
        f"query {qid} · {len(answer.citations)} citations · {answer.latency_ms:.0f} ms",
        f"  trace:   kgrag trace {qid} --store {store}",
        f"  as HTML: kgrag trace {qid} --store {store} --html trace-{qid}.html",
        f"  Neo4j Browser (kgrag on Neo4j, docs/neo4j-browser.md): :param id => '{qid}'",
        f"           {BROWSER_CYPHER}",
    ]
    for line in lines:
        console.print(line, style="dim", markup=False, highlight=False, soft_wrap=True)
