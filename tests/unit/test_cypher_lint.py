"""tools/cypher-lint: Neo4j's own language service lints every cypher/*.cypher as Neo4j 5 Cypher.

Runs the real linter (node + @neo4j-cypher/language-support); skips when either is missing.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "tools" / "cypher-lint"
LINT = TOOL / "lint.mjs"
NODE = shutil.which("node")

if NODE is None:
    pytest.skip("node is not on PATH; tools/cypher-lint needs Node.js", allow_module_level=True)
if not (TOOL / "node_modules" / "@neo4j-cypher" / "language-support").is_dir():
    pytest.skip(
        "tools/cypher-lint/node_modules is absent; run `npm ci` in tools/cypher-lint",
        allow_module_level=True,
    )

SUMMARY = re.compile(r"^cypher-lint: (\d+) files, (\d+) errors, (\d+) warnings$", re.MULTILINE)


def run_lint(*args: str | Path, cwd: Path) -> tuple[int, str, tuple[int, int, int]]:
    """Run lint.mjs; return (exit code, stdout, (files, errors, warnings))."""
    assert NODE is not None
    proc = subprocess.run(
        [NODE, str(LINT), *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    match = SUMMARY.search(proc.stdout)
    assert match, f"no summary line; stdout={proc.stdout!r} stderr={proc.stderr!r}"
    files, errors, warnings = (int(g) for g in match.groups())
    return proc.returncode, proc.stdout, (files, errors, warnings)


def write(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def diagnostics_for(stdout: str, name: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith(f"{name}:")]


def test_valid_neo4j5_queries_pass_and_subfolders_are_not_linted(tmp_path: Path) -> None:
    d = tmp_path / "cypher"
    write(
        d,
        "chunk_vector_search.cypher",
        "// Nearest chunks to a query vector.\n"
        "CALL db.index.vector.queryNodes($index, $k, $vector)\n"
        "YIELD node, score\n"
        "WHERE score >= $min_score\n"
        "RETURN node.id AS id, score\n"
        "ORDER BY score DESC\n",
    )
    write(
        d,
        "chunk_fulltext.cypher",
        "CALL db.index.fulltext.queryNodes('chunk_text', $q) YIELD node, score\n"
        "RETURN elementId(node) AS eid, coalesce(node.text, '') AS text, score LIMIT $k\n",
    )
    write(
        d,
        "chunk_upsert.cypher",
        "UNWIND $rows AS row\n"
        "MERGE (c:Chunk {id: row.id})\n"
        "SET c += row.props, c.updated_at = datetime()\n"
        "WITH c, row\n"
        "MATCH (doc:Document {id: row.document_id})\n"
        "MERGE (doc)-[:HAS_CHUNK {n: row.n}]->(c)\n"
        "RETURN count(c) AS written;\n",
    )
    write(
        d,
        "server_version.cypher",
        "CALL dbms.components() YIELD name, versions, edition RETURN versions[0] AS version\n",
    )
    write(d, "labels.cypher", "CALL db.labels() YIELD label RETURN collect(label) AS labels\n")
    write(
        d,
        "rel_types.cypher",
        "CALL db.relationshipTypes() YIELD relationshipType RETURN relationshipType\n",
    )
    # An overlay in a subfolder is another dialect: it must not be linted.
    write(d / "falkordb", "chunk_vector_search.cypher", "CALL db.idx.vector.queryNodes(\n")

    code, out, (files, errors, warnings) = run_lint(d, cwd=tmp_path)

    assert code == 0, out
    assert (files, errors, warnings) == (6, 0, 0), out
    assert "falkordb" not in out


def test_syntax_error_fails_naming_file_and_line(tmp_path: Path) -> None:
    d = tmp_path / "cypher"
    write(d, "good.cypher", "MATCH (c:Chunk) RETURN c.id AS id\n")
    write(d, "typo.cypher", "// A typo on line 4.\nMATCH (c:Chunk)\nWHERE c.id = $id\nRETRUN c\n")

    code, out, (files, errors, _) = run_lint(d, cwd=tmp_path)

    assert code == 1, out
    assert files == 2
    assert errors >= 1
    typo = diagnostics_for(out, "cypher/typo.cypher")
    assert typo, out
    assert typo[0].startswith("cypher/typo.cypher:4:1: error: Invalid input 'RETRUN'"), out
    assert diagnostics_for(out, "cypher/good.cypher") == []


def test_unknown_procedure_fails(tmp_path: Path) -> None:
    # queryNode (singular) does not exist; the real one is declared in neo4j5-schema.mjs.
    path = write(
        tmp_path,
        "search.cypher",
        "CALL db.index.vector.queryNode($index, $k, $vector) YIELD node, score\n"
        "RETURN node, score\n",
    )

    code, out, (files, errors, _) = run_lint(path, cwd=tmp_path)

    assert code == 1, out
    assert (files, errors) == (1, 1), out
    expected = "search.cypher:1:6: error: Procedure db.index.vector.queryNode is not present"
    assert expected in out, out


SEMANTIC_CASES = {
    "unknown_function.cypher": (
        "MATCH (c:Chunk) RETURN cout(c) AS n\n",
        "1:24: error: Function cout is not present",
    ),
    "undefined_variable.cypher": (
        "MATCH (c:Chunk)\nRETURN d\n",
        "2:8: error: Variable `d` not defined",
    ),
    "arity.cypher": (
        "CALL db.index.vector.queryNodes($index, $k) YIELD node RETURN node\n",
        "error: Procedure call does not provide the required number of arguments",
    ),
    "yield.cypher": (
        "CALL db.index.vector.queryNodes($i, $k, $v) YIELD node, similarity RETURN node\n",
        "error: Unknown procedure output: `similarity`",
    ),
    "arg_type.cypher": (
        "CALL db.index.vector.queryNodes('idx', '5', $v) YIELD node RETURN node\n",
        "error: Type mismatch: expected Integer but was String",
    ),
    "two_statements.cypher": (
        "MATCH (c) RETURN c;\nMATCH (d) RETURN d;\n",
        "error: file holds 2 statements",
    ),
    "cypher25.cypher": ("CYPHER 25 MATCH (c) RETURN c\n", "error: statement selects CYPHER 25"),
}


def test_semantic_errors_fail_each_file(tmp_path: Path) -> None:
    d = tmp_path / "cypher"
    for name, (text, _) in SEMANTIC_CASES.items():
        write(d, name, text)

    code, out, (files, errors, _) = run_lint(d, cwd=tmp_path)

    assert code == 1, out
    assert files == len(SEMANTIC_CASES)
    assert errors >= len(SEMANTIC_CASES)
    for name, (_, expected) in SEMANTIC_CASES.items():
        lines = diagnostics_for(out, f"cypher/{name}")
        assert any(expected in line for line in lines), f"{name}: {expected!r} not in {lines}"


def test_deprecation_is_a_warning_not_a_failure(tmp_path: Path) -> None:
    path = write(tmp_path, "legacy.cypher", "MATCH (n) RETURN id(n) AS i\n")

    code, out, (_, errors, warnings) = run_lint(path, cwd=tmp_path)
    strict_code, _, _ = run_lint("--strict", path, cwd=tmp_path)

    assert code == 0, out
    assert errors == 0
    assert warnings >= 1
    assert "legacy.cypher:1:18: warning: Function id is deprecated." in out
    assert strict_code == 1


def test_repository_cypher_dir_has_no_errors() -> None:
    cypher_dir = REPO / "cypher"
    top_level = sorted(cypher_dir.glob("*.cypher"))

    code, out, (files, errors, _) = run_lint("cypher", cwd=REPO)

    assert files == len(top_level), out
    assert errors == 0, out
    assert code == 0, out
