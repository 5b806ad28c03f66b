"""``kgrag eval retrieval``: ingest a HippoRAG-format corpus through the real ingestion pipeline,
answer each question through the rule planner and the executor (no LLM), and report passage
recall@2/@5 for kgrag and for dense-only retrieval (the same embedder, store and run), with
per-question latency.

Each passage becomes one text document whose title is the passage title and whose text is
``title + "\\n" + text`` (what a text file whose first line is its title gives). Document URIs are
``/eval/<corpus fingerprint>/<n>.txt``, so a store holding another corpus is recognised and
refused instead of silently mixing corpora, and re-running on the same store skips ingestion
(documents are identified by URI and content hash).
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import ConfigDict, Field

from kgrag.config import Settings
from kgrag.core import AccessContext, Frozen, Hit
from kgrag.eval.datasets import Dataset, EvalError, EvalQuestion, load_dataset
from kgrag.eval.metrics import distinct_titles, percentile, recall_at_k
from kgrag.graph import open_store
from kgrag.ingest.models import ParsedDocument, ParsedPage, SourceItem
from kgrag.ingest.pipeline import IngestReport, ProgressCallback

if TYPE_CHECKING:
    from kgrag.agent.agent import KnowledgeAgent as _Agent

log = logging.getLogger(__name__)

KS = (2, 5)
EVAL_URI_ROOT = "/eval"


class Recall(Frozen):
    model_config = ConfigDict(populate_by_name=True)

    at_2: float = Field(alias="recall@2")
    at_5: float = Field(alias="recall@5")


class Latency(Frozen):
    p50: float
    p95: float


class IngestSummary(Frozen):
    ingested: int
    skipped: int
    failed: int
    seconds: float
    stage_seconds: dict[str, float]

    @classmethod
    def of(cls, report: IngestReport) -> IngestSummary:
        return cls(
            ingested=report.ingested,
            skipped=report.skipped,
            failed=report.failed,
            seconds=report.seconds,
            stage_seconds=report.stage_seconds,
        )


class QuestionResult(Frozen):
    id: str
    gold: tuple[str, ...]
    kgrag: tuple[str, ...]
    """The first five distinct titles kgrag returned."""
    dense: tuple[str, ...]
    latency_ms: float
    question: str = ""

    def recall(self, which: str) -> Recall:
        """This question's recall@2/@5 for ``kgrag`` or ``dense``."""
        titles = getattr(self, which)
        return Recall(**{f"recall@{k}": round(recall_at_k(titles, self.gold, k), 4) for k in KS})

    def row(self) -> dict[str, object]:
        """The question's line of the per-question file (``--per-question``)."""
        return {
            **self.model_dump(),
            "kgrag_recall": self.recall("kgrag").model_dump(by_alias=True),
            "dense_recall": self.recall("dense").model_dump(by_alias=True),
        }


class RetrievalReport(Frozen):
    """What ``kgrag eval retrieval --json`` prints (``by_alias`` gives the ``recall@k`` keys)."""

    questions: int
    passages: int
    kgrag: Recall
    dense: Recall
    latency_ms: Latency
    dense_latency_ms: Latency
    format: str
    corpus_fingerprint: str
    embedder: str
    ingest: IngestSummary
    ingestion_fingerprint: str = ""
    """:func:`ingestion_fingerprint` of the code and settings that evaluated (and, when it
    ingested passages, built) the store."""
    per_question: tuple[QuestionResult, ...] = ()

    def summary(self) -> dict[str, object]:
        """The JSON object of the CLI contract (plus a few extra fields)."""
        return self.model_dump(by_alias=True, exclude={"per_question"})


#: What decides what an ingestion stores, besides the settings: the ingestion and text-model
#: code, the write statements and the schema (the read-only query templates are left out).
_INGESTION_CODE = (
    "kgrag/ingest",
    "kgrag/modalities",
    "kgrag/text",  # sentence splitting (chunk boundaries), stop words and words (entities)
    "kgrag/graph/schema.py",
    "cypher",
)
_READ_ONLY = ("templates", "neo4j_search")
#: The settings an ingestion's result depends on.
_INGESTION_SETTINGS = (
    "text_embedder",
    "text_model",
    "entity_extractor",
    "llm_model",
    "chunk_overlap_tokens",
)


def ingestion_files(root: Path) -> list[Path]:
    """The files of ``_INGESTION_CODE`` under ``root`` (the repository) that the fingerprint
    reads, in a fixed order."""
    out = []
    for entry in _INGESTION_CODE:
        path = root / entry
        for f in sorted(path.rglob("*")) if path.is_dir() else [path]:
            rel = f.relative_to(root)
            if not f.is_file() or f.suffix not in (".py", ".cypher"):
                continue
            if any(part in _READ_ONLY for part in rel.parts):
                continue
            out.append(f)
    return out


