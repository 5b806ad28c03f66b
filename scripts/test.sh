#!/usr/bin/env bash
# The test suite on both engines: starts the project's Neo4j server (scripts/neo4j.sh) unless one
# runs already, points the Neo4j half of the suite at it, runs pytest, and stops the server again
# if this script started it. KGRAG_REQUIRE_NEO4J=1 makes a missing server a failure, not a skip.
# Extra arguments go to pytest (default: the whole suite).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -n "${KGRAG_TEST_NEO4J_URI:-}" ]; then
    echo "test: using the Neo4j server at $KGRAG_TEST_NEO4J_URI"
else
    started_here=0
    scripts/neo4j.sh status 2>/dev/null || started_here=1
    exports=$(scripts/neo4j.sh start)
    # Everything but KGRAG_STORE: tests choose their store themselves.
    eval "$(grep -v '^export KGRAG_STORE=' <<<"$exports")"
    if [ "$started_here" = 1 ]; then
        trap 'scripts/neo4j.sh stop' EXIT
    fi
fi
export KGRAG_REQUIRE_NEO4J=1
[ $# -gt 0 ] || set -- tests
.venv/bin/python -m pytest -q "$@"
