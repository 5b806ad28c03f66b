"""Words the lexical stage missed, on both engines (embedded FalkorDB, Neo4j): an irregular
verb's other form and a symbol the question calls an operator.

- grep's README (this machine's /usr/share/doc/grep) says "Send bug reports to
  bug-grep@gnu.org." among one-line paragraphs; beside it grep's NEWS says "bug" and "grep" on
  every page. "Where should grep bug reports be sent?" searched for ``sent``, which no stemmer
  joins to ``send``: NEWS led the lexical ranking and the answer quoted NEWS and coreutils.
- An operators table (Markdown, written here) has a row per operator; "What does the ? operator
  do?" searched for ``operator`` alone and ranked every row alike (the shortest first).
"""

from __future__ import annotations

import gzip
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.core import AccessContext
from kgrag.modalities.text import default_text_embedder
from tests.support.across import shared_folder
from tests.support.engines import Engine
from tests.support.lexical import lexical_hits

GREP = Path("/usr/share/doc/grep")
READER = AccessContext(user="reader")
BUG_QUESTION = "Where should grep bug reports be sent?"
SYMBOL_QUESTION = "What does the ? operator do in Rust?"
OPERATORS = """# Appendix B: Operators and Symbols

This appendix is a glossary of Rust's operators and other symbols.

## Operators

| Operator | Example | Explanation |
| --- | --- | --- |
| `!` | `!expr` | Bitwise or logical complement |
| `%` | `expr % expr` | Arithmetic remainder |
| `+` | `a + b` | Addition |
| `-` | `- a` | Negation |
| `^` | `a ^ b` | Xor |
| `&&` | `expr && expr` | Short-circuiting logical AND |
| `*` | `expr * expr` | Arithmetic multiplication |
| `=>` | `pat => expr` | Part of match arm syntax |
| `?` | `expr?` | Error propagation |
| `..` | `..expr` | Right-exclusive range literal |
| `::` | `ident::ident` | Namespace path |
"""


@pytest.fixture(scope="module")
def agent(
    module_engine: Engine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KnowledgeAgent]:
    if not (GREP / "README").exists() or not (GREP / "NEWS.gz").exists():
        pytest.skip(f"{GREP} has no README and NEWS.gz on this machine")
    root = shared_folder(tmp_path_factory, "test_lexical_forms")
    shutil.copyfile(GREP / "README", root / "README")
    (root / "NEWS").write_bytes(gzip.decompress((GREP / "NEWS.gz").read_bytes()))
    (root / "operators.md").write_text(OPERATORS, encoding="utf-8")
    store = module_engine.open()
    with KnowledgeAgent(store, default_text_embedder()) as a:
        report = a.ingest([str(root / n) for n in ("README", "NEWS", "operators.md")])
        assert report.ingested == 3, report.failures
        yield a


def test_the_lexical_stage_finds_send_for_sent(agent: KnowledgeAgent) -> None:
    hits = lexical_hits(agent, BUG_QUESTION, READER, k=10)
    assert "Send bug reports to bug-grep@gnu.org." in (hits[0].text or ""), [
        (h.text or "")[:60] for h in hits
    ]


def test_the_answer_quotes_where_to_send_bug_reports(agent: KnowledgeAgent) -> None:
    answer = agent.ask(BUG_QUESTION, user="reader")
    assert "bug-grep@gnu.org" in answer.answer, answer.answer


def test_the_lexical_stage_finds_the_symbols_row(agent: KnowledgeAgent) -> None:
    hits = lexical_hits(agent, SYMBOL_QUESTION, READER, k=5)
    assert "Error propagation" in (hits[0].text or ""), [(h.text or "")[:60] for h in hits]
    assert hits[0].score > hits[1].score
