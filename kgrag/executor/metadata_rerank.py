"""Metadata-aware reranking: combine a hit's retrieval score with its document's metadata.

A rule file (TOML, ``Settings.rerank_rules``) holds named rule sets; a ``rerank`` step names one
with ``parameters.rules``. Each hit's final score is a sum of contributions, every one of them
recorded for the trace::

    score = retrieval_weight * retrieval score
          + authority.weight * (best value of the document's tags, else of its type, else default)
          + recency.weight   * 0.5 ** (age in days / half_life_days)
          + source.weight    * (value of the first URI pattern the document matches, else default)

Ages are counted from ``recency.reference_date`` when the rule set gives one, else from the
newest date among the candidates, so the same hits and rules always give the same order (no
wall clock). A document's date is its ``date:YYYY-MM-DD`` tag (from the ingestion manifest), else
when it was ingested. Ties keep the incoming order. See docs/reranking.md.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import logging
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, model_validator

from kgrag.core import Frozen, Hit
from kgrag.errors import ConfigError, ExecutionError

__all__ = [
    "CANDIDATES",
    "AuthorityRule",
    "DocumentMeta",
    "FactorScore",
    "RecencyRule",
    "RuleBook",
    "RuleSet",
    "SourceRule",
    "apply_rules",
    "document_meta",
    "load_rule_book",
]

logger = logging.getLogger(__name__)

#: Candidates the base rerank keeps before the rules reorder them (the step's ``k`` cuts after).
CANDIDATES = 200


class AuthorityRule(Frozen):
    """How much a document counts, by tag (the best matching tag wins) or by document type."""

    weight: float = Field(default=0.0, ge=0.0)
    tags: dict[str, float] = Field(default_factory=dict)
    modalities: dict[str, float] = Field(default_factory=dict)
    default: float = 0.0


class RecencyRule(Frozen):
    """Newer above older: half-life decay of the document's age."""

    weight: float = Field(default=0.0, ge=0.0)
    half_life_days: float = Field(default=365.0, gt=0.0)
    reference_date: dt.date | None = None
    """Age is counted from this day; none: from the newest candidate (deterministic)."""
    undated: float = 0.0
    """The value for a document with no readable date."""


class SourceRule(Frozen):
    """Source priority by URI pattern (``fnmatch``, first match wins, in file order)."""

    weight: float = Field(default=0.0, ge=0.0)
    priorities: dict[str, float] = Field(default_factory=dict)
    default: float = 0.0


class RuleSet(Frozen):
    description: str = ""
    retrieval_weight: float = Field(default=1.0, ge=0.0)
    authority: AuthorityRule = AuthorityRule()
    recency: RecencyRule = RecencyRule()
    source: SourceRule = SourceRule()


class RuleBook(Frozen):
    """Every rule set of one rule file, by name; ``default`` (the file's top-level
    ``default = "NAME"``, or ``KGRAG_RERANK_RULESET``) reranks every question's evidence."""

    rulesets: dict[str, RuleSet] = Field(default_factory=dict)
    default: str | None = None
    path: str | None = None

    @model_validator(mode="after")
    def _default_exists(self) -> RuleBook:
        if self.default is not None and self.default not in self.rulesets:
            known = ", ".join(sorted(self.rulesets)) or "none"
            raise ValueError(f"default rule set {self.default!r} is not defined (known: {known})")
        return self

    def get(self, name: str) -> RuleSet:
        try:
            return self.rulesets[name]
        except KeyError:
            known = ", ".join(sorted(self.rulesets)) or "none"
            raise ExecutionError(
                f"no rerank rule set {name!r} in {self.path or 'the rule file'} (known: {known})"
            ) from None


class DocumentMeta(Frozen):
    """What the rules read about a hit's document."""

    id: str
    uri: str = ""
    modality: str = ""
    tags: tuple[str, ...] = ()
    date: dt.date | None = None


class FactorScore(Frozen):
    """One hit's score, factor by factor (what the trace shows)."""

    id: str
    document_id: str | None
    retrieval: float
    authority: float
    recency: float
    source: float
    score: float
    why: tuple[str, ...] = ()


