"""Groundedness: is each sentence of an answer supported by the evidence it cites?

A sentence is checked against the text of the citations its ``[n]`` markers name: lexical support
(share of its content terms found in the cited text) and embedding similarity (best cosine to a
cited sentence). A sentence with no marker, or with markers naming no text, is unsupported. With
an LLM client the model judges the sentences instead (structured output), the offline figures
kept for the record. The score is the share of supported sentences; unsupported sentences are
removed (or flagged ``[unsupported]``)."""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal

import numpy as np

from kgrag.agent._text import markers_in, strip_citations
from kgrag.core import Closed, Frozen
from kgrag.llm.prompts import render_prompt
from kgrag.modalities.base import TextEmbedder
from kgrag.text import sentence_texts, terms

if TYPE_CHECKING:
    from kgrag.llm import LLM

log = logging.getLogger(__name__)

#: Below this score an LLM answer is synthesised again (once) with the judge's feedback.
RESYNTHESIS_THRESHOLD = 0.6
MIN_LEXICAL = 0.5
MIN_SEMANTIC = 0.6

Verdict = Literal["grounded", "partially_grounded", "ungrounded", "no_claims"]


class SentenceCheck(Frozen):
    sentence: str
    markers: tuple[int, ...]
    lexical: float
    semantic: float
    supported: bool


class GroundednessReport(Frozen):
    score: float
    verdict: Verdict
    sentences: tuple[SentenceCheck, ...]
    judge: Literal["llm", "offline"] = "offline"

    @property
    def unsupported(self) -> list[SentenceCheck]:
        return [s for s in self.sentences if not s.supported]


def claim_sentences(answer: str) -> list[str]:
    """The sentences of an answer that make claims: not the extractive header, the Sources
    list, or image lines."""
    body = answer.split("\nSources:\n", 1)[0]
    out: list[str] = []
    for line in body.splitlines():
        line = re.sub(r"\s*\(Source:[^)]*\)", "", line).strip().removeprefix("- ").strip()
        if not line or line.startswith("![") or line.startswith("Extractive answer ("):
            continue
        out.extend(s for s in _split_keep_markers(line) if strip_citations(s))
    return out


def _split_keep_markers(line: str) -> list[str]:
    """Sentences of a line, each keeping the markers that follow its full stop."""
    found = sentence_texts(line, min_chars=1)
    merged: list[str] = []
    for s in found:
        if merged and re.fullmatch(r"(\s*\[\d+\])+\s*\.?", s):
            merged[-1] += " " + s
        else:
            merged.append(s)
    return merged


def check(
    answer: str,
    cited_text: Mapping[int, str],
    embedder: TextEmbedder,
    *,
    llm: LLM | None = None,
) -> GroundednessReport:
    """Check every claim sentence of ``answer`` against ``cited_text`` (marker -> text)."""
    claims = claim_sentences(answer)
    if not claims:
        return GroundednessReport(score=1.0, verdict="no_claims", sentences=())
    checks = [_offline(s, cited_text, embedder) for s in claims]
    judge: Literal["llm", "offline"] = "offline"
    if llm is not None:
        verdicts = _llm_verdicts(llm, claims, cited_text)
        if verdicts is not None:
            checks = [
                c.model_copy(update={"supported": v}) for c, v in zip(checks, verdicts, strict=True)
            ]
            judge = "llm"
    score = sum(c.supported for c in checks) / len(checks)
    verdict: Verdict = (
        "grounded" if score >= 0.999 else "ungrounded" if score < 0.5 else "partially_grounded"
    )
    return GroundednessReport(
        score=round(score, 4), verdict=verdict, sentences=tuple(checks), judge=judge
    )


def _offline(sentence: str, cited_text: Mapping[int, str], embedder: TextEmbedder) -> SentenceCheck:
    markers = tuple(markers_in(sentence))
    claim = strip_citations(sentence).removesuffix(".")
    sources = [cited_text[m] for m in markers if cited_text.get(m)]
    if not markers or not sources:
        return SentenceCheck(
            sentence=sentence, markers=markers, lexical=0.0, semantic=0.0, supported=False
        )
    claim_terms = set(terms(claim))
    source_terms = set().union(*(set(terms(t)) for t in sources))
    lexical = len(claim_terms & source_terms) / len(claim_terms) if claim_terms else 1.0
    if _quotes(claim, sources):  # a verbatim quotation is its own best match: nothing to embed
        semantic = 1.0
    else:
        pieces = [p for t in sources for p in sentence_texts(t, min_chars=1)] or sources
        vectors = np.asarray(embedder.embed([claim, *pieces]))
        semantic = float(np.max(vectors[1:] @ vectors[0]))
    supported = (lexical >= MIN_LEXICAL and semantic >= MIN_SEMANTIC) or lexical >= 0.9
    return SentenceCheck(
        sentence=sentence,
        markers=markers,
        lexical=round(lexical, 4),
        semantic=round(semantic, 4),
        supported=supported,
    )


def _quotes(claim: str, sources: Sequence[str]) -> bool:
    """Is ``claim`` (at least a few words) a verbatim passage of one of ``sources`` (whitespace
    aside)? The extractive answer's sentences are."""
    text = " ".join(claim.split())
    if len(text.split()) < 3:
        return False
    return any(text in " ".join(source.split()) for source in sources)


class _LlmChecks(Closed):
    supported: list[bool]


def _llm_verdicts(
    llm: LLM, claims: Sequence[str], cited_text: Mapping[int, str]
) -> list[bool] | None:
    from kgrag.llm import BudgetExceededError, ChatMessage, LLMError

    evidence = "\n".join(f"[{m}] {t[:1200]}" for m, t in sorted(cited_text.items()))
    listing = "\n".join(f"{i}. {s}" for i, s in enumerate(claims, start=1))
    prompt = render_prompt(
        "kgrag.agent", "groundedness_check", evidence=evidence, sentences=listing
    )
    try:
        result, _ = llm.chat_json([ChatMessage(role="user", content=prompt)], _LlmChecks)
    except BudgetExceededError:
        return None
    except LLMError as e:
        log.warning("the LLM groundedness judge failed, keeping the offline check: %s", e)
        return None
    if len(result.supported) != len(claims):
        log.warning(
            "the LLM groundedness judge answered for %d of %d sentences",
            len(result.supported),
            len(claims),
        )
        return None
    return list(result.supported)


def remove_unsupported(answer: str, report: GroundednessReport, *, flag: bool = False) -> str:
    """The answer without its unsupported sentences (or with them flagged ``[unsupported]``)."""
    out = answer
    for c in report.unsupported:
        if flag:
            out = out.replace(c.sentence, f"{c.sentence} [unsupported]", 1)
        else:
            out = out.replace(c.sentence, "", 1)
    out = re.sub(r"(?m)^-\s*$\n?", "", out)
    out = re.sub(r"[ \t]{2,}", " ", out)
    return re.sub(r"\n{3,}", "\n\n", out).strip()
