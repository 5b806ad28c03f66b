"""The lexical stage: BM25 over the candidates the graph's full-text index finds.

The full-text index (Lucene on Neo4j, RediSearch on FalkorDB) only finds the candidates: every
readable chunk holding at least one of the query's terms, up to a pool. Each engine scores them
its own way (Lucene BM25, unbounded; RediSearch TF-IDF), so the candidates are re-scored here with
Okapi BM25 (the textbook constants, k1 = 1.2, b = 0.75, not tuned), the same on every engine. The
statistics are those of the candidate pool: a term's document frequency among the candidates is
its document frequency among the readable chunks (every chunk holding it is a candidate while
the pool is not full), so the ranking depends on readable documents alone.

Tokenisation (:func:`kgrag.text.tokens.lexical_tokens`) keeps identifiers whole and splits them
too: ``asn1_der_decoding`` is the tokens ``asn1_der_decoding``, ``asn1``, ``der`` and
``decoding``, so a question naming the identifier matches the text naming it exactly above texts
that share only its parts.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from kgrag.text.symbols import symbol_count
from kgrag.text.tokens import lexical_tokens

#: Okapi BM25 term-frequency saturation and length normalisation (Robertson's defaults).
BM25_K1 = 1.2
BM25_B = 0.75
#: The graph_query template whose candidates are re-scored here (its ``query``: terms joined
#: by `` | ``, as :func:`kgrag.planner.rule.fulltext_query` writes them).
LEXICAL_TEMPLATE = "chunks_fulltext"
#: A title term counts as this many occurrences in its chunk (BM25F's field weight): a chunk of
#: the document titled by the term the question names (the function's own page, the person's
#: own article) outranks chunks that only mention it. Set a priori, not tuned.
TITLE_WEIGHT = 2.0
#: How many full-text candidates are re-scored (the engine's best, when more match).
LEXICAL_POOL = 500


@dataclass(frozen=True)
class Scored:
    """A candidate's position in the pool and its BM25 score."""

    index: int
    score: float


def bm25(
    query_terms: Sequence[str],
    texts: Sequence[str],
    titles: Sequence[str | None] | None = None,
    symbols: Sequence[str] = (),
) -> list[Scored]:
    """BM25 of each text for ``query_terms`` (each distinct term once), best first; ties keep
    the texts' order. Statistics come from ``texts`` alone. ``titles`` (one per text, its
    document's title) is a second field whose terms count ``TITLE_WEIGHT`` times (BM25F).
    ``symbols`` (``?``, ``=>``: no tokens) are terms too, a text holding one as often as it
    writes it standing alone (:func:`~kgrag.text.symbols.symbol_count`)."""
    terms = list(dict.fromkeys([*query_terms, *symbols]))
    docs: list[dict[str, float]] = [dict(Counter(lexical_tokens(t))) for t in texts]
    for doc, text in zip(docs, texts, strict=True):
        for symbol in dict.fromkeys(symbols):
            count = symbol_count(text, symbol)
            if count:
                doc[symbol] = doc.get(symbol, 0.0) + count
    if titles is not None:
        for doc, title in zip(docs, titles, strict=True):
            for term in lexical_tokens(title or ""):
                doc[term] = doc.get(term, 0.0) + TITLE_WEIGHT
    if not docs or not terms:
        return [Scored(i, 0.0) for i in range(len(docs))]
    lengths = [sum(d.values()) for d in docs]
    avg = (sum(lengths) / len(lengths)) or 1.0
    n = len(docs)
    idf = {}
    for term in terms:
        df = sum(1 for d in docs if term in d)
        idf[term] = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
    scored = []
    for i, (doc, length) in enumerate(zip(docs, lengths, strict=True)):
        norm = BM25_K1 * (1.0 - BM25_B + BM25_B * length / avg)
        s = 0.0
        for term in terms:
            tf = doc.get(term, 0)
            if tf:
                s += idf[term] * tf * (BM25_K1 + 1.0) / (tf + norm)
        scored.append(Scored(i, s))
    return sorted(scored, key=lambda x: -x.score)
