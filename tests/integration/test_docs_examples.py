"""Every Python example of docs/integrations.md and docs/mcp.md, run as written against the demo
corpus (the roster readable by ``group:maintenance`` only) on the embedded store, with
``KGRAG_STORE`` pointing at it; their output must hold the cited answer, the evidence and the
trace. The MCP example starts ``kgrag mcp`` over stdio with the SDK's client (the stdio transport
test: the questions are recorded as asked by the configured user). The examples do not depend
on the engine; the library calls they make are tested on both engines by test_mcp.py,
test_async_api.py and test_retrievers.py."""

from __future__ import annotations

import os
import re
import runpy
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kgrag.graph import open_store
from tests.support.demo_agent import DemoCorpus, demo_agent

ROOT = Path(__file__).resolve().parents[2]
DOCS = {"integrations": ROOT / "docs" / "integrations.md", "mcp": ROOT / "docs" / "mcp.md"}


def examples(doc: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", doc.read_text(encoding="utf-8"), re.DOTALL)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoCorpus]:
    folder = tmp_path_factory.mktemp("docs")
    store = open_store(f"falkordb-lite:///{folder}/kg.db")
    yield demo_agent(store, folder)
    store.close()


@pytest.fixture
def run_example(
    demo: DemoCorpus, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> Iterator[object]:
    monkeypatch.setenv("KGRAG_STORE", f"falkordb-lite:///{demo.folder}/kg.db")
    monkeypatch.setenv("KGRAG_DATA_DIR", str(demo.folder / "data"))
    for name in ("KGRAG_LLM_MODEL", "KGRAG_API_KEYS_FILE"):
        monkeypatch.delenv(name, raising=False)
    # `kgrag` of this checkout for the MCP example's subprocess
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")

    def run(code: str, name: str) -> str:
        script = demo.folder / f"{name}.py"
        script.write_text(code, encoding="utf-8")
        capfd.readouterr()
        runpy.run_path(str(script), run_name="__main__")
        return capfd.readouterr().out

    yield run


def test_the_docs_have_the_examples_this_test_runs() -> None:
    assert len(examples(DOCS["integrations"])) == 4
    assert len(examples(DOCS["mcp"])) == 1


def test_the_sync_example(run_example: object, demo: DemoCorpus) -> None:
    out = run_example(examples(DOCS["integrations"])[0], "sync")  # type: ignore[operator]
    assert "Ada Lovelace" in out and "maintenance.md" in out
    query_id = re.search(r"trace: (q_\w+)", out)
    assert query_id and demo.agent.store.read("trace_read_query", {"id": query_id.group(1)})
    assert "evidence: [('chunk', 'Maintenance roster'" in out


def test_the_async_example(run_example: object) -> None:
    out = run_example(examples(DOCS["integrations"])[1], "async_api")  # type: ignore[operator]
    assert "Ada Lovelace" in out and "trace: q_" in out
    events = re.findall(r"event: (\w+)", out)
    assert events[0] == "plan" and events[-2:] == ["answer", "complete"]
    assert out.rstrip().endswith("stopped")


def test_the_retriever_examples(run_example: object) -> None:
    chain = run_example(examples(DOCS["integrations"])[2], "langchain")  # type: ignore[operator]
    first = chain.splitlines()[0].split()
    assert first[:3] == ["1", "chunk", first[2]] and first[2].endswith("maintenance.md")
    assert len(chain.splitlines()) == 3 and "Ada Lovelace" in chain
    index = run_example(examples(DOCS["integrations"])[3], "llamaindex")  # type: ignore[operator]
    lines = index.splitlines()
    assert len(lines) == 3 and "maintenance.md" in lines[0] and " q_" in lines[0]


def test_the_mcp_stdio_client_example(run_example: object, demo: DemoCorpus) -> None:
    out = run_example(examples(DOCS["mcp"])[0], "mcp_client")  # type: ignore[operator]
    assert "'ask'" in out and "'ingest'" in out and "Ada Lovelace" in out
    assert re.search(r"\[1\] \S*maintenance\.md page=None", out)
    query_id = re.search(r"trace of (q_\w+) has [1-9]\d* steps", out)
    assert query_id
    rows = demo.agent.store.read("trace_read_query", {"id": query_id.group(1)})
    assert rows[0]["user"] == "ann" and rows[0]["asked_by"] == "mcp:ann"