def ingestion_fingerprint(settings: Settings) -> str:
    """A digest of the ingestion code (every file of ``_INGESTION_CODE``) and the settings that
    change what an ingestion stores: a store kept for one fingerprint is not reused by another."""
    root = Path(__file__).resolve().parents[2]
    digest = hashlib.sha256()
    for f in ingestion_files(root):
        digest.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes() + b"\0")
    for name in _INGESTION_SETTINGS:
        value = getattr(settings, name)
        if name == "llm_model" and settings.entity_extractor != "llm":
            value = None
        digest.update(f"{name}={value!r}\0".encode())
    return digest.hexdigest()[:12]


def store_dir_name(dataset: Dataset, model_name: str, fingerprint: str = "") -> str:
    """A directory name unique to a corpus, an embedding model and the ingestion's fingerprint
    (:func:`ingestion_fingerprint`), for a reusable store."""
    slug = re.sub(r"[^A-Za-z0-9]+", "-", model_name.rsplit("/", 1)[-1]).strip("-").lower()
    name = f"{dataset.format}-{dataset.fingerprint}-{slug or 'model'}"
    return f"{name}-{fingerprint}" if fingerprint else name


def corpus_documents(dataset: Dataset) -> list[ParsedDocument]:
    """The corpus as parsed text documents (one per passage, title first)."""
    docs = []
    for n, p in enumerate(dataset.passages):
        text = f"{p.title}\n{p.text}"
        data = text.encode("utf-8")
        docs.append(
            ParsedDocument(
                source=SourceItem(
                    path=Path(f"{EVAL_URI_ROOT}/{dataset.fingerprint}/{n:06d}.txt"),
                    title=p.title,
                    modality="text",
                    mime="text/plain",
                ),
                sha256=hashlib.sha256(data).hexdigest(),
                bytes=len(data),
                title=p.title,
                pages=(ParsedPage(number=None, text=text),),
            )
        )
    return docs


def _check_store_corpus(agent: _Agent, dataset: Dataset) -> None:
    prefix = f"{EVAL_URI_ROOT}/{dataset.fingerprint}/"
    rows = agent.store.read("document_list", {"principals": [], "admin": True})
    foreign = [r["uri"] for r in rows if not str(r["uri"]).startswith(prefix)]
    if foreign:
        raise EvalError(
            f"the store holds {len(foreign)} documents that are not passages of this corpus "
            f"(for example {foreign[0]!r}); evaluate on a fresh store or on the one built for "
            "this corpus (omit --store to use it)"
        )


def ingest_corpus(
    agent: _Agent, dataset: Dataset, progress: ProgressCallback | None = None
) -> IngestReport:
    """Ingest the corpus into ``agent``'s store (passages already there are skipped); refuse a
    store holding another corpus, and a corpus whose passages failed to ingest."""
    _check_store_corpus(agent, dataset)
    report: IngestReport = agent.ingestor(progress).ingest_documents(corpus_documents(dataset))
    if report.failed:
        raise EvalError(
            f"{report.failed} passages failed to ingest (first: {report.failures[0].reason})"
        )
    log.info(
        "corpus ingested: %d new, %d already stored, %.1f s",
        report.ingested,
        report.skipped,
        report.seconds,
    )
    return report


def evaluate_retrieval(
    dataset: Dataset,
    agent: _Agent,
    *,
    progress: ProgressCallback | None = None,
    on_question: Callable[[int, int], None] | None = None,
    dense_k: int = 10,
    fingerprint: str = "",
) -> RetrievalReport:
    """Ingest (or reuse) the corpus in ``agent``'s store and score both retrievers."""
    report = ingest_corpus(agent, dataset, progress)
    return score_retrieval(
        dataset, agent, report, on_question=on_question, dense_k=dense_k
    ).model_copy(update={"ingestion_fingerprint": fingerprint})


def score_retrieval(
    dataset: Dataset,
    agent: _Agent,
    ingest: IngestReport,
    *,
    on_question: Callable[[int, int], None] | None = None,
    dense_k: int = 10,
) -> RetrievalReport:
    """Score both retrievers on ``dataset``'s questions against what ``agent``'s store holds
    now (no ingestion here; ``ingest`` is the report of the one that filled it). The growth
    benchmark calls this after each increment of the corpus."""
    results: list[QuestionResult] = []
    dense_ms: list[float] = []
    for n, q in enumerate(dataset.questions, start=1):
        result, ms = _one_question(agent, q, dense_k)
        results.append(result)
        dense_ms.append(ms)
        if on_question is not None:
            on_question(n, len(dataset.questions))
    return _report(dataset, agent, ingest, results, dense_ms)


