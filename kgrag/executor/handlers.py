"""One handler per step type. A handler reads only the outcomes of the steps its step depends
on, runs named Cypher through the store (every read carries the caller's principals), and returns
typed hits plus the exact statements it ran, for the trace."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import networkx as nx
import numpy as np

from kgrag.cancel import CancelToken, check
from kgrag.core import Hit
from kgrag.errors import ExecutionError, QueryRefusedError
from kgrag.executor._attachment_handlers import ATTACHMENT_HANDLERS
from kgrag.executor._session_handlers import SESSION_HANDLERS
from kgrag.executor.base import (
    ExecutionEnv,
    Handler,
    HandlerTable,
    Registration,
    StepOutcome,
    StepReader,
)
from kgrag.executor.bridge_links import chain_score, names_bridge
from kgrag.executor.document_handlers import DOCUMENT_HANDLERS
from kgrag.executor.duplicates import (
    collapse,
    copy_groups,
    nearest_distinct,
    until_distinct,
    with_copies,
)
from kgrag.executor.fusion import fuse
from kgrag.executor.lexical import LEXICAL_POOL, LEXICAL_TEMPLATE, bm25
from kgrag.executor.metadata_rerank import CANDIDATES, apply_rules, document_meta
from kgrag.executor.name_seeds import clause_of, name_seeds
from kgrag.executor.nearest import read_nearest
from kgrag.executor.picture_names import NAMED_IMAGES_TEMPLATE, named_images
from kgrag.graph import cypher
from kgrag.ingest.sections import context_text
from kgrag.planner.models import (
    AggregateStep,
    FilterStep,
    GraphQueryStep,
    LlmCallStep,
    MultiHopStep,
    RerankStep,
    Step,
    ToolCallStep,
    VectorSearchStep,
)
from kgrag.planner.rule import fulltext_query
from kgrag.text.file_names import folder_words
from kgrag.text.folding import fold
from kgrag.text.symbols import is_symbol
from kgrag.text.tokens import lexical_tokens


class _Recorder:
    """Runs named statements and records them (text and parameters) for the trace. Before each
    statement it checks the step's cancel token: a step stopped (its timeout passed) runs no
    further statement."""

    def __init__(
        self, env: ExecutionEnv, outcome: StepOutcome, cancel: CancelToken | None = None
    ) -> None:
        self.env = env
        self.outcome = outcome
        self.cancel = cancel

    def read(self, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        check(self.cancel)
        full = {**params, **self.env.access.params()}
        self.outcome.statements.append((self.env.store.statement(name), full))
        return self.env.store.read(name, full)


def run_step(
    step: Step,
    inputs: Mapping[int, StepOutcome],
    env: ExecutionEnv,
    cancel: CancelToken | None = None,
) -> StepOutcome:
    """Run one step; with ``cancel`` set, it stops (CancelledError) at its next statement, model
    call or transcription window."""
    check(cancel)
    outcome = StepOutcome(status="ok")
    rec = _Recorder(env, outcome, cancel)
    outcome.result = _HANDLERS.run(step, inputs, rec)
    return outcome


def _vector_search(
    step: VectorSearchStep, inputs: Mapping[int, StepOutcome], rec: StepReader
) -> list[Hit]:
    p = step.parameters
    query = p.query
    if query is None and p.query_from is not None:
        source = inputs[p.query_from].result
        query = source[0].text if source else None
    if not query:
        return []
    if p.index == "chunk_embedding":
        rec.outcome.query = query
        vector = rec.env.text_embedder.embed([query])[0]
        name, kind = "vector_chunks", None
    else:
        if rec.env.image_embedder is None:
            raise ExecutionError("image search needs an image embedder; none is configured")
        vector = rec.env.image_embedder().embed_texts([query])[0]
        name, kind = (
            ("vector_images", "image")
            if p.index == "image_embedding"
            else ("vector_entity_clip", "entity")
        )

    def nearest(n: int) -> list[Hit]:
        return [Hit.from_row(r, kind, step.step_id) for r in read_nearest(rec, name, vector, n)]

    # passages: down to the k-th distinct one, deeper when copies of one passage (a manual as
    # HTML and as PDF) fill the first k
    return nearest_distinct(nearest, p.k) if p.index == "chunk_embedding" else nearest(p.k)


def _graph_query(
    step: GraphQueryStep, inputs: Mapping[int, StepOutcome], rec: StepReader
) -> list[Hit]:
    p = step.parameters
    name = f"templates/{p.template}"
    if not cypher.exists(name):
        raise QueryRefusedError(f"unknown graph_query template {p.template!r}")
    params: dict[str, Any] = dict(p.params)
    for param, source in p.inputs.items():
        params[param] = [h.id for h in inputs[source].result]
    if p.template == LEXICAL_TEMPLATE:
        return _lexical(str(params.get("query", "")), p.k, params, rec, step.step_id)
    if p.template == NAMED_IMAGES_TEMPLATE:
        return named_images(params, p.k, rec, step.step_id)
    params["k"] = p.k
    return [Hit.from_row(r, None, step.step_id) for r in rec.read(name, params)]


def _lexical(
    query: str, k: int, params: dict[str, Any], rec: StepReader, step_id: int
) -> list[Hit]:
    """The lexical stage: the full-text index's readable candidates (a pool of up to
    ``LEXICAL_POOL``, ordered the same on every engine), re-scored with BM25 (lexical.py). The
    ``symbols`` parameter (:func:`kgrag.planner.rule.lexical_params`) is BM25's alone: the
    full-text index never sees it."""
    raw_symbols = params.pop("symbols", None)
    symbols = [s for s in raw_symbols or () if isinstance(s, str) and is_symbol(s)]
    found = rec.read(f"templates/{LEXICAL_TEMPLATE}", {**params, "k": max(k, LEXICAL_POOL)})
    # accents are folded on both sides (kgrag.text.folding): "zurich" is a token of "Zürich"
    terms = lexical_tokens(fold(query.replace("|", " ")))
    wanted = set(terms)
    # the pool is the candidates holding a query term as one of our tokens: an engine's wider
    # match (FalkorDB's prefix search, an analyzer's stemming) neither scores nor changes the
    # statistics, so both engines rank the same pool the same way
    texts = [fold(str(r.get("text") or "")) for r in found]
    # the title field holds the document's title and its folder's name (what the files of
    # ``valgrind/`` are about, where their text may not say it)
    titles = [fold(f"{r.get('title') or ''} {folder_words(r.get('uri'))}") for r in found]
    pool = [
        i
        for i, r in enumerate(found)
        if wanted.intersection(lexical_tokens(f"{texts[i]} {fold(str(r.get('title') or ''))}"))
    ]
    rows = [found[i] for i in pool]
    ranked = bm25(terms, [texts[i] for i in pool], [titles[i] for i in pool], symbols)
    hits = (
        Hit.from_row({**rows[s.index], "score": s.score}, None, step_id)
        for s in ranked
        if s.score > 0.0
    )
    return until_distinct(hits, k)


#: Bridge retrieval: the entities of this many best seed chunks are the first bridges ...
BRIDGE_SEED_CHUNKS = 2
#: ... at most this many of them, each re-queried once.
MAX_BRIDGES = 32


def _multi_hop(step: MultiHopStep, inputs: Mapping[int, StepOutcome], rec: StepReader) -> list[Hit]:
    """Multi-hop expansion from the seeds' results.

    When a seed is a text vector search (its query is known), the expansion is *iterative bridge
    retrieval*: the entities mentioned by its best chunks that the query does not already name
    are the bridges to the next hop (MENTIONS), and for each bridge the vector index is searched
    again with ``query + " " + bridge name``. A chunk found so counts only when it names the
    bridge, and scores as its chain: the mean of its similarity and of its seed's
    (kgrag/executor/bridge_links.py); every chunk keeps its best score, so the list fuses with
    the first search by ``max``. ``hops`` counts passages in the chain: each hop after
    the first is one more bridge round, from the passage the previous round brought in (the
    largest gain over what the searches before had given it).

    Otherwise (seeds are entities or graph results only, or the text search found no chunk)
    the neighbourhood over
    MENTIONS/RELATED is ranked by personalised PageRank (HippoRAG-style).
    """
    p = step.parameters
    text_seeds = [s for s in p.seeds_from if inputs[s].query]
    query = next((inputs[s].query for s in text_seeds), None)
    has_chunks = any(h.kind == "chunk" for s in text_seeds for h in inputs[s].result)
    if query is not None and has_chunks and "MENTIONS" in p.relationships:
        return _bridge_hops(step, query, inputs, rec)
    return _pagerank_hops(step, inputs, rec)


def _bridge_hops(
    step: MultiHopStep, query: str, inputs: Mapping[int, StepOutcome], rec: StepReader
) -> list[Hit]:
    p = step.parameters
    seeds = _dedupe(
        h for s in p.seeds_from if inputs[s].query for h in inputs[s].result if h.kind == "chunk"
    )
    # what the searches so far gave each chunk (below the seed list: its lowest score)
    floor = min((h.score for h in seeds), default=0.0)
    best: dict[str, Hit] = {h.id: h for h in seeds}
    frontier = seeds[:BRIDGE_SEED_CHUNKS]
    named = _name_seeds(step, query, frontier, seeds, rec) if rec.env.name_seeds else []
    frontier = [*frontier, *named]
    hop_queries = {h.id: clause_of(query, h) or query for h in named}
    sources = {h.id for h in frontier}
    used: set[str] = set()
    found_any: dict[str, Hit] = {}
    for _round in range(p.hops - 1):
        rows = rec.read(
            "bridge_entities",
            {
                "ids": [h.id for h in frontier],
                "question": fold(query),
                "k": MAX_BRIDGES + len(used),
            },
        )
        bridges = [r for r in rows if r["id"] not in used][:MAX_BRIDGES]
        if not bridges:
            break
        used.update(r["id"] for r in bridges)
        # a name seed's bridges are searched with the clause of the question around its name
        # ("the performers of Brother were formed Pearl Jam"), the others with the question
        vectors = rec.env.text_embedder.embed(
            [f"{hop_queries.get(frontier[int(r['rank'])].id, query)} {r['name']}" for r in bridges]
        )
        found: dict[str, Hit] = {}
        for bridge, vector in zip(bridges, vectors, strict=True):
            # the seed passage that mentions the bridge (bridge_entities' rank: its first)
            seed_score = frontier[int(bridge["rank"])].score
            for row in read_nearest(rec, "vector_chunks", vector, p.k):
                if not names_bridge(str(bridge["name"]), row):
                    continue  # found for the question's words, not for the bridge
                score = chain_score(seed_score, float(row.get("score") or 0.0))
                hit = Hit.from_row({**row, "score": score}, None, step.step_id)
                if hit.id not in found or hit.score > found[hit.id].score:
                    found[hit.id] = hit
        # the chain goes on from the passage this round brought in: the largest gain
        gain = {
            i: h.score - (best[i].score if i in best else floor)
            for i, h in found.items()
            if i not in sources
        }
        frontier = [found[i] for i in sorted(gain, key=lambda i: -gain[i])][:1]
        sources.update(h.id for h in frontier)
        for hit in found.values():
            if hit.id not in found_any or hit.score > found_any[hit.id].score:
                found_any[hit.id] = hit
            if hit.id not in best or hit.score > best[hit.id].score:
                best[hit.id] = hit
    for hit in named:  # the passages about what the question names lead the hop's result
        if hit.id not in found_any or hit.score > found_any[hit.id].score:
            found_any[hit.id] = hit
    return sorted(found_any.values(), key=lambda h: -h.score)[: p.k]


def _name_seeds(
    step: MultiHopStep,
    query: str,
    frontier: list[Hit],
    seeds: list[Hit],
    rec: StepReader,
) -> list[Hit]:
    """The passages about the names of ``query`` the ``frontier`` lacks
    (kgrag/executor/name_seeds.py)."""
    emb = rec.env.text_embedder

    def search(phrase: str) -> list[Hit]:
        q = fulltext_query(phrase)
        return _lexical(q, step.parameters.k, {"query": q}, rec, step.step_id)

    def nearness(hits: Sequence[Hit]) -> list[float]:
        texts = [
            context_text(h.title or "", h.section, h.text or "", emb.count_tokens) for h in hits
        ]
        q, *vs = np.asarray(emb.embed([query, *texts]), dtype=np.float32)
        # as the vector indexes score a cosine c: (1 + c) / 2 (cypher/*/vector_chunks.cypher)
        return [(1.0 + float(np.dot(q, v))) / 2.0 for v in vs]

    # a passage of the first search keeps its similarity; one only the lexical search found
    # scores as the first search's best (what the question names is as good a first hop)
    searched = {h.id: h.score for h in seeds}
    top = seeds[0].score if seeds else 0.0
    return [
        hit.model_copy(update={"score": searched.get(hit.id, top), "provenance": (step.step_id,)})
        for hit in name_seeds(query, frontier, seeds, search, nearness)
    ]


def _pagerank_hops(
    step: MultiHopStep, inputs: Mapping[int, StepOutcome], rec: StepReader
) -> list[Hit]:
    """Personalised PageRank over the neighbourhood of the seeds that the caller may read.

    Every expansion is ACL-filtered in its Cypher: chunks -> entities walks from readable chunks
    only, entities -> chunks reaches readable chunks only, and entities -> entities follows
    co-mentions in readable chunks, weighted by their number (not the stored RELATED weight,
    which counts private chunks too). So an entity only unreadable documents mention is never a
    node of the graph, a parameter of a later hop (the trace keeps them) or a result, and the
    ranking depends on readable documents alone.
    """
    p = step.parameters
    seeds: dict[str, float] = {}
    kinds: dict[str, str] = {}
    for source in p.seeds_from:
        for rank, hit in enumerate(inputs[source].result):
            if hit.kind in ("chunk", "segment", "entity"):
                seeds[hit.id] = seeds.get(hit.id, 0.0) + 1.0 / (rank + 1)
                kinds[hit.id] = "entity" if hit.kind == "entity" else "chunk"
    if not seeds:
        return []
    graph = nx.Graph()
    graph.add_nodes_from(seeds)
    chunk_frontier = [i for i in seeds if kinds[i] == "chunk"]
    entity_frontier = [i for i in seeds if kinds[i] == "entity"]
    use_related = "RELATED" in p.relationships
    use_mentions = "MENTIONS" in p.relationships
    use_next = "NEXT" in p.relationships
    fanout = 50
    new: dict[str, list[str]] = {"entity": [], "chunk": []}  # the next frontier, by kind

    def reach(source: str, edge: Mapping[str, Any], kind: str) -> None:
        """An edge of the walk; a node not seen before joins the next frontier."""
        target = edge.get("target")
        if target is None:
            return
        _add_edge(graph, source, target, float(edge.get("weight") or 1))
        if target not in kinds:
            kinds[target] = kind
            new[kind].append(target)

    for _hop in range(p.hops):
        new["entity"], new["chunk"] = [], []
        if chunk_frontier and use_next:
            for r in rec.read("expand_next_chunks", {"ids": chunk_frontier}):
                reach(r["source"], r, "chunk")
        if chunk_frontier and use_mentions:
            for r in rec.read("expand_entities_of_chunks", {"ids": chunk_frontier}):
                reach(r["source"], r, "entity")
        if entity_frontier:
            rows = rec.read("expand_from_entities", {"ids": entity_frontier, "fanout": fanout})
            for r in rows:
                for rel in r["related"] if use_related else []:
                    reach(r["source"], rel, "entity")
                for ch in r["chunks"] if use_mentions else []:
                    reach(r["source"], ch, "chunk")
        if graph.number_of_nodes() >= p.max_nodes:
            break
        chunk_frontier, entity_frontier = new["chunk"], new["entity"]
    # Down-weight hub entities (mentioned everywhere) as HippoRAG does with node specificity.
    for node in graph.nodes:
        if kinds.get(node) == "entity":
            graph.nodes[node]["w"] = 1.0 / math.log(2 + graph.degree(node))
    total = sum(seeds.values())
    ranks = nx.pagerank(
        graph,
        alpha=p.damping,
        personalization={k: v / total for k, v in seeds.items()},
        weight="weight",
    )
    ranked = sorted(
        (n for n in ranks if kinds.get(n) == "chunk"), key=lambda n: ranks[n], reverse=True
    )[: p.k]
    if not ranked:
        return []
    by_id = {r["id"]: r for r in rec.read("chunks_by_ids", {"ids": ranked})}
    return [
        Hit.from_row({**by_id[n], "score": ranks[n]}, None, step.step_id)
        for n in ranked
        if n in by_id
    ]


def _add_edge(graph: nx.Graph, a: str, b: str, w: float) -> None:
    if graph.has_edge(a, b):
        graph[a][b]["weight"] += w
    else:
        graph.add_edge(a, b, weight=w)


def _filter(step: FilterStep, inputs: Mapping[int, StepOutcome], rec: StepReader) -> list[Hit]:
    p = step.parameters
    hits = inputs[p.source].result
    out = [
        h.rescored(h.score, step.step_id)
        for h in hits
        if (p.min_score is None or h.score >= p.min_score)
        and (p.kinds is None or h.kind in p.kinds)
        and (p.document_ids is None or h.document_id in p.document_ids)
        and (p.modality is None or _modality(h) == p.modality)
        and (p.file_names is None or h.file_name in {n.lower() for n in p.file_names})
    ]
    return out[: p.k] if p.k else out


def _modality(hit: Hit) -> str:
    return {"image": "image", "segment": "audio"}.get(hit.kind, "text")


def _rerank(step: RerankStep, inputs: Mapping[int, StepOutcome], rec: StepReader) -> list[Hit]:
    """Rescore the sources' hits against the query (embedding or shared words), best first. The
    copies of one passage (kgrag.executor.duplicates) take one slot, held by the best-scored
    copy, which carries the others (as in search and fusion)."""
    p = step.parameters
    hits = _dedupe(h for s in p.sources for h in inputs[s].result)
    texts = [h for h in hits if h.text]
    if not texts:
        return hits[: p.k]
    if p.method == "embedding":
        vectors = np.asarray(rec.env.text_embedder.embed([p.query] + [h.text or "" for h in texts]))
        scores = vectors[1:] @ vectors[0]
    else:
        terms = set(_terms(p.query))
        scores = np.asarray(
            [len(terms & set(_terms(h.text or ""))) / (1 + len(terms)) for h in texts]
        )
    order = np.argsort(-scores, kind="stable")
    return collapse((texts[i].rescored(float(scores[i]), step.step_id) for i in order), p.k)


def _aggregate(
    step: AggregateStep, inputs: Mapping[int, StepOutcome], rec: StepReader
) -> list[Hit]:
    """Fuse ranked lists: weighted reciprocal-rank fusion (default), max or sum of scores. The
    copies of one passage (kgrag.executor.duplicates) count as that passage and take one slot,
    held by the best-ranked copy."""
    p = step.parameters
    lists = [inputs[s].result for s in p.sources]
    hits = [h for found in lists for h in found]
    groups = copy_groups(hits)
    fused = fuse(lists, method=p.method, weights=p.weights, rrf_k=p.rrf_k, groups=groups)[: p.k]
    if p.min_share is not None and fused:
        floor = fused[0][1] * p.min_share
        fused = [(h, v) for h, v in fused if v >= floor]
    shown = with_copies((h for h, _ in fused), hits, groups)
    return [h.rescored(v, step.step_id) for h, (_, v) in zip(shown, fused, strict=True)]


def _llm_call(step: LlmCallStep, inputs: Mapping[int, StepOutcome], rec: StepReader) -> list[Hit]:
    if rec.env.llm is None:
        raise ExecutionError("llm_call needs an LLM; configure KGRAG_LLM_MODEL and an endpoint")
    evidence = [h for s in step.parameters.sources for h in inputs[s].result]
    check(rec.cancel)
    text = rec.env.llm(step.parameters.prompt, evidence, step.parameters.max_tokens)
    return [
        Hit(
            id=f"llm:{step.step_id}",
            kind="document",
            score=1.0,
            text=text,
            provenance=(step.step_id,),
        )
    ]


def _tool_call(step: ToolCallStep, inputs: Mapping[int, StepOutcome], rec: StepReader) -> list[Hit]:
    tool = rec.env.tools.get(step.parameters.tool)
    if tool is None:
        raise QueryRefusedError(f"unknown tool {step.parameters.tool!r}")
    arguments: dict[str, Any] = dict(step.parameters.arguments)
    for name, source in step.parameters.inputs.items():
        arguments[name] = [h.id for h in inputs[source].result]
    return tool(arguments)


def _dedupe(hits: Any) -> list[Hit]:
    seen: dict[str, Hit] = {}
    for h in hits:
        seen.setdefault(h.id, h)
    return list(seen.values())


def _terms(text: str) -> list[str]:
    import re

    return [t for t in re.findall(r"[a-z0-9]+", text.lower()) if len(t) > 2]


def with_metadata_rules(base: Handler[RerankStep]) -> Handler[RerankStep]:
    """The ``rerank`` handler with metadata rules: ``base`` scores the candidates (embedding or
    lexical, as before); when the step names a rule set, its rules reorder them and the factors
    of every hit go to ``outcome.details["rerank"]`` (shown by ``kgrag trace --json``)."""

    def rerank(step: RerankStep, inputs: Mapping[int, StepOutcome], rec: StepReader) -> list[Hit]:
        p = step.parameters
        if p.rules is None:
            return base(step, inputs, rec)
        book = rec.env.rerank_rules
        if book is None:
            raise ExecutionError(
                f"the rerank step names rule set {p.rules!r} but no rule file is configured "
                "(set KGRAG_RERANK_RULES to a TOML rule file)"
            )
        rules = book.get(p.rules)
        widened = step.model_copy(update={"parameters": p.model_copy(update={"k": CANDIDATES})})
        hits = base(widened, inputs, rec)
        ids = sorted({h.document_id for h in hits if h.document_id})
        rows = rec.read("documents_by_ids", {"ids": ids}) if ids else []
        documents = {r["id"]: document_meta(r) for r in rows}
        scored = apply_rules(hits, documents, rules)[: p.k]
        by_id = {h.id: h for h in hits}
        rec.outcome.details["rerank"] = {
            "rules": p.rules,
            "rule_file": book.path,
            "formula": "retrieval + authority + recency + source",
            "hits": [s.model_dump(mode="json") for s in scored],
        }
        return [by_id[s.id].model_copy(update={"score": s.score}) for s in scored]

    return rerank


_HANDLERS = HandlerTable(
    [
        Registration(VectorSearchStep, _vector_search),
        Registration(GraphQueryStep, _graph_query),
        Registration(MultiHopStep, _multi_hop),
        Registration(FilterStep, _filter),
        Registration(RerankStep, with_metadata_rules(_rerank)),
        Registration(AggregateStep, _aggregate),
        Registration(LlmCallStep, _llm_call),
        Registration(ToolCallStep, _tool_call),
        *DOCUMENT_HANDLERS,
        *ATTACHMENT_HANDLERS,
        *SESSION_HANDLERS,
    ]
)
"""Step class -> handler: the executor's dispatch table."""
