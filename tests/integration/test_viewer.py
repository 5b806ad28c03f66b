"""The trace viewer, end to end: a real question on both engines (embedded FalkorDB, Neo4j) with
real embeddings, ``kgrag trace --html`` and ``kgrag audit --html`` through the CLI, and the pages
opened in headless Chromium (Debian's ``chromium``): the graph's nodes are drawn by the page's
script, hostile document text cannot run, and a screenshot shows more than a blank page."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.core import OPERATOR
from kgrag.executor.trace import read_trace
from kgrag.viewer import embed_json, layout_trace, render_trace_html
from tests.support.across import compared_across_engines, shared_folder  # noqa: F401 (a fixture)
from tests.support.engines import Engine

#: Plans run and answers given must be the same on both engines (tests/support/across.py).
pytestmark = pytest.mark.usefixtures("compared_across_engines")

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="headless Chromium is not installed (apt-get install chromium)"
)
HOSTILE = (
    "</script><script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\">"
)


@pytest.fixture(scope="module")
def traced(
    module_engine: Engine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Engine, str, Path]]:
    """A store with two documents (one with hostile text) and one answered question."""
    root = module_engine.folder
    # the same paths for both engines (tests/support/across.py)
    corpus = shared_folder(tmp_path_factory, "test_viewer")
    (corpus / "roster.md").write_text(
        "# Maintenance roster\n\nThe Feed Pump FP-2 is maintained by Grace Hopper, who also "
        "keeps the spare seals.\n\nThe Pressure Valve PV-7 is maintained by Ada Lovelace.\n"
    )
    (corpus / "incidents.txt").write_text(
        f"Incident log.\n\nOn 3 March the Feed Pump FP-2 lost pressure after a seal failed. "
        f"Grace Hopper replaced the seal. {HOSTILE}\n"
    )
    with KnowledgeAgent.open(module_engine.settings(data_dir=root / "data")) as agent:
        report = agent.ingest([str(corpus)])
        assert report.ingested == 2, report.failures
        answer = agent.ask("Who maintains the Feed Pump FP-2?")
    yield module_engine, answer.query_id, root


def _cli(engine: Engine, *args: str) -> subprocess.CompletedProcess[str]:
    """``kgrag ARGS --store URI`` in a subprocess pointed at ``engine``."""
    return subprocess.run(
        [sys.executable, "-m", "kgrag.cli", *args, "--store", engine.uri],
        env={**os.environ, **engine.env()},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _dump_dom(page: Path, fragment: str = "") -> str:
    assert CHROMIUM is not None
    done = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--virtual-time-budget=3000",
            "--dump-dom",
            page.as_uri() + (f"#{fragment}" if fragment else ""),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_embedded_json_cannot_close_its_script_element() -> None:
    text = embed_json({"t": "</script><!-- & \u2028"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"t": "</script><!-- & \u2028"}


def test_layout_puts_steps_below_what_they_depend_on(traced: tuple[Engine, str, Path]) -> None:
    engine, qid, _ = traced
    with engine.open() as store:
        trace = read_trace(store, qid, OPERATOR)
    layout = layout_trace(trace)
    by_id = {n.id: n for n in layout.nodes}
    assert by_id["query"].y < by_id["plan"].y
    for step in trace.to_json()["steps"]:
        for dep in step["dependencies"]:
            assert by_id[f"step:{dep}"].y < by_id[f"step:{step['step_id']}"].y
    evidence = [n for n in layout.nodes if n.kind == "evidence"]
    assert evidence and all(by_id["answer"].y > n.y for n in evidence)
    assert {e.type for e in layout.edges} >= {"PLANNED", "HAS_STEP", "RETURNED", "CITES"}
    # no two nodes overlap
    boxes = [(n.x, n.y) for n in layout.nodes]
    assert len(set(boxes)) == len(boxes)
    assert all(0 <= n.x <= layout.width - layout.node_w for n in layout.nodes)


def test_cli_trace_html_writes_a_self_contained_page(traced: tuple[Engine, str, Path]) -> None:
    engine, qid, root = traced
    page = root / "trace.html"
    done = _cli(engine, "trace", qid, "--html", str(page))
    assert done.returncode == 0, done.stderr
    html = page.read_text()
    assert qid in html
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html), "loads something"
    assert "</script><script>document.title" not in html
    # exactly the two script elements of the page itself
    assert html.count("<script") == 2


@needs_chromium
def test_chromium_draws_every_node_and_runs_no_document_text(
    traced: tuple[Engine, str, Path],
) -> None:
    engine, qid, root = traced
    with engine.open() as store:
        trace = read_trace(store, qid, OPERATOR)
    page = root / "viewer.html"
    page.write_text(render_trace_html(trace))
    expected = len(layout_trace(trace).nodes)
    dom = _dump_dom(page)
    drawn = re.findall(r'<g class="node (\w+)', dom)
    assert len(drawn) == expected
    assert set(drawn) == {"query", "plan", "step", "evidence", "answer"}
    assert f'data-rendered="{expected}"' in dom
    assert dom.count('class="edge ') >= expected - 1
    title = re.search(r"<title>(.*?)</title>", dom)
    assert title is not None and title.group(1) == f"kgrag trace {qid}", "document text ran"
    # the details panel shows the query from the start, as text
    assert "Who maintains the Feed Pump FP-2?" in dom.split('id="details"')[1]


@needs_chromium
def test_a_step_shows_its_cypher_parameters_and_evidence(traced: tuple[Engine, str, Path]) -> None:
    engine, qid, root = traced
    with engine.open() as store:
        trace = read_trace(store, qid, OPERATOR)
    step = next(s for s in trace.to_json()["steps"] if s["status"] == "ok" and s["cypher"])
    page = root / "step.html"
    page.write_text(render_trace_html(trace))
    dom = _dump_dom(page, fragment=f"step:{step['step_id']}")
    details = dom.split('id="details"')[1]
    assert f"Step {step['step_id']}: {step['type']}" in details
    assert "<h3>Cypher</h3>" in details and "MATCH" in details
    assert "<h3>parameters</h3>" in details
    assert f"returned evidence ({len(step['returned'])})" in details
    assert step["returned"][0]["id"] in details
    assert re.search(r'<g class="node step selected" data-id="step:' + str(step["step_id"]), dom)


@needs_chromium
def test_screenshot_shows_the_graph(traced: tuple[Engine, str, Path]) -> None:
    from PIL import Image

    engine, qid, root = traced
    page = root / "shot.html"
    assert _cli(engine, "trace", qid, "--html", str(page)).returncode == 0
    png = root / "trace.png"
    assert CHROMIUM is not None
    subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1400,1600",  # a rule plan with a lexical stage is 6 steps deep
            "--virtual-time-budget=3000",
            f"--screenshot={png}",
            page.as_uri(),
        ],
        capture_output=True,
        timeout=120,
        check=True,
    )
    image = Image.open(png).convert("RGB")
    assert image.size == (1400, 1600)
    graph = image.crop((0, 100, 900, 1600))  # left of the details panel, below the header
    colours = graph.getcolors(maxcolors=1 << 20) or []
    background = max(colours)[1]
    drawn = sum(n for n, c in colours if c != background)
    assert drawn > 0.03 * graph.width * graph.height, "the graph area is (nearly) blank"
    # the node fills of the page are there: query blue, plan violet, evidence yellow
    present = {c for _, c in colours}
    assert {(0xDB, 0xE9, 0xFF), (0xE8, 0xE0, 0xFF), (0xFF, 0xF4, 0xD6)} <= present


def test_cli_audit_json_and_html(traced: tuple[Engine, str, Path]) -> None:
    engine, qid, root = traced
    done = _cli(engine, "audit", qid, "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["query_id"] == qid
    assert report["question"] == "Who maintains the Feed Pump FP-2?"
    assert report["steps"] and all(s["reason"] for s in report["steps"])
    assert report["sources"] and all(s["excerpt"] for s in report["sources"])
    assert report["verification"]["citations_in_evidence"] == len(report["sources"])
    page = root / "audit.html"
    done = _cli(engine, "audit", qid, "--html", str(page))
    assert done.returncode == 0, done.stderr
    html = page.read_text()
    assert "<script" not in html and "&lt;/script&gt;&lt;script&gt;" in html
    missing = _cli(engine, "audit", "q_doesnotexist")
    assert missing.returncode == 8 and "q_doesnotexist" in missing.stderr