def load_rule_book(path: Path, default: str | None = None) -> RuleBook:
    """Read a TOML rule file: ``[rulesets.NAME]`` tables (see docs/examples/rerank_rules.toml);
    ``default`` (a rule set's name) replaces the file's own ``default``.

    Raises :class:`~kgrag.errors.ConfigError` naming the file and the field at fault."""
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ConfigError(f"cannot read the rerank rule file {path}: {e.strerror or e}") from e
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"the rerank rule file {path} is not valid TOML: {e}") from e
    try:
        if default is not None:
            raw["default"] = default
        return RuleBook.model_validate({**raw, "path": str(path)})
    except ValidationError as e:
        first = e.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "(root)"
        raise ConfigError(f"the rerank rule file {path}: {where}: {first['msg']}") from e


def apply_rules(
    hits: Sequence[Hit], documents: Mapping[str, DocumentMeta], rules: RuleSet
) -> list[FactorScore]:
    """Score every hit under ``rules``; best first, ties in the incoming order."""
    dates = [
        d.date for h in hits if (d := documents.get(h.document_id or "")) and d.date is not None
    ]
    reference = rules.recency.reference_date or (max(dates) if dates else None)
    scored: list[FactorScore] = []
    for hit in hits:
        meta = documents.get(hit.document_id or "")
        why: list[str] = []
        authority = _authority(meta, rules.authority, why)
        recency = _recency(meta, rules.recency, reference, why)
        source = _source(meta, rules.source, why)
        retrieval = rules.retrieval_weight * hit.score
        total = retrieval + authority + recency + source
        scored.append(
            FactorScore(
                id=hit.id,
                document_id=hit.document_id,
                retrieval=round(retrieval, 6),
                authority=round(authority, 6),
                recency=round(recency, 6),
                source=round(source, 6),
                score=round(total, 6),
                why=tuple(why),
            )
        )
    order = sorted(range(len(scored)), key=lambda i: (-scored[i].score, i))
    return [scored[i] for i in order]


def _authority(meta: DocumentMeta | None, rule: AuthorityRule, why: list[str]) -> float:
    if rule.weight == 0.0:
        return 0.0
    value, reason = rule.default, "default"
    tags = {t.lower() for t in meta.tags} if meta else set()
    matched = [(v, t) for t, v in rule.tags.items() if t.lower() in tags]
    if matched:
        value, tag = max(matched)
        reason = f"tag {tag!r}"
    elif meta and meta.modality in rule.modalities:
        value, reason = rule.modalities[meta.modality], f"type {meta.modality!r}"
    why.append(f"authority {value:g} ({reason}) x {rule.weight:g}")
    return rule.weight * value


def _recency(
    meta: DocumentMeta | None, rule: RecencyRule, reference: dt.date | None, why: list[str]
) -> float:
    if rule.weight == 0.0:
        return 0.0
    if meta is None or meta.date is None or reference is None:
        why.append(f"recency {rule.undated:g} (undated) x {rule.weight:g}")
        return rule.weight * rule.undated
    age = max(0, (reference - meta.date).days)
    value = 0.5 ** (age / rule.half_life_days)
    why.append(
        f"recency {value:.3f} ({meta.date.isoformat()}, {age} days before "
        f"{reference.isoformat()}, half-life {rule.half_life_days:g}) x {rule.weight:g}"
    )
    return rule.weight * value


def _source(meta: DocumentMeta | None, rule: SourceRule, why: list[str]) -> float:
    if rule.weight == 0.0:
        return 0.0
    value, reason = rule.default, "default"
    if meta is not None:
        for pattern, priority in rule.priorities.items():
            if fnmatch.fnmatchcase(meta.uri, pattern):
                value, reason = priority, f"uri matches {pattern!r}"
                break
    why.append(f"source {value:g} ({reason}) x {rule.weight:g}")
    return rule.weight * value


def _parse_date(value: Any) -> dt.date | None:
    if not isinstance(value, str) or len(value) < 10:
        return None
    try:
        return dt.date.fromisoformat(value[:10])
    except ValueError:
        return None


def document_meta(row: Mapping[str, Any]) -> DocumentMeta:
    """What the rules read of a document, from a ``documents_by_ids`` row."""
    return DocumentMeta(
        id=row["id"],
        uri=row.get("uri") or "",
        modality=row.get("modality") or "",
        tags=tuple(row.get("tags") or ()),
        date=_parse_date(row.get("date")),
    )
