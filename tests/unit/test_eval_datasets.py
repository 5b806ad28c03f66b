"""Loaders of the two HippoRAG dataset formats and the recall metric, on small real-format files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgrag.eval.datasets import EvalError, load_dataset
from kgrag.eval.metrics import distinct_titles, percentile, recall_at_k


def _write(path: Path, obj: object) -> Path:
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


MUSIQUE_Q = [
    {
        "id": "2hop__1_2",
        "question": "Who founded the company that makes the Widget?",
        "paragraphs": [
            {"idx": 0, "title": "Widget", "paragraph_text": "Made by Acme.", "is_supporting": True},
            {"idx": 1, "title": "Noise", "paragraph_text": "Unrelated.", "is_supporting": False},
            {"idx": 2, "title": "Acme", "paragraph_text": "Founded by Ada.", "is_supporting": True},
            {"idx": 3, "title": "Acme", "paragraph_text": "Founded by Ada.", "is_supporting": True},
        ],
        "answer": "Ada",
        "answerable": True,
    }
]
MUSIQUE_C = [
    {"title": "Widget", "text": "The Widget is made by Acme."},
    {"title": "Acme", "text": "Acme was founded by Ada."},
    {"title": "Noise", "text": "Unrelated."},
]
HOTPOT_Q = [
    {
        "_id": "5a8b57f25542995d1e6f1371",
        "question": "Were Scott Derrickson and Ed Wood of the same nationality?",
        "answer": "yes",
        "supporting_facts": [["Scott Derrickson", 0], ["Ed Wood", 0], ["Ed Wood", 2]],
        "context": [],
        "type": "comparison",
    }
]
HOTPOT_C = {
    "Scott Derrickson": ["Scott Derrickson is an American director.", " He lives in LA."],
    "Ed Wood": ["Edward Wood Jr. was an American filmmaker."],
    "Other": ["Something else."],
}


def test_musique_format(tmp_path: Path) -> None:
    ds = load_dataset(
        _write(tmp_path / "q.json", MUSIQUE_Q), _write(tmp_path / "c.json", MUSIQUE_C)
    )
    assert ds.format == "musique"
    assert len(ds.passages) == 3
    (q,) = ds.questions
    assert q.id == "2hop__1_2"
    assert q.gold_titles == ("Widget", "Acme")  # de-duplicated, in order
    assert q.answer == "Ada"
    assert ds.passages[1].title == "Acme" and ds.passages[1].text == "Acme was founded by Ada."


def test_hotpotqa_format_with_title_to_sentences_corpus(tmp_path: Path) -> None:
    ds = load_dataset(_write(tmp_path / "q.json", HOTPOT_Q), _write(tmp_path / "c.json", HOTPOT_C))
    assert ds.format == "hotpotqa"
    (q,) = ds.questions
    assert q.id == "5a8b57f25542995d1e6f1371"
    assert q.gold_titles == ("Scott Derrickson", "Ed Wood")
    by_title = {p.title: p.text for p in ds.passages}
    assert (
        by_title["Scott Derrickson"] == "Scott Derrickson is an American director. He lives in LA."
    )


def test_fingerprint_depends_on_corpus_only(tmp_path: Path) -> None:
    c = _write(tmp_path / "c.json", MUSIQUE_C)
    a = load_dataset(_write(tmp_path / "q.json", MUSIQUE_Q), c)
    b = load_dataset(_write(tmp_path / "q2.json", MUSIQUE_Q), c, limit=1)
    changed = [dict(p) for p in MUSIQUE_C]
    changed[2]["text"] = "Changed."
    other = load_dataset(tmp_path / "q.json", _write(tmp_path / "c2.json", changed))
    assert a.fingerprint == b.fingerprint != other.fingerprint


def test_limit_keeps_first_questions(tmp_path: Path) -> None:
    questions = [dict(MUSIQUE_Q[0], id=f"q{n}") for n in range(4)]
    ds = load_dataset(
        _write(tmp_path / "q.json", questions), _write(tmp_path / "c.json", MUSIQUE_C), 2
    )
    assert [q.id for q in ds.questions] == ["q0", "q1"]


def test_gold_passage_missing_from_corpus_is_refused(tmp_path: Path) -> None:
    with pytest.raises(EvalError, match="'Acme' is not in the corpus"):
        load_dataset(
            _write(tmp_path / "q.json", MUSIQUE_Q), _write(tmp_path / "c.json", MUSIQUE_C[:1])
        )


def test_unknown_question_format_is_refused(tmp_path: Path) -> None:
    with pytest.raises(EvalError, match="neither 'paragraphs'"):
        load_dataset(
            _write(tmp_path / "q.json", [{"id": "x", "question": "Why?"}]),
            _write(tmp_path / "c.json", MUSIQUE_C),
        )


def test_missing_file_names_it(tmp_path: Path) -> None:
    with pytest.raises(EvalError, match="questions file not found"):
        load_dataset(tmp_path / "absent.json", _write(tmp_path / "c.json", MUSIQUE_C))


def test_recall_at_k_counts_distinct_titles() -> None:
    ranked = ["A", "A", "B", "C", None, "D"]
    assert distinct_titles(ranked) == ["A", "B", "C", "D"]
    assert recall_at_k(ranked, ["A", "C"], 2) == 0.5  # A, B in the top 2 distinct titles
    assert recall_at_k(ranked, ["A", "C"], 5) == 1.0
    assert recall_at_k(ranked, ["Z"], 5) == 0.0
    assert recall_at_k([], ["A"], 5) == 0.0


def test_percentile_interpolates() -> None:
    values = [10.0, 20.0, 30.0, 40.0, 50.0]
    assert percentile(values, 50) == 30.0
    assert percentile(values, 95) == pytest.approx(48.0)
    assert percentile([7.0], 95) == 7.0


def test_the_eval_store_is_kept_per_ingestion_fingerprint(tmp_path: Path) -> None:
    from kgrag.config import Settings
    from kgrag.eval.retrieval import ingestion_fingerprint, store_dir_name

    data = load_dataset(
        _write(tmp_path / "q.json", MUSIQUE_Q), _write(tmp_path / "c.json", MUSIQUE_C)
    )
    base = ingestion_fingerprint(Settings())
    assert base == ingestion_fingerprint(Settings())
    assert ingestion_fingerprint(Settings(chunk_overlap_tokens=7)) != base
    assert ingestion_fingerprint(Settings(text_model="another/model")) != base
    assert ingestion_fingerprint(Settings(step_timeout_s=3)) == base  # not an ingestion setting
    name = store_dir_name(data, "sentence-transformers/all-MiniLM-L6-v2", base)
    assert name.endswith(f"-{base}") and data.fingerprint in name


def test_the_fingerprint_reads_every_kgrag_text_module_ingestion_uses() -> None:
    """Chunk boundaries come from kgrag.text.sentences, entity words from kgrag.text.words: a
    change there changes what an ingestion stores, and a store kept for the old code was reused
    (the fingerprint read kgrag/ingest but not kgrag/text)."""
    import ast
    import importlib

    import kgrag
    from kgrag.eval.retrieval import ingestion_files

    root = Path(kgrag.__file__).resolve().parents[1]
    read = {f.resolve() for f in ingestion_files(root)}
    used = set()
    for source in (root / "kgrag" / "ingest").rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("kgrag.text"):
                used.add(node.module or "")
    assert "kgrag.text.sentences" in used
    for module in used:
        path = Path(importlib.import_module(module).__file__ or "").resolve()
        assert path in read, f"{module} shapes what ingestion stores but is not fingerprinted"


def test_per_question_rows_carry_recall() -> None:
    from kgrag.eval.retrieval import QuestionResult

    row = QuestionResult(
        id="q1", gold=("A", "B"), kgrag=("A", "C", "B"), dense=("C",), latency_ms=1.0
    ).row()
    assert row["kgrag_recall"] == {"recall@2": 0.5, "recall@5": 1.0}
    assert row["dense_recall"] == {"recall@2": 0.0, "recall@5": 0.0}
