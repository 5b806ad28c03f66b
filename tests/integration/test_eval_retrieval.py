"""`kgrag eval retrieval` end to end on both engines with real MiniLM embeddings: a small
subset of the shared MuSiQue data (the first questions and their own paragraphs as the corpus),
and a HotpotQA-format dataset written here; JSON shape, store reuse and refusal of a foreign
store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgrag.cli import app
from kgrag.eval.datasets import EvalError
from tests.support.engines import Engine

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
QUESTIONS = DATA / "musique_dev.json"


@pytest.fixture(scope="module")
def subset(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    if not QUESTIONS.is_file():
        pytest.skip(f"missing shared data file {QUESTIONS}")
    root = tmp_path_factory.mktemp("eval")
    questions = json.loads(QUESTIONS.read_text(encoding="utf-8"))[:3]
    corpus = {(p["title"], p["paragraph_text"]): None for q in questions for p in q["paragraphs"]}
    q_path = root / "questions.json"
    c_path = root / "corpus.json"
    q_path.write_text(json.dumps(questions), encoding="utf-8")
    c_path.write_text(json.dumps([{"title": t, "text": x} for t, x in corpus]), encoding="utf-8")
    return q_path, c_path


def _run(engine: Engine, *args: str) -> dict[str, object]:
    result = CliRunner(env=engine.env()).invoke(
        app, ["eval", "retrieval", *args, "--store", engine.uri, "--json"]
    )
    assert result.exit_code == 0, result.output
    out: dict[str, object] = json.loads(result.stdout)
    return out


def test_eval_cli_musique_subset_json_shape_and_reuse(
    subset: tuple[Path, Path], engine: Engine
) -> None:
    q_path, c_path = subset
    first = _run(engine, "--questions", str(q_path), "--corpus", str(c_path), "--limit", "2")
    assert first["questions"] == 2
    passages = len(json.loads(c_path.read_text(encoding="utf-8")))
    assert first["passages"] == passages > 20
    for system in ("kgrag", "dense"):
        recall = first[system]
        assert isinstance(recall, dict) and set(recall) >= {"recall@2", "recall@5"}
        assert 0.0 <= recall["recall@2"] <= recall["recall@5"] <= 1.0
    latency = first["latency_ms"]
    assert isinstance(latency, dict) and 0 < latency["p50"] <= latency["p95"]
    assert first["ingest"]["ingested"] == passages  # type: ignore[index]
    # the gold passages of 20 are within reach: dense retrieval finds some of them
    assert first["dense"]["recall@5"] > 0  # type: ignore[index]

    again = _run(engine, "--questions", str(q_path), "--corpus", str(c_path), "--limit", "2")
    assert again["ingest"]["ingested"] == 0 and again["ingest"]["skipped"] == passages  # type: ignore[index]
    assert again["kgrag"] == first["kgrag"] and again["dense"] == first["dense"]


def test_eval_cli_refuses_a_store_of_another_corpus(
    subset: tuple[Path, Path], engine: Engine
) -> None:
    q_path, c_path = subset
    tmp_path = engine.folder
    small = json.loads(c_path.read_text(encoding="utf-8"))
    hotpot_q = tmp_path / "hq.json"
    hotpot_c = tmp_path / "hc.json"
    hotpot_q.write_text(
        json.dumps(
            [
                {
                    "_id": "h1",
                    "question": f"What is {small[0]['title']}?",
                    "answer": "x",
                    "supporting_facts": [[small[0]["title"], 0]],
                }
            ]
        ),
        encoding="utf-8",
    )
    hotpot_c.write_text(json.dumps({small[0]["title"]: [small[0]["text"]]}), encoding="utf-8")
    hotpot = _run(engine, "--questions", str(hotpot_q), "--corpus", str(hotpot_c))
    assert hotpot["format"] == "hotpotqa" and hotpot["questions"] == 1 and hotpot["passages"] == 1
    assert hotpot["dense"]["recall@2"] == 1.0  # type: ignore[index]  # one passage: found

    args = ["--store", engine.uri, "--questions", str(q_path), "--corpus", str(c_path)]
    result = CliRunner(env=engine.env()).invoke(app, ["eval", "retrieval", *args])
    assert result.exit_code != 0
    assert isinstance(result.exception, EvalError)  # `kgrag` prints it as one line, exit 1
    assert "not passages of this corpus" in str(result.exception)
