#!/usr/bin/env bash
# Install size and time of each extra (issue 20): the wheel built from this checkout, installed
# with one extra into a fresh virtual environment (`python -m venv`, outside the repository), by
# uv with its cache as it is (warm after one run: then the time is linking, not downloading) and,
# with PIP=1, by pip without any cache (downloads included; slow for the torch extras).
# Size: `du` of the whole venv (Python's own venv files included, about 20 MB). Prints a table
# and writes bench/results/install_sizes.json. Usage: bash bench/install_sizes.sh [3.12] [EXTRA...]
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=$ROOT/.venv/bin
minor=${1:-3.12}
shift || true
extras=("$@")
[ ${#extras[@]} -gt 0 ] || extras=(none text-onnx audio openai neo4j server docs image text all)
python=$(find "${PYENV_ROOT:-$HOME/.pyenv}/versions" -maxdepth 1 -name "$minor.*" | sort -V | tail -1)/bin/python
work=$(mktemp -d "${TMPDIR:-/tmp}/kgrag-sizes.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$BIN/python" -m build --wheel --outdir "$work/dist" . >/dev/null 2>&1
wheel=$(ls "$work"/dist/kgrag-*.whl)
rows=()
for extra in "${extras[@]}"; do
    spec=$wheel
    [ "$extra" = none ] || spec="$wheel[$extra]"
    venv=$work/$extra
    "$python" -m venv "$venv"
    t0=$(date +%s.%N)
    if [ "${PIP:-0}" = 1 ]; then
        "$venv/bin/python" -m pip install -q --no-cache-dir "$spec"
        tool=pip-no-cache
    else
        "$BIN/uv" pip install -q --python "$venv/bin/python" "$spec"
        tool=uv
    fi
    seconds=$(echo "$(date +%s.%N) - $t0" | bc)
    mb=$(du -sm "$venv" | cut -f1)
    torch=$("$venv/bin/python" -c 'import importlib.util as u; print(u.find_spec("torch") is not None)')
    packages=$("$venv/bin/python" -m pip list 2>/dev/null | tail -n +3 | wc -l)
    printf '%-10s %6s MB %7.1f s  torch=%-5s %3s packages (%s)\n' "$extra" "$mb" "$seconds" "$torch" "$packages" "$tool"
    rows+=("{\"extra\": \"$extra\", \"mb\": $mb, \"seconds\": $seconds, \"torch\": ${torch,,}, \"packages\": $packages, \"installer\": \"$tool\"}")
    rm -rf "$venv"
done
mkdir -p bench/results
{
    echo "{\"benchmark\": \"install_sizes\", \"measured_at\": \"$(date -u '+%Y-%m-%d %H:%M:%S UTC')\","
    echo " \"python\": \"$("$python" -c 'import platform; print(platform.python_version())')\", \"results\": ["
    (IFS=,; echo "  ${rows[*]}" | sed 's/}, *{/},\n  {/g')
    echo "]}"
} >"bench/results/install_sizes${OUT_SUFFIX:-}.json"
