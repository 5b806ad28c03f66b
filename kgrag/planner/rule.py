"""The rule planner: the offline default. It needs no LLM and always emits the same shape of
multi-hop plan, so its behaviour is predictable and its trace easy to read:

1. text ``vector_search`` for the question; only when it finds nothing,
2. an entity lookup (``graph_query`` entity_chunks, and entity_paths between the first two) for
   the entities the question names;
3. the lexical stage (``graph_query`` chunks_fulltext): the full-text index's candidates for the
   question's key terms, ranked by BM25 (kgrag/executor/lexical.py);
4. ``multi_hop`` from those seeds: bridge retrieval (the entities the best vector hits mention
   and the question does not name lead to the next hop's passages, found by searching again with
   the question plus each bridge's name); with entity seeds only (no vector hit), personalised
   PageRank;
5. image ``vector_search`` through the CLIP text encoder, the pictures whose file names have
   every content word of the question (``graph_query`` named_images: a lexical match only) and
   the images of the named entities, when the question wants pictures;
6. when the question asks about recordings ("what is said in the recording?"), a ``filter`` of a
   wider text ``vector_search`` to its transcript segments, and the recordings' first segments
   (``graph_query`` recording_segments): a recording's words rarely match the words of a
   question about it, so its segments would not reach the first search's k;
   when it names files ("what does README.md say about installing?"), a ``filter`` of the same
   wider search to those files' passages, and their first passages (``graph_query``
   file_chunks);
7. ``aggregate`` of the first search and the next hops by best score (a passage keeps its best
   similarity, so the first search's strong hits stay on top and the next hops fill the ranks
   after them), then weighted reciprocal-rank fusion of that with the lexical ranking
   (:func:`lexical_weight`), the segments (:data:`RECORDING_WEIGHT`) and the named files' passages
   (:data:`NAMED_FILE_WEIGHT`) into the final evidence.

Measured on 50 MuSiQue questions (1,890 passages, all-MiniLM-L6-v2): passage recall@5 of the
first search alone 63.5, of this plan 76.5 (``kgrag eval retrieval``; 8,008 passages with
distractors: 61.5 and 72.2, bench/growth_diagnosis.py). Reciprocal-rank fusion of
the same lists, and PageRank over the rule-extracted entity graph, both scored below the first
search alone, which is why that fusion is by score. The lexical weight was chosen on folds
(bench/fusion_folds.py, BENCHMARKS.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from kgrag.executor.fusion import RRF_K
from kgrag.modalities.clip import DEFAULT_DEPICTS_THRESHOLD
from kgrag.planner.builder import PlanBuilder
from kgrag.planner.models import Plan
from kgrag.text.file_names import picture_query_terms
from kgrag.text.folding import fold
from kgrag.text.spelling import spellings
from kgrag.text.stopwords import QUESTION_STOP_WORDS
from kgrag.text.symbols import question_symbols
from kgrag.text.verb_forms import verb_forms
from kgrag.text.versions import DOTTED_NUMBER, is_dotted_number

#: The lexical ranking's weight in the reciprocal-rank fusion with the dense one (the dense
#: ranking weighs 1), for a question that names no code or identifier. Chosen on 3 of 5 folds of
#: the MuSiQue dev questions and reported on the other 2 (bench/fusion_folds.py, BENCHMARKS.md):
#: every weight tried above 0 lowered recall there (lexical ranks move the passages that share the
#: question's words above the next hop's passages, which share none), so lexical hits only come
#: after the dense ones, filling the evidence when the dense searches find fewer than k.
LEXICAL_WEIGHT = 0.0
#: The lexical weight when the question names a code or identifier (``asn1_der_decoding``,
#: ``getElementById``, ``ZT-9``): the embedding cuts it into word pieces and scores near names
#: (``asn1_der_decoding2``, ``asn1_der_decoding_element``) alike, while the full-text index
#: matches it whole, so the lexical ranking leads and the dense one breaks its ties. Set a priori
#: (no MuSiQue dev question names one, so no fold can choose it).
IDENTIFIER_LEXICAL_WEIGHT = 3.0
#: The segments' weight in the fusion when the question asks about recordings (the recordings'
#: first segments get half of it): above the dense ranking's 1, so the nearest segments lead the
#: evidence (the question is about a recording,
#: not about the passages nearest its words). Set a priori: no dev question asks about a
#: recording.
RECORDING_WEIGHT = 2.0
#: The weight of the passages nearest the question in the files it names ("what does README.md
#: say about installing?"), and of those files' first passages (half of it): the question says
#: where to look. Set a priori, as :data:`RECORDING_WEIGHT`.
NAMED_FILE_WEIGHT = 2.0
#: The weight of the pictures whose file names have every content word of the question
#: ("flower.jpg" for "a photo of a flower") in the fusion of the image evidence, where the other
#: sources weigh 1: the name says what the question asks for, so such a picture leads the images
#: near the evidence passages. Set a priori, as :data:`NAMED_FILE_WEIGHT`.
NAMED_PICTURE_WEIGHT = 2.0
#: How many nearest chunks the wider search reads before keeping the segments, or the named
#: files' passages, among them.
WIDE_CANDIDATES = 100
_IDENTIFIER = re.compile(
    r"\b[A-Za-z][A-Za-z0-9]*_[A-Za-z0-9_]+\b"  # snake_case
    r"|\b[a-z]+[A-Z][A-Za-z0-9]*\b"  # camelCase
    r"|\w+\(\)"  # a call
    r"|\b(?=[A-Za-z0-9-]*[A-Za-z])(?=[A-Za-z0-9-]*[0-9])[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*\b"  # codes
    rf"|\b{DOTTED_NUMBER}\b"  # a version or a dotted number: 3.19, 2.6.32
)
_ORDINAL = re.compile(r"\d+(?:st|nd|rd|th|s)", re.IGNORECASE)
#: A word the question calls a code: the one word after "code" (or "symbol", "abbreviation",
#: ...) that ends the question or a clause ("the ISO 639-2 code haw?", "the currency code CHF,
#: ..."). A short code of letters alone ("haw", "CHF") is a word to an embedding, which scores
#: "hat" or "CHE" alike, while the full-text index matches it whole, as it does ``ZT-9``.
_CALLED_CODE = re.compile(
    r"\b(?:code|codes|symbol|abbreviation|acronym|ticker|identifier|id)\s+"
    r"([A-Za-z][A-Za-z0-9]{0,7})\s*(?=[?.!,;:]|$)",
    re.IGNORECASE,
)


def identifiers(question: str) -> tuple[str, ...]:
    """The code identifiers and versions ``question`` names (:func:`names_identifier`), lower
    case, as :func:`~kgrag.text.tokens.lexical_tokens` writes them (``asn1_der_decoding``,
    ``zt-9``, ``3.19``, ``haw``)."""
    found = [m.group(0) for m in _IDENTIFIER.finditer(question)]
    words = [w.removesuffix("()").lower() for w in found if _is_identifier(w)]
    called = (m.group(1).lower() for m in _CALLED_CODE.finditer(question))
    words += [w for w in called if w not in QUESTION_STOP_WORDS]
    return tuple(dict.fromkeys(words))


def names_identifier(question: str) -> bool:
    """Whether ``question`` names a code identifier: a word joined by underscores, a camelCase
    word, a call ``name()``, a code mixing letters and digits (``ZT-9``, ``asn1``; not an
    ordinal or a decade such as ``19th`` or ``1990s``), a version (``3.19``: an embedding
    scores ``3.18`` alike), or a word it calls a code (``the ISO 639-2 code haw``; not a stop
    word: "what is the code for?")."""
    return bool(identifiers(question))


def _is_identifier(word: str) -> bool:
    if not word[0].isalnum() or "_" in word or not word.replace("-", "").isalnum():
        return True  # snake_case or a call
    if any(c.isupper() for c in word[1:]) and not any(c.isdigit() for c in word):
        return True  # camelCase
    numbered = [p for p in word.split("-") if any(c.isdigit() for c in p)]
    return any(not _ORDINAL.fullmatch(p) for p in numbered)


def lexical_weight(question: str) -> float:
    """The lexical ranking's weight in the fusion for ``question`` (the dense one's is 1): that
    of a code identifier also when it names a symbol (:func:`~kgrag.text.symbols.question_symbols`:
    "the ? operator"), which the embedding barely sees and the lexical stage counts."""
    named = names_identifier(question) or bool(question_symbols(question))
    return IDENTIFIER_LEXICAL_WEIGHT if named else LEXICAL_WEIGHT


def lexical_params(question: str) -> dict[str, str | list[str]]:
    """The lexical stage's parameters for ``question``: its full-text ``query``
    (:func:`fulltext_query`) and, when it names some, the ``symbols`` BM25 also counts
    (:func:`~kgrag.text.symbols.question_symbols`; never sent to the full-text index, where
    they would be query syntax)."""
    symbols = list(question_symbols(question))
    return {"query": fulltext_query(question), **({"symbols": symbols} if symbols else {})}


_IDENT = re.compile(r"[a-z0-9]+(?:[_.'-][a-z0-9]+)*")
_PART = re.compile(r"[a-z0-9]+")


#: Terms of a full-text query at most (an identifier and its parts count one each).
FULLTEXT_MAX_TERMS = 12


def fulltext_query(question: str) -> str:
    """A safe full-text query: the key terms joined by OR, no operators from the user. An
    identifier joined by underscores (``asn1_der_decoding``) is one term of both indexes'
    tokenisers, so it is kept whole, and its parts are added after it; a version is kept as a
    prefix (``3.19*``: it finds ``3.19.0``, one token to Lucene, and BM25 scores it there,
    :func:`~kgrag.text.tokens.lexical_tokens`), then its parts; a word joined by other
    punctuation (``x-200``, ``a.b``) is split into its parts, which both indexes tokenise
    alike. A word is also asked for in its other spellings
    (:func:`~kgrag.text.spelling.spellings`: ``licence | license``; the indexes see the text as
    written) and, a form of an irregular verb, in the verb's other forms
    (:func:`~kgrag.text.verb_forms.verb_forms`: ``sent | send``; no stemmer joins them), after
    the first :data:`FULLTEXT_MAX_TERMS` terms are chosen. A word of one or two
    letters is left out unless it is a code the question names (``the ISO 3166 code KY``).
    The only operators are these ``|`` and ``*``, never the user's. The question is folded first
    (:func:`~kgrag.text.folding.fold`: ``Zürich`` is asked for as ``zurich``, which finds the
    text written either way)."""
    terms: list[str] = []
    codes = frozenset(identifiers(fold(question)))
    for word in _IDENT.findall(fold(question).lower()):
        parts = _PART.findall(word)
        if is_dotted_number(word):
            # a version: Lucene keeps "3.19.0" one token, so "3.19" finds it only as a prefix
            wanted = [f"{word}*", *parts]
        else:
            wanted = ([word] if "_" in word else []) + parts
        terms.extend(
            t
            for t in wanted
            if t in codes or (t not in QUESTION_STOP_WORDS and (len(t) > 2 or t.isdigit()))
        )
    chosen = list(dict.fromkeys(terms))[:FULLTEXT_MAX_TERMS]
    unique = list(dict.fromkeys(s for t in chosen for f in verb_forms(t) for s in spellings(f)))
    return " | ".join(unique) if unique else "_"


def rule_plan(
    question: str,
    *,
    entity_ids: Sequence[str] = (),
    want_images: bool = False,
    want_recordings: bool = False,
    file_names: Sequence[str] = (),
    k: int = 10,
    hops: int = 2,
    image_min_score: float = DEFAULT_DEPICTS_THRESHOLD,
) -> Plan:
    """The rule plan of ``question`` (see the module doc). ``image_min_score``: the similarity a
    CLIP text-to-image hit needs to count as showing what the question says; by default the
    threshold calibrated for DEPICTS links (an image shows an entity's name), so a question
    whose words no drawing matches gets the images of its evidence, not CLIP's nearest guess.
    ``want_recordings``: the question asks about recordings
    (:attr:`~kgrag.planner.analysis.QueryAnalysis.asks_about_recordings`); their nearest
    transcript segments join the fusion. ``file_names``: the files the question names
    (:attr:`~kgrag.planner.analysis.QueryAnalysis.file_names`); their passages join it."""
    builder = PlanBuilder()
    add = builder.add

    vec = add(
        "vector_search",
        {"query": question, "index": "chunk_embedding", "k": k},
        why="dense search over text chunks and transcript segments",
    )
    seeds = [vec]
    # The bridge retrieval starts from the vector hits; the named entities' chunks (and the paths
    # between them) seed a PageRank expansion only when the vector search found nothing: with
    # vector hits the fusion by score would not use them, and they cost as much as the search.
    no_vector_hits = f"len(step_{vec}.result) == 0"
    if entity_ids:
        ent = add(
            "graph_query",
            {"template": "entity_chunks", "params": {"entity_ids": list(entity_ids)}, "k": k},
            [vec],
            condition=no_vector_hits,
            why="chunks that mention the entities named in the question, when the vector "
            "search found nothing",
        )
        seeds.append(ent)
    if len(entity_ids) >= 2:
        seeds.append(
            add(
                "graph_query",
                {
                    "template": "entity_paths",
                    "params": {"source": entity_ids[0], "target": entity_ids[1]},
                    "k": k,
                },
                [vec],
                condition=no_vector_hits,
                why="chunks along the RELATED paths (up to 3 hops) between the first two "
                "entities, when the vector search found nothing",
            )
        )
    lexical = add(
        "graph_query",
        {"template": "chunks_fulltext", "params": lexical_params(question), "k": k},
        why="lexical search: the full-text index's candidates ranked by BM25 (identifiers, "
        "codes and rare names the embedding blurs)",
    )
    hop = add(
        "multi_hop",
        {"seeds_from": seeds, "hops": hops, "k": k},
        seeds,
        condition=" or ".join(f"step_{s}.status == 'ok'" for s in seeds)
        if len(seeds) > 1
        else None,
        why="next hop: search again with the question plus each bridge entity the best hits "
        "mention (PageRank over MENTIONS/RELATED when only entities seed it)",
    )
    dense = add(
        "aggregate",
        {"sources": [vec, hop], "k": k, "method": "max"},
        [vec, hop],
        condition=f"step_{vec}.status == 'ok' or step_{hop}.status == 'ok'",
        why="every passage at its best similarity over the first search and the next hops",
    )
    fused_sources = [dense, lexical]
    weights = [1.0, lexical_weight(question)]
    wide = None
    if want_recordings or file_names:
        wide = add(
            "vector_search",
            {"query": question, "index": "chunk_embedding", "k": WIDE_CANDIDATES},
            why="a wider dense search, for the passages of a kind or a file among its hits",
        )
    if wide is not None and want_recordings:
        fused_sources.append(
            add(
                "filter",
                {"source": wide, "modality": "audio", "k": k},
                [wide],
                modality="audio",
                why="the transcript segments: the question asks about a recording",
            )
        )
        fused_sources.append(
            add(
                "graph_query",
                {"template": "recording_segments", "params": {}, "k": k},
                modality="audio",
                why="the first segments of the recordings, when none is near the question's "
                "words ('what is said in the recording?')",
            )
        )
        weights += [RECORDING_WEIGHT, RECORDING_WEIGHT / 2]
    if wide is not None and file_names:
        names = list(file_names)
        fused_sources.append(
            add(
                "filter",
                {"source": wide, "file_names": names, "k": k},
                [wide],
                why="the passages nearest the question in the files it names",
            )
        )
        fused_sources.append(
            add(
                "graph_query",
                {"template": "file_chunks", "params": {"names": names}, "k": k},
                why="the first passages of the files the question names",
            )
        )
        weights += [NAMED_FILE_WEIGHT, NAMED_FILE_WEIGHT / 2]
    evidence = add(
        "aggregate",
        {
            "sources": fused_sources,
            "k": k,
            "method": "rrf",
            "rrf_k": RRF_K,
            "weights": weights,
        },
        fused_sources,
        condition=" or ".join(f"step_{s}.status == 'ok'" for s in fused_sources),
        why=f"reciprocal-rank fusion of the dense and lexical rankings (lexical weight "
        f"{lexical_weight(question)}: {LEXICAL_WEIGHT} chosen on held-out folds, "
        f"{IDENTIFIER_LEXICAL_WEIGHT} when the question names a code identifier)"
        + (f"; the segments (weight {RECORDING_WEIGHT})" if want_recordings else "")
        + (f"; the named files' passages (weight {NAMED_FILE_WEIGHT})" if file_names else ""),
    )
    if want_images:
        image_lists = [
            add(
                "graph_query",
                {"template": "chunk_images", "inputs": {"ids": evidence}, "k": 3},
                [evidence],
                modality="image",
                why="images near the evidence passages or depicting what they mention",
            )
        ]
        img = add(
            "vector_search",
            {"query": question, "index": "image_embedding", "k": 3},
            modality="image",
            why="images through the CLIP text encoder",
        )
        image_lists.append(
            add(
                "filter",
                {"source": img, "min_score": image_min_score},
                [img],
                modality="image",
                why="keep the images CLIP scores as showing the question's words (at least the "
                "calibrated DEPICTS threshold)",
            )
        )
        image_weights = [1.0] * len(image_lists)
        name_terms = picture_query_terms(question)
        if name_terms:
            image_lists.append(
                add(
                    "graph_query",
                    {"template": "named_images", "params": {"terms": list(name_terms)}, "k": 3},
                    modality="image",
                    why="the pictures whose file names have every content word of the question "
                    "(flower.jpg for 'a photo of a flower'): a lexical match, never a similarity",
                )
            )
            image_weights.append(NAMED_PICTURE_WEIGHT)
        if file_names:
            image_lists.append(
                add(
                    "graph_query",
                    {"template": "file_images", "params": {"names": list(file_names)}, "k": 3},
                    modality="image",
                    why="the pictures of the files the question names",
                )
            )
        if entity_ids:
            image_lists.append(
                add(
                    "graph_query",
                    {
                        "template": "entity_images",
                        "params": {"entity_ids": list(entity_ids)},
                        "k": 3,
                    },
                    modality="image",
                    why="images depicting or near the named entities",
                )
            )
        image_weights += [1.0] * (len(image_lists) - len(image_weights))
        fusion: dict[str, Any] = {"sources": image_lists, "k": 3, "method": "rrf"}
        if name_terms:  # the plans of other picture questions stay as they were
            fusion["weights"] = image_weights
        add(
            "aggregate",
            {**fusion, "min_share": 0.5},
            image_lists,
            modality="image",
            condition=" or ".join(f"step_{s}.status == 'ok'" for s in image_lists),
            why="fused image evidence; an image only one source found is dropped when the best "
            "was found by two",
        )
    return builder.plan()
