"""Neo4j Browser draws a kgrag trace: the demo corpus is ingested into Neo4j, the demo's first
question is asked, and tools/browser-check (playwright-core driving Debian's headless Chromium)
opens the Browser that the Neo4j server serves, connects over Bolt, applies docs/kgrag.grass with
`:style`, runs `:param id => '<query id>'` and `MATCH p=(:Query {id: $id})-[*..3]->() RETURN p`,
and reports what Browser drew (its SVG nodes: fill colour, hence label, and caption). The test
reads that report: the Query, Plan and Step nodes are drawn, each Step captioned with its type,
exactly the steps kgrag stored for that answer.

Neo4j only: Browser is Neo4j's. With KGRAG_UPDATE_DOCS_SCREENSHOT=1 the screenshot is also
copied to docs/neo4j-browser-trace.png (the picture in docs/neo4j-browser.md and README).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")

from kgrag.agent.agent import KnowledgeAgent
from kgrag.core import OPERATOR
from kgrag.demo.corpus import make_corpus
from kgrag.demo.run import BROWSER_CYPHER, CHAIN_QUESTION, neo4j_browser_url
from kgrag.executor.trace import read_trace
from tests.support.engines import NEO4J, engine_for, neo4j_server

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "tools" / "browser-check"
CHECK = TOOL / "check.mjs"
DOCS_SCREENSHOT = ROOT / "docs" / "neo4j-browser-trace.png"
CHROMIUM = "/usr/bin/chromium"

pytestmark = pytest.mark.neo4j


def _tools_missing() -> list[str]:
    """What scripts/setup.sh installs for this test and is not here."""
    missing = []
    if shutil.which("node") is None:
        missing.append("node (Debian's npm)")
    if not (TOOL / "node_modules" / "playwright-core").is_dir():
        missing.append("tools/browser-check/node_modules (npm ci there)")
    if not Path(CHROMIUM).is_file():
        missing.append(f"{CHROMIUM} (Debian's chromium)")
    if shutil.which("espeak-ng") is None:
        missing.append("espeak-ng (the demo's recording)")
    return missing


def test_neo4j_browser_draws_the_trace_of_the_demos_first_answer(tmp_path: Path) -> None:
    missing = _tools_missing()
    # a failure, not a skip: scripts/setup.sh installs all of these
    assert not missing, f"run scripts/setup.sh: missing {', '.join(missing)}"
    engine = engine_for(NEO4J, tmp_path)
    engine.reset()
    corpus = make_corpus(tmp_path / "corpus")
    with KnowledgeAgent.open(engine.settings(data_dir=tmp_path / "store")) as agent:
        report = agent.ingest([str(p) for p in corpus])
        assert report.failed == 0 and report.ingested == len(corpus)
        answer = agent.ask(CHAIN_QUESTION.text)
        assert answer.citations
        trace = read_trace(agent.store, answer.query_id, OPERATOR).to_json()
        browser_url = neo4j_browser_url(agent.store)
    stored_steps = sorted(s["type"] for s in trace["steps"])

    _, user, password = neo4j_server()
    findings_file = tmp_path / "findings.json"
    screenshot = tmp_path / "neo4j-browser-trace.png"
    command = [
        "node",
        str(CHECK),
        "--query-id",
        answer.query_id,
        "--browser-url",
        browser_url,
        "--bolt",
        engine.uri,
        "--user",
        user,
        "--screenshot",
        str(screenshot),
        "--json",
        str(findings_file),
        "--chromium",
        CHROMIUM,
        "--expect-step-types",
        ",".join(stored_steps),
    ]
    # the password goes through the environment, not the command line
    env = {**os.environ, "KGRAG_NEO4J_PASSWORD": password}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert findings_file.is_file(), done.stderr
    findings = json.loads(findings_file.read_text(encoding="utf-8"))
    assert done.returncode == 0 and findings["ok"], done.stderr

    assert findings["connected"] and findings["style_applied"]
    assert findings["query_id"] == answer.query_id and findings["cypher"] == BROWSER_CYPHER
    drawn = Counter(n["label"] for n in findings["drawn_nodes"])
    # one question, one plan (the rule planner, no retry), and every step of that plan
    assert drawn["Query"] == 1 and drawn["Plan"] == 1, drawn
    assert sorted(findings["step_captions"]) == stored_steps
    assert drawn["Step"] == len(trace["steps"]) >= 2
    assert drawn["Answer"] == 1 and drawn["Document"] >= 2, drawn
    # captions from the style sheet: the question on the Query, the planner on the Plan
    (query_caption,) = findings["query_captions"]
    assert " ".join(query_caption.split()).startswith("Who maintains")
    plan_captions = [n["caption"] for n in findings["drawn_nodes"] if n["label"] == "Plan"]
    assert plan_captions == [trace["plan"]["source"]]
    answer_captions = [n["caption"] for n in findings["drawn_nodes"] if n["label"] == "Answer"]
    assert answer_captions == [trace["answer"]["verdict"]]
    # Browser's own overview of the result names the same labels
    for label in ("Query", "Plan", "Step", "Answer"):
        assert f"{label} (" in findings["overview"], findings["overview"]
    assert screenshot.is_file() and screenshot.stat().st_size > 20_000
    if os.environ.get("KGRAG_UPDATE_DOCS_SCREENSHOT") == "1":
        shutil.copyfile(screenshot, DOCS_SCREENSHOT)
