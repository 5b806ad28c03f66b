"""SECURITY.md stays true: every claim under "What is enforced where" names the tests backing it,
and every test it names exists.

The rule: under that heading, every paragraph and every table row carries at least one reference
``tests/FILE.py::TEST`` (in backticks); a bold title introducing a table (``**Limits**:``) is
exempt (its rows carry the references). Other sections ("Threat model", "Known limitations",
"Reporting a vulnerability") state no enforcement and are not checked. A reference must name a
test function (``def test_...``, at module level or in a ``Test...`` class) of an existing file;
a parametrised test is named by its function name."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "SECURITY.md"
SECTION = "## What is enforced where"
REFERENCE = re.compile(r"`(tests/[\w/]+\.py)::(\w+)(?:\[[^\]`]*\])?`")
#: A mention of a test file without ``::TEST``.
BARE_FILE = re.compile(r"`tests/[\w/]+\.py`")
#: Paragraphs being rewritten elsewhere (issue 14: authentication replaces the asserted identity);
#: remove an entry when its paragraph carries references.
PENDING_REWRITE: tuple[str, ...] = ()


def _section(text: str, heading: str) -> str:
    start = text.index(heading) + len(heading)
    end = text.find("\n## ", start)
    return text[start : end if end != -1 else len(text)]


def claim_blocks(section: str) -> list[str]:
    """The paragraphs and table rows of ``section``; table header and separator rows and a
    bold title introducing a table (``**Limits**:``) are left out."""
    blocks: list[str] = []
    chunks = [c.strip() for c in re.split(r"\n\s*\n", section) if c.strip()]
    for i, chunk in enumerate(chunks):
        lines = chunk.splitlines()
        rows = [ln for ln in lines if ln.lstrip().startswith("|")]
        prose = " ".join(ln.strip() for ln in lines if not ln.lstrip().startswith("|"))
        introduces_a_table = re.fullmatch(r"\*\*[^*]+\*\*:", prose) and (
            rows or (i + 1 < len(chunks) and chunks[i + 1].startswith("|"))
        )
        if prose and not introduces_a_table:
            blocks.append(prose)
        # rows[0] is the header, rows[1] the |---| separator
        blocks += rows[2:] if len(rows) >= 2 and set(rows[1]) <= set("|-: ") else rows
    return blocks


def unbacked(blocks: list[str]) -> list[str]:
    return [
        b
        for b in blocks
        if not REFERENCE.search(b) and not any(b.startswith(p) for p in PENDING_REWRITE)
    ]


def _test_functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in tree.body:
        bodies = [node]
        if isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            bodies = list(node.body)
        for item in bodies:
            if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and item.name.startswith(
                "test"
            ):
                found.add(item.name)
    return found


def missing_tests(text: str) -> list[str]:
    missing = []
    for file, name in REFERENCE.findall(text):
        path = ROOT / file
        if not path.is_file() or name not in _test_functions(path):
            missing.append(f"{file}::{name}")
    return missing


def test_every_claim_names_a_test() -> None:
    blocks = claim_blocks(_section(DOC.read_text(encoding="utf-8"), SECTION))
    assert len(blocks) > 20  # the section and its tables are seen
    assert unbacked(blocks) == []


def test_every_test_named_exists() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert len(REFERENCE.findall(text)) > 50
    assert missing_tests(text) == []


def test_references_under_the_claims_name_a_test_not_only_a_file() -> None:
    assert BARE_FILE.findall(_section(DOC.read_text(encoding="utf-8"), SECTION)) == []


def test_the_checks_find_an_unbacked_claim_and_a_missing_test() -> None:
    """The rule itself can fail: a claim without a reference, a row without one, a reference to
    a file or test that does not exist."""
    section = (
        "\n**Backed.** Yes (test: `tests/unit/test_security_doc.py::test_every_test_named_exists`)."
        "\n\n**Unbacked.** No test.\n\n**A table**:\n\n| Limit | Test |\n| --- | --- |\n"
        "| one | `tests/unit/test_security_doc.py::test_every_claim_names_a_test[x]` |\n"
        "| two | none |\n"
    )
    assert unbacked(claim_blocks(section)) == ["**Unbacked.** No test.", "| two | none |"]
    assert missing_tests(section) == []
    wrong = "`tests/unit/test_security_doc.py::test_nothing` `tests/unit/nope.py::test_x`"
    assert missing_tests(wrong) == [
        "tests/unit/test_security_doc.py::test_nothing",
        "tests/unit/nope.py::test_x",
    ]
