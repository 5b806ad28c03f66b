# The commands people and scripts rely on. Each sets up what it needs, idempotently.
SHELL := /bin/bash
VENV := .venv
BIN := $(VENV)/bin
export OMP_NUM_THREADS ?= 1
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1

.PHONY: setup demo demo-neo4j test test-fast lint cypher-lint docs install-matrix bench bench-retention bench-soak bench-batch bench-writes bench-embed bench-growth bench-scale bench-fuzz clean neo4j neo4j-stop

setup:
	@bash scripts/setup.sh

demo: setup
	$(BIN)/kgrag demo

# The same demo on the project's Neo4j server (scripts/neo4j.sh: started if it is not running,
# Bolt 7687, Browser http://127.0.0.1:7474/browser/). It replaces what that database holds.
demo-neo4j: setup
	@eval "$$(bash scripts/neo4j.sh start)" && $(BIN)/kgrag demo --store "$$KGRAG_STORE"

test: setup lint
	@bash scripts/test.sh tests

# A Neo4j Community server on 127.0.0.1 (Bolt 7687, HTTP and Browser 7474), from Maven Central.
# Prints the export lines that point kgrag at it: eval "$$(make -s neo4j)".
neo4j:
	@bash scripts/neo4j.sh start

neo4j-stop:
	@bash scripts/neo4j.sh stop

test-fast: setup
	$(BIN)/python -m pytest -q tests/unit

lint: setup cypher-lint
	$(BIN)/ruff check kgrag tests scripts bench
	$(BIN)/ruff format --check kgrag tests scripts bench
	$(BIN)/mypy
	bash scripts/mypy_public.sh

# The API reference site (mkdocs.yml, docs/), warnings as errors, into .cache/site.
docs: setup
	$(BIN)/mkdocs build --strict

# The wheel on Python 3.11-3.13 outside the repository, lowest dependency versions, neo4j drivers
# 5.x and 6.x (scripts/install_matrix.sh; CI runs it).
install-matrix: setup
	bash scripts/install_matrix.sh

cypher-lint: setup
	node tools/cypher-lint/lint.mjs cypher cypher/templates cypher/schema
	node tools/cypher-lint/lint.mjs --cypher 25 --strict cypher/neo4j_search

bench: setup
	$(BIN)/python -c "import matplotlib" 2>/dev/null || $(BIN)/python -m pip install -q --group bench
	$(BIN)/python bench/run.py

# The reader fuzzer (bench/fuzz_readers.py): 3,000 damaged copies of real files of every format
# read as an ingestion job reads them; prints cases per format, refusals by reason, max/median
# read time per format and every crash or hang found (exit 1 when any; not in CI).
bench-fuzz: setup
	$(BIN)/python bench/fuzz_readers.py --cases $(or $(FUZZ_CASES),3000) --seed $(or $(FUZZ_SEED),1)

# Store growth per question and after `kgrag traces prune`, and ask latency while it prunes
# (embedded store; bench/trace_retention.py --engine neo4j for Neo4j; not in CI).
bench-retention: setup
	cd bench && ../$(BIN)/python trace_retention.py

# Mixed POST /ask on a real `kgrag serve` for SOAK_SECONDS with an ingest job and prunes beside
# it: requests/s, p50/p95/p99, errors, RSS and store size over time (bench/results/soak.json,
# docs/bench/soak.png; not in CI).
SOAK_SECONDS ?= 600
bench-soak: setup
	$(BIN)/python -c "import matplotlib" 2>/dev/null || $(BIN)/python -m pip install -q --group bench
	cd bench && ../$(BIN)/python soak.py --seconds $(SOAK_SECONDS)

# Serial ingestion against the same job on a local Ray, Ray's own overhead, the write-only ceiling
# per engine and the scaling model, in one run (bench/batch.py -> bench/results/batch.json; not
# in CI). Starts the project's Neo4j if it is not running; it empties that database.
bench-batch: setup
	@eval "$$(NEO4J_HEAP=1g bash scripts/neo4j.sh start)" && \
		KGRAG_BENCH_NEO4J_URI="$$KGRAG_STORE" OMP_NUM_THREADS=1 $(BIN)/python bench/batch.py

# Write-only throughput of the graph writer into Neo4j and the embedded store, by batch size and
# concurrent writers (bench/write_path.py -> bench/results/write_path.json; not in CI). Starts
# the project's Neo4j with a 1 GB heap if it is not running; it empties that database.
bench-writes: setup
	@eval "$$(NEO4J_HEAP=1g bash scripts/neo4j.sh start)" && \
		KGRAG_BENCH_NEO4J_URI="$$KGRAG_STORE" $(BIN)/python bench/write_path.py

# Text embedding throughput in one run: torch (today's path), ONNX Runtime by batch size, length
# bucketing, 2 threads vs 2 processes, int8 (report only, with its MuSiQue dense recall)
# (bench/embedding.py -> bench/results/embedding.json; not in CI).
bench-embed: setup
	$(BIN)/python bench/embedding.py

# Growth curve (bench/growth.py -> bench/results/growth.json, docs/bench/growth_*.png): MuSiQue dev
# at 1,890 / 4,000 / 8,008 passages on both engines; starts the project's Neo4j. Also a
# `make bench` step. About an hour on 2 busy cores.
bench-growth: setup
	$(BIN)/python -c "import matplotlib" 2>/dev/null || $(BIN)/python -m pip install -q --group bench
	@eval "$$(bash scripts/neo4j.sh start)" && KGRAG_BENCH_NEO4J_URI="$$KGRAG_STORE" \
		OMP_NUM_THREADS=1 $(BIN)/python bench/growth.py

# Vector search at 100k, 300k and 1M real MiniLM vectors on the embedded store and Neo4j:
# recall@10 vs exact, p50/p95, load time, RSS and disk (bench/scale.py -> bench/results/scale.json;
# not in CI). Embedding 1M texts (ONNX) takes hours on 2 busy cores; it is cached in shards and
# resumes where it stopped. Starts the project's Neo4j (2 GB heap, 2 GB page cache) if it is not
# running and empties it. SCALE_SIZES=100000 for a shorter run.
SCALE_SIZES ?= 100000,300000,1000000
bench-scale: setup
	cd bench && KGRAG_TEXT_BACKEND=onnx KGRAG_DATA_DIR=.cache/scale OMP_NUM_THREADS=2 \
		nice -n 10 ../$(BIN)/python scale.py --prepare --sizes $(SCALE_SIZES)
	@eval "$$(NEO4J_HEAP=2g NEO4J_PAGECACHE=2g bash scripts/neo4j.sh start)" && cd bench && \
		KGRAG_BENCH_NEO4J_URI="$$KGRAG_STORE" KGRAG_TEXT_BACKEND=onnx KGRAG_DATA_DIR=.cache/scale \
		../$(BIN)/python scale.py --sizes $(SCALE_SIZES) --engines falkordb-lite,neo4j \
		--neo4j-pid "$$(cat ../.neo4j/5.26.0/run/neo4j.pid)" --neo4j-data ../.neo4j/5.26.0/data/databases/neo4j

clean:
	rm -rf kgrag-data demo-output .pytest_cache .mypy_cache .ruff_cache
