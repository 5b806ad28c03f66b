"""`kgrag demo`: make the corpus, ingest it into a fresh embedded store, answer questions."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from rich.console import Console

from kgrag.config import Settings
from kgrag.demo.corpus import QUESTIONS, make_corpus


def run_demo(workdir: Path, console: Console) -> None:
    from kgrag.agent.agent import KnowledgeAgent

    started = time.perf_counter()
    corpus = workdir / "corpus"
    store_dir = workdir / "store"
    shutil.rmtree(store_dir, ignore_errors=True)
    paths = make_corpus(corpus)
    console.print(f"[bold]demo corpus[/bold]: {len(paths)} files in {corpus}")
    settings = Settings(store=f"falkordb-lite:///{store_dir.resolve()}/kg.db", data_dir=store_dir)
    with KnowledgeAgent.open(settings) as agent:
        report = agent.ingest([str(p) for p in paths])
        console.print(
            f"ingested {report.ingested} documents, {report.failed} failed, "
            f"in {report.seconds:.1f} s"
        )
        for f in report.failures:
            console.print(f"  [red]failed[/red] {f.path}: {f.reason}")
        for question in QUESTIONS:
            answer = agent.ask(question)
            console.rule(f"[bold]{question}")
            console.print(answer.answer, markup=False, highlight=False)
            console.print(
                f"[dim]query {answer.query_id} · {len(answer.citations)} citations · "
                f"{answer.latency_ms:.0f} ms · trace: kgrag trace {answer.query_id} "
                f"--store {settings.store}[/dim]"
            )
    console.print(f"\ndemo finished in {time.perf_counter() - started:.1f} s")
