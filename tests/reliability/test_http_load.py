"""A bounded load on a real ``kgrag serve`` on 127.0.0.1 (bench/load_http.py with small numbers):
concurrent POST /ask while ``kgrag ingest`` adds documents from another process to the same
embedded store. Every request must succeed, the ingestion too, and the server must stay up."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.reliability

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "load_http.py"


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("load_http", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_concurrent_asks_while_another_process_ingests() -> None:
    pytest.importorskip("uvicorn")
    load = _load_script()
    result = load.main(
        ["--requests", "12", "--concurrency", "4", "--max-seconds", "90", "--documents", "6"]
    )
    print(  # the figures, visible with -s
        f"POST /ask x{result['requests']} at concurrency {result['concurrency']}: "
        f"{result['requests_per_s']} requests/s, p95 {result['latency_ms']['p95']} ms"
    )
    assert result["requests"] > 0
    assert result["statuses"] == {"200": result["requests"]}, result["statuses"]
    assert result["server_alive"]
    ingest = result["ingest_during_load"]
    assert ingest["exit_code"] == 0, ingest
    assert ingest["report"]["ingested"] == 2 and ingest["report"]["failed"] == 0
