"""Loaders for the two dataset formats of the HippoRAG repository.

* MuSiQue style: questions carry ``paragraphs`` (``title``, ``paragraph_text``, ``is_supporting``);
  the corpus is a list of ``{"title", "text"}``.
* HotpotQA / 2Wiki style: questions carry ``supporting_facts`` (``[[title, sentence_index], ...]``);
  the corpus maps a title to its list of sentences (or, as some copies have it, a list of
  ``{"title", "text"}`` too).

A passage is identified by its title, as in the HippoRAG papers' recall metric.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from kgrag.core import Frozen
from kgrag.errors import KgragError

Format = Literal["musique", "hotpotqa"]


class EvalError(KgragError):
    """An evaluation input could not be read or does not match a known format."""


class Passage(Frozen):
    title: str
    text: str


class EvalQuestion(Frozen):
    id: str
    question: str
    gold_titles: tuple[str, ...]
    """Titles of the supporting passages, de-duplicated, in the dataset's order."""
    answer: str | None = None
    aliases: tuple[str, ...] = ()
    """Other accepted spellings of the answer (MuSiQue ``answer_aliases``)."""


class Dataset(Frozen):
    format: Format
    questions: tuple[EvalQuestion, ...]
    passages: tuple[Passage, ...]
    fingerprint: str
    """sha256 (hex, 16 chars) of the corpus passages: equal corpora share a store."""


def _read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        raise EvalError(f"{what} file not found: {path}") from e
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise EvalError(f"{what} file {path} is not readable JSON: {e}") from e


def _dedupe(titles: list[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(t for t in titles if t))


def parse_question(raw: Any, position: int) -> tuple[EvalQuestion, Format]:
    """One question of either format; the format is told by its fields."""
    if not isinstance(raw, dict) or not isinstance(raw.get("question"), str):
        raise EvalError(f"question #{position} has no 'question' text")
    qid = str(raw.get("id") or raw.get("_id") or position)
    answer = raw.get("answer")
    answer = answer if isinstance(answer, str) else None
    raw_aliases = raw.get("answer_aliases")
    aliases = tuple(str(a) for a in raw_aliases) if isinstance(raw_aliases, list) else ()
    if "paragraphs" in raw:
        titles = [
            str(p["title"])
            for p in raw["paragraphs"]
            if isinstance(p, dict) and p.get("is_supporting") and "title" in p
        ]
        fmt: Format = "musique"
    elif "supporting_facts" in raw:
        titles = [
            str(f[0])
            for f in raw["supporting_facts"]
            if isinstance(f, list | tuple) and len(f) >= 1
        ]
        fmt = "hotpotqa"
    else:
        raise EvalError(
            f"question {qid!r} has neither 'paragraphs' (MuSiQue) nor 'supporting_facts' "
            "(HotpotQA): not a HippoRAG-format question"
        )
    if not titles:
        raise EvalError(f"question {qid!r} names no supporting passage")
    return (
        EvalQuestion(
            id=qid,
            question=raw["question"],
            gold_titles=_dedupe(titles),
            answer=answer,
            aliases=aliases,
        ),
        fmt,
    )


def parse_corpus(raw: Any) -> tuple[Passage, ...]:
    """A list of ``{title, text}`` or a mapping title -> sentences (or -> text)."""
    try:
        if isinstance(raw, list):
            return tuple(Passage(title=str(p["title"]), text=str(p["text"])) for p in raw)
        if isinstance(raw, dict):
            out = []
            for title, body in raw.items():
                text = "".join(body) if isinstance(body, list) else str(body)
                out.append(Passage(title=str(title), text=text.strip()))
            return tuple(out)
    except (KeyError, TypeError, ValidationError) as e:
        raise EvalError(f"corpus entry is not {{'title', 'text'}}: {e}") from e
    raise EvalError("corpus must be a list of {title, text} or a mapping title -> sentences")


def corpus_fingerprint(passages: tuple[Passage, ...]) -> str:
    h = hashlib.sha256()
    for p in passages:
        h.update(p.title.encode())
        h.update(b"\x00")
        h.update(p.text.encode())
        h.update(b"\x01")
    return h.hexdigest()[:16]


def load_dataset(questions_path: Path, corpus_path: Path, limit: int | None = None) -> Dataset:
    """Read questions and corpus; every gold title must be in the corpus."""
    raw_questions = _read_json(questions_path, "questions")
    if isinstance(raw_questions, dict) and "data" in raw_questions:
        raw_questions = raw_questions["data"]
    if not isinstance(raw_questions, list) or not raw_questions:
        raise EvalError(f"questions file {questions_path} must hold a non-empty JSON list")
    parsed = [parse_question(q, n) for n, q in enumerate(raw_questions)]
    formats = {fmt for _q, fmt in parsed}
    if len(formats) > 1:
        raise EvalError(f"questions file {questions_path} mixes formats: {sorted(formats)}")
    questions = tuple(q for q, _fmt in parsed)
    if limit is not None:
        questions = questions[: max(0, limit)]
    passages = parse_corpus(_read_json(corpus_path, "corpus"))
    if not passages:
        raise EvalError(f"corpus file {corpus_path} holds no passage")
    titles = {p.title for p in passages}
    for q in questions:
        missing = [t for t in q.gold_titles if t not in titles]
        if missing:
            raise EvalError(
                f"question {q.id!r}: supporting passage {missing[0]!r} is not in the corpus "
                f"{corpus_path}; are questions and corpus from the same dataset?"
            )
    return Dataset(
        format=formats.pop(),
        questions=questions,
        passages=passages,
        fingerprint=corpus_fingerprint(passages),
    )
