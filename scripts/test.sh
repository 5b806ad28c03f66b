#!/usr/bin/env bash
# The test suite on both engines: starts the project's Neo4j 5.26 server (scripts/neo4j.sh, Bolt
# 7687) and a Neo4j 2026 server (Bolt 7688; the store contract tests run there too, so the Cypher 25
# SEARCH-clause statements execute), unless they run already; points the Neo4j half of the suite at
# them, runs pytest, and stops the servers this script started. KGRAG_REQUIRE_NEO4J=1 makes a
# missing server a failure, not a skip. Extra arguments go to pytest (default: the whole suite).
set -euo pipefail
cd "$(dirname "$0")/.."

NEO4J_2026_VERSION=${NEO4J_2026_VERSION:-2026.08.1}
stop_list=()
cleanup() {
    local v
    for v in "${stop_list[@]}"; do
        eval "$v scripts/neo4j.sh stop" || true
    done
}

# start VARS...: start a server with these settings unless it runs (then this script stops it
# at exit), and write its export lines to $exports_file. Not in a $(...) subshell: the stop list
# must outlive the call.
exports_file=$(mktemp)
trap 'cleanup; rm -f "$exports_file"' EXIT
start() {
    if ! env "$@" scripts/neo4j.sh status 2>/dev/null; then
        stop_list+=("$*")
    fi
    env "$@" scripts/neo4j.sh start > "$exports_file"
}

if [ -n "${KGRAG_TEST_NEO4J_URI:-}" ]; then
    echo "test: using the Neo4j server at $KGRAG_TEST_NEO4J_URI"
else
    start NEO4J_VERSION=5.26.0 NEO4J_BOLT_PORT=7687 NEO4J_HTTP_PORT=7474
    # Everything but KGRAG_STORE: tests choose their store themselves.
    eval "$(grep -v '^export KGRAG_STORE=' "$exports_file")"
fi
if [ -z "${KGRAG_TEST_NEO4J_2026_URI:-}" ]; then
    start NEO4J_VERSION="$NEO4J_2026_VERSION" NEO4J_BOLT_PORT=7688 NEO4J_HTTP_PORT=7475
    export KGRAG_TEST_NEO4J_2026_URI=neo4j://127.0.0.1:7688
fi
export KGRAG_REQUIRE_NEO4J=1
[ $# -gt 0 ] || set -- tests
.venv/bin/python -m pytest -q --durations=30 "$@"