def _one_question(agent: _Agent, q: EvalQuestion, dense_k: int) -> tuple[QuestionResult, float]:
    from kgrag.agent.loop import final_evidence
    from kgrag.executor.base import ExecutionEnv
    from kgrag.executor.scheduler import Executor
    from kgrag.planner.models import Plan

    env = ExecutionEnv(
        store=agent.store,
        text_embedder=agent.text_embedder,
        access=_ACCESS,
        name_seeds=agent.name_seeds,
    )
    t0 = time.perf_counter()
    plan, _analysis = agent.plan(q.question)
    outcomes = Executor(env).run(plan)
    text_hits, _images = final_evidence(plan, outcomes)
    latency_ms = (time.perf_counter() - t0) * 1000
    t1 = time.perf_counter()
    dense_plan = Plan.parse(
        {
            "plan": [
                {
                    "step_id": 1,
                    "type": "vector_search",
                    "parameters": {"query": q.question, "index": "chunk_embedding", "k": dense_k},
                }
            ]
        }
    )
    dense_hits = Executor(env).run(dense_plan)[1].result
    dense_ms = (time.perf_counter() - t1) * 1000
    result = QuestionResult(
        id=q.id,
        gold=q.gold_titles,
        kgrag=tuple(distinct_titles(_titles(text_hits))[: max(KS)]),
        dense=tuple(distinct_titles(_titles(dense_hits))[: max(KS)]),
        latency_ms=round(latency_ms, 2),
        question=q.question,
    )
    return result, dense_ms


def _titles(hits: Sequence[Hit]) -> list[str | None]:
    return [h.title for h in hits]


def _mean_recall(results: Sequence[QuestionResult], which: str) -> Recall:
    def mean(k: int) -> float:
        values = [recall_at_k(getattr(r, which), r.gold, k) for r in results]
        return round(sum(values) / len(values), 4) if values else 0.0

    return Recall(**{"recall@2": mean(2), "recall@5": mean(5)})


def _latency(values: Sequence[float]) -> Latency:
    return Latency(p50=round(percentile(values, 50), 1), p95=round(percentile(values, 95), 1))


def _report(
    dataset: Dataset,
    agent: _Agent,
    ingest: IngestReport,
    results: Sequence[QuestionResult],
    dense_ms: Sequence[float],
) -> RetrievalReport:
    return RetrievalReport(
        questions=len(results),
        passages=len(dataset.passages),
        kgrag=_mean_recall(results, "kgrag"),
        dense=_mean_recall(results, "dense"),
        latency_ms=_latency([r.latency_ms for r in results]),
        dense_latency_ms=_latency(dense_ms),
        format=dataset.format,
        corpus_fingerprint=dataset.fingerprint,
        embedder=agent.text_embedder.model_name,
        ingest=IngestSummary.of(ingest),
        per_question=tuple(results),
    )


_ACCESS = AccessContext(admin=True)


@contextmanager
def open_eval_agent(
    questions: Path,
    corpus: Path,
    settings: Settings,
    *,
    store: str | None = None,
    limit: int | None = None,
) -> Iterator[tuple[_Agent, Dataset]]:
    """Load the dataset and open an agent on ``store``, or on the one kept for this corpus and
    embedding model under ``settings.data_dir / "eval"``."""
    from kgrag.agent.agent import KnowledgeAgent
    from kgrag.modalities import factory

    dataset = load_dataset(questions, corpus, limit)
    embedder = factory.text_embedder(settings)
    if store is None:
        name = store_dir_name(dataset, embedder.model_name, ingestion_fingerprint(settings))
        path = (settings.data_dir / "eval" / name).resolve()
        store = f"falkordb-lite://{path}/kg.db"
    log.info("evaluating on store %s", store)
    opened = open_store(
        store,
        graph_name=settings.graph_name,
        neo4j_user=settings.neo4j_user,
        neo4j_password=settings.neo4j_password.get_secret_value(),
        fsync=settings.fsync,
    )
    try:
        agent = KnowledgeAgent(opened, embedder, name_seeds=settings.name_seeds)
    except Exception:
        opened.close()
        raise
    with agent:
        yield agent, dataset


def run_retrieval_eval(
    questions: Path,
    corpus: Path,
    settings: Settings,
    *,
    store: str | None = None,
    limit: int | None = None,
    progress: ProgressCallback | None = None,
    on_question: Callable[[int, int], None] | None = None,
) -> RetrievalReport:
    """Load the dataset, open its store (:func:`open_eval_agent`) and evaluate."""
    with open_eval_agent(questions, corpus, settings, store=store, limit=limit) as (agent, data):
        return evaluate_retrieval(
            data,
            agent,
            progress=progress,
            on_question=on_question,
            fingerprint=ingestion_fingerprint(settings),
        )
