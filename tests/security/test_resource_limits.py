"""SECURITY.md's resource limits that stop the work, not only the reply: a recording longer than
``KGRAG_MAX_MEDIA_SECONDS`` is refused after probing, before it is decoded (a tiny FLAC file can
hold ten hours of silence: decoded whole it is 36,000 s x 16 kHz x 4 bytes = 2.3 GB of samples)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.agent.limits import QueryLimits
from kgrag.config import DEFAULT_LLM_MAX_TOKENS_PER_QUERY, Settings
from kgrag.core import OPERATOR
from kgrag.errors import IngestError, MediaTooLongError
from kgrag.executor.trace import read_trace
from kgrag.llm import LLMClient
from kgrag.modalities import factory
from kgrag.modalities.audio import SAMPLE_RATE, check_media, decode_audio, stream_audio
from kgrag.planner.llm_bounds import LLM_PLAN_MAX_HOPS, LLM_PLAN_MAX_NODES, LLM_PLAN_MAX_TOKENS
from kgrag.planner.rule import fulltext_query
from kgrag.server.launch import serve_subprocess
from tests.support.engines import Engine
from tests.support.openai_server import LocalOpenAIServer

TEN_HOURS_S = 36_000
#: How much the ingesting process's peak memory may grow during the ingestion itself (its models
#: are loaded before): generous (a text file's embedding and the parse add about 150 MB here),
#: and far below the 2.3 GB that decoding the ten hours whole would add. Measured in the process
#: itself: a forked child's peak counts the pages it shares with its parent, so children's
#: figures say nothing about this process.
PEAK_GROWTH_BOUND_MB = 600


def _silence(path: Path, seconds: float, rate: int = 8000) -> Path:
    """A real FLAC file of ``seconds`` of silence (large frames: a few bytes per second)."""
    subprocess.run(
        [
            *("ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i", f"anullsrc=r={rate}:cl=mono"),
            *("-t", str(seconds), "-frame_size", "65535", "-compression_level", "0", str(path)),
        ],
        check=True,
        timeout=300,
    )
    return path


@pytest.fixture(scope="module")
def ten_hours(tmp_path_factory: pytest.TempPathFactory) -> Path:
    flac = _silence(tmp_path_factory.mktemp("media") / "ten-hours.flac", TEN_HOURS_S)
    assert flac.stat().st_size < 200_000  # tens of kilobytes for ten hours
    return flac


def test_a_small_file_holding_ten_hours_is_refused_by_probing_before_decoding(
    ten_hours: Path,
) -> None:
    with pytest.raises(MediaTooLongError) as info:
        check_media(ten_hours)  # the default limit: 4 h
    assert info.value.path == str(ten_hours)
    assert "36,000 s" in info.value.reason and "KGRAG_MAX_MEDIA_SECONDS" in info.value.reason
    with pytest.raises(MediaTooLongError):
        decode_audio(ten_hours, max_seconds=60)  # the decoder probes first too
    assert check_media(ten_hours, max_seconds=TEN_HOURS_S + 1) == pytest.approx(TEN_HOURS_S)


def test_a_concat_playlist_is_refused_naming_the_file(tmp_path: Path) -> None:
    target = _silence(tmp_path / "short.flac", 2)
    playlist = tmp_path / "list.wav"  # any suffix: the probed format is what counts
    playlist.write_text(f"ffconcat version 1.0\nfile '{target}'\n")
    with pytest.raises(IngestError) as info:
        check_media(playlist)
    assert info.value.path == str(playlist)
    # refused by its probed format, or by ffmpeg's safe mode / the file,pipe whitelist
    assert "'concat'" in info.value.reason or "not permitted" in info.value.reason
    assert check_media(target) == pytest.approx(2, abs=0.1)  # the control: a recording is read


_INGEST = """
import json, resource, sys
from kgrag.agent.agent import KnowledgeAgent
from kgrag.config import Settings
agent = KnowledgeAgent.open(Settings(store=sys.argv[1]))
agent.text_embedder.embed(["load the model before measuring"])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
report = agent.ingest(sys.argv[2:])
growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
agent.close()
print(json.dumps({"report": report.model_dump(mode="json"), "growth_kb": growth}))
"""


def test_ingest_refuses_ten_hours_naming_the_file_and_ingests_the_others_in_bounded_memory(
    ten_hours: Path, tmp_path: Path
) -> None:
    note = tmp_path / "note.txt"
    note.write_text("The lighthouse keeper logs the weather every morning at six.\n")
    env = {**os.environ, "KGRAG_DATA_DIR": str(tmp_path / "data"), "OMP_NUM_THREADS": "1"}
    env.pop("KGRAG_MAX_MEDIA_SECONDS", None)
    store = f"falkordb-lite:///{tmp_path}/kg.db"
    proc = subprocess.run(
        [sys.executable, "-c", _INGEST, store, str(ten_hours), str(note)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    report = out["report"]
    assert report["ingested"] == 1 and report["failed"] == 1, report
    [failure] = report["failures"]
    assert failure["path"] == str(ten_hours)
    assert "KGRAG_MAX_MEDIA_SECONDS" in failure["reason"] and "not decoded" in failure["reason"]
    assert report["stage_seconds"].get("transcribe", 0.0) == 0.0  # never reached the decoder
    assert out["growth_kb"] / 1024 < PEAK_GROWTH_BOUND_MB, out["growth_kb"]


def test_ask_upload_answers_422_naming_a_recording_over_the_limit(
    ten_hours: Path, tmp_path: Path
) -> None:
    env = {**os.environ, "KGRAG_DATA_DIR": str(tmp_path / "data"), "OMP_NUM_THREADS": "1"}
    env.pop("KGRAG_API_TOKEN", None)
    env.pop("KGRAG_MAX_MEDIA_SECONDS", None)
    store = f"falkordb-lite:///{tmp_path}/kg.db"
    with (
        serve_subprocess(store, env, tmp_path / "server.log") as up,
        httpx.Client(timeout=120) as http,
    ):
        answer = http.post(
            f"{up.base}/ask/upload",
            data={"question": "what is said in the attached recording?"},
            files={"files": ("ten-hours.flac", ten_hours.read_bytes(), "audio/flac")},
            headers={"Authorization": "Bearer local"},  # not a cross-site form
        )
    assert answer.status_code == 422, answer.text[:500]
    assert "ten-hours.flac" in answer.text and "KGRAG_MAX_MEDIA_SECONDS" in answer.text, answer.text


def test_recordings_are_decoded_in_windows_of_bounded_size(tmp_path: Path) -> None:
    flac = _silence(tmp_path / "25s.flac", 25)
    windows = [w.size for w in stream_audio(flac, window_s=10)]
    assert windows == [10 * SAMPLE_RATE, 10 * SAMPLE_RATE, 5 * SAMPLE_RATE]
    assert decode_audio(flac).size == 25 * SAMPLE_RATE  # the same samples, joined


# ----------------------------------------------------------------------------- LLM plan bounds

HOSTILE_FULLTEXT = (
    'valve" OR text:* AND (pump~2 ^9 NOT "x") \\ /re.*/ -ada +grace [a TO z] @text:{x}'
)


def _hostile_plan(question: str) -> dict[str, Any]:
    return {
        "plan": [
            {"step_id": 1, "type": "vector_search", "parameters": {"query": question, "k": 5}},
            {
                "step_id": 2,
                "type": "graph_query",
                "parameters": {
                    "template": "chunks_fulltext",
                    "params": {"query": HOSTILE_FULLTEXT},
                },
            },
            {
                "step_id": 3,
                "type": "multi_hop",
                "dependencies": [1],
                "parameters": {"seeds_from": [1], "hops": 3, "max_nodes": 100_000},
            },
            {
                "step_id": 4,
                "type": "llm_call",
                "dependencies": [1],
                "parameters": {
                    "prompt": "Summarise the valve notes.",
                    "sources": [1],
                    "max_tokens": 32_768,
                },
            },
        ],
        "traceability": True,
    }


def test_an_llm_plan_is_held_to_the_llm_bounds_and_its_fulltext_query_is_escaped(
    engine: Engine, openai_server: LocalOpenAIServer, tmp_path: Path
) -> None:
    question = "Who maintains the pressure valve?"
    note = tmp_path / "roster.md"
    note.write_text("The pressure valve is maintained by Ada. The feed pump by Grace.\n")
    store = engine.open()
    try:
        embedder = factory.text_embedder(Settings())
        assert KnowledgeAgent(store, embedder).ingest([str(note)]).ingested == 1

        def reply(body: dict[str, Any]) -> str:
            name = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
            if name == "plan":
                return json.dumps(_hostile_plan(question))
            if name == "_LlmVerdict":
                return json.dumps({"decision": "SATISFIED", "reason": "answered"})
            if name == "_LlmChecks":
                return json.dumps({"supported": []})
            return "Ada maintains it."

        openai_server.chat_handler = reply
        client = LLMClient("gpt-4o-mini", base_url=openai_server.base_url, api_key="t")
        answer = KnowledgeAgent(store, embedder, llm=client).ask(question)
        assert answer.planner == "llm"  # clamped, not refused: the plan ran
        steps = {
            s["step_id"]: s for s in read_trace(store, answer.query_id, OPERATOR).to_json()["steps"]
        }
        assert {i: steps[i]["status"] for i in (1, 2, 3, 4)} == dict.fromkeys((1, 2, 3, 4), "ok")
        fulltext = steps[2]["parameters"]["params"]["query"]
        assert fulltext == fulltext_query(HOSTILE_FULLTEXT)
        assert not set(fulltext) & set('"*~^()\\/:+-[]{}@')  # only words and the rule's " | "
        assert steps[2]["result_count"] >= 1  # "valve" still finds the passage
        hop = steps[3]["parameters"]
        assert (hop["hops"], hop["max_nodes"]) == (LLM_PLAN_MAX_HOPS, LLM_PLAN_MAX_NODES)
        assert "hops 3 clamped to 2" in steps[3]["explanation"]
        assert "max_tokens 32768 clamped" in steps[4]["explanation"]
        sent = [
            r.body
            for r in openai_server.requests_to("/v1/chat/completions")
            if "Summarise the valve notes." in json.dumps(r.body)
        ]
        assert sent and all(
            (b.get("max_tokens") or b.get("max_completion_tokens")) == LLM_PLAN_MAX_TOKENS
            for b in sent
        ), sent
    finally:
        store.close()


def test_a_question_has_a_token_budget_by_default(
    engine: Engine, openai_server: LocalOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("KGRAG_LLM_MAX_TOKENS_PER_QUERY", raising=False)
    settings = Settings()
    assert settings.llm_max_tokens_per_query == DEFAULT_LLM_MAX_TOKENS_PER_QUERY == 100_000
    seen: list[str] = []
    # a plan whose explanation alone is over the budget (the server counts words as tokens)
    wordy = {"source": "llm", "explanation": "word " * (DEFAULT_LLM_MAX_TOKENS_PER_QUERY + 1)}
    plan = {
        "plan": [
            {
                "step_id": 1,
                "type": "vector_search",
                "parameters": {"query": "valve"},
                "trace": wordy,
            }
        ],
        "traceability": True,
    }

    def reply(body: dict[str, Any]) -> str:
        name = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
        seen.append(name or "answer")
        return json.dumps(plan) if name == "plan" else "generated text"

    openai_server.chat_handler = reply
    client = LLMClient("gpt-4o-mini", base_url=openai_server.base_url, api_key="t")
    store = engine.open()
    try:
        embedder = factory.text_embedder(settings)
        limits = QueryLimits.from_settings(settings)
        answer = KnowledgeAgent(store, embedder, llm=client, limits=limits).ask("the valve?")
    finally:
        store.close()
    assert answer.exit_reason == "budget_exceeded"
    assert seen == ["plan"]  # the plan call spent the budget; nothing later was sent


# ------------------------------------------------------------------------------- cancellation


def _wait_for(condition: Callable[[], bool], what: str, bound_s: float = 120) -> None:
    deadline = time.monotonic() + bound_s
    while not condition():
        assert time.monotonic() < deadline, f"not seen within {bound_s} s: {what}"
        time.sleep(0.05)


def test_a_streamed_question_whose_client_disconnects_stops_making_llm_calls(
    openai_server: LocalOpenAIServer, tmp_path: Path
) -> None:
    store = f"falkordb-lite:///{tmp_path}/kg.db"
    env = {**os.environ, "KGRAG_DATA_DIR": str(tmp_path / "data"), "OMP_NUM_THREADS": "1"}
    for name in ("KGRAG_API_TOKEN", "KGRAG_LLM_MAX_TOKENS_PER_QUERY", "KGRAG_STORE"):
        env.pop(name, None)
    note = tmp_path / "roster.md"
    note.write_text("The pressure valve is maintained by Ada. She inspects it every Monday.\n")
    with KnowledgeAgent.open(Settings(store=store, data_dir=tmp_path / "data")) as agent:
        assert agent.ingest([str(note)]).ingested == 1
    log = tmp_path / "server.log"
    question = "Who maintains the pressure valve?"
    seen: list[str] = []

    def reply(body: dict[str, Any]) -> str:
        name = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
        seen.append(name or "answer")
        if name == "plan":
            return json.dumps(
                {
                    "plan": [
                        {"step_id": 1, "type": "vector_search", "parameters": {"query": question}}
                    ],
                    "traceability": True,
                }
            )
        if name == "_LlmVerdict":  # answered once the server has seen its client go away
            _wait_for(lambda: "client disconnected" in log.read_text(), "the disconnect")
            return json.dumps({"decision": "SATISFIED", "reason": "answered"})
        if name == "_LlmChecks":
            return json.dumps({"supported": [True]})
        return "Ada maintains it [1]."

    openai_server.chat_handler = reply
    env |= {
        "KGRAG_LLM_MODEL": "gpt-4o-mini",
        "KGRAG_OPENAI_BASE_URL": openai_server.base_url,
        "KGRAG_OPENAI_API_KEY": "t",
    }
    with serve_subprocess(store, env, log) as up:
        with (
            httpx.Client(timeout=120) as http,
            http.stream("POST", f"{up.base}/ask/stream", json={"question": question}) as response,
        ):
            assert response.status_code == 200
            for line in response.iter_lines():
                if line == "event: plan":
                    break  # the client goes away after the plan
        _wait_for(lambda: "streamed ask stopped" in log.read_text(), "the run stopping")
    # the run stopped at its next event after the disconnect: after the plan's step, or (when
    # the judge was already asked) after the judge; never the answer or its groundedness check
    assert seen in (["plan"], ["plan", "_LlmVerdict"]), seen
