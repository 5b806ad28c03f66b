"""A job in its own process, driven by the reliability tests: ``python -m tests.reliability.worker
COMMAND ...``. It prints one JSON object per line on stdout and stops when stdin closes."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kgrag.errors import KgragError, ModelError
from kgrag.graph import open_store
from kgrag.graph.embedded_lease import open_close_section
from kgrag.graph.falkordb_store import FalkorDBStore


def emit(**data: Any) -> None:
    print(json.dumps(data), flush=True)


class FailingEmbedder:
    """The real text embedder, failing on its ``fail_on``-th ``embed`` call (1-based)."""

    def __init__(self, inner: Any, fail_on: int) -> None:
        self.inner = inner
        self.fail_on = fail_on
        self.calls = 0

    @property
    def model_name(self) -> str:
        return str(self.inner.model_name)

    @property
    def dimensions(self) -> int:
        return int(self.inner.dimensions)

    @property
    def max_tokens(self) -> int:
        return int(self.inner.max_tokens)

    def count_tokens(self, text: str) -> int:
        return int(self.inner.count_tokens(text))

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls += 1
        if self.calls == self.fail_on:
            raise ModelError(f"injected failure of the text model on call {self.calls}")
        return list(self.inner.embed(texts))


def cmd_hold(args: argparse.Namespace) -> int:
    store = open_store(f"falkordb-lite:///{args.db}")
    assert isinstance(store, FalkorDBStore)
    store.write_rows(
        "entity_upsert", [{"id": f"holder_{args.tag}", "name": args.tag, "type": "OTHER"}]
    )
    emit(pid=os.getpid(), server_pid=store.server_pid())
    sys.stdin.read()  # until the test closes stdin
    seen = store.read_freeform(
        "MATCH (e:Entity) WHERE e.id STARTS WITH 'holder_' RETURN e.id AS id ORDER BY id"
    )
    emit(seen=[r["id"] for r in seen], server_pid=store.server_pid())
    store.close()
    return 0


def cmd_open_lock(args: argparse.Namespace) -> int:
    with open_close_section(Path(args.db).resolve()):
        emit(pid=os.getpid())
        sys.stdin.read()
    return 0


def cmd_ingest_slot(args: argparse.Namespace) -> int:
    store = open_store(f"falkordb-lite:///{args.db}")
    try:
        with store.ingest_job(lambda: ["recovered-by-worker"]) as recovered:
            emit(pid=os.getpid(), recovered=recovered)
            sys.stdin.read()
    finally:
        store.close()
    return 0


def cmd_ingest(args: argparse.Namespace) -> int:
    from kgrag.config import Settings
    from kgrag.graph.spaces import EmbeddingSpace, ensure_space
    from kgrag.ingest.entities import RuleEntityExtractor
    from kgrag.ingest.pipeline import IngestOptions, Ingestor, ProgressEvent
    from kgrag.modalities import factory

    embedder: Any = factory.text_embedder(Settings())
    if args.fail_embed_call:
        embedder = FailingEmbedder(embedder, args.fail_embed_call)
    store = open_store(f"falkordb-lite:///{args.db}")
    assert isinstance(store, FalkorDBStore)
    ensure_space(
        store,
        EmbeddingSpace(name="text", model=embedder.model_name, dimensions=embedder.dimensions),
    )
    server_pid = store.server_pid()
    if args.kill_server_at_write:
        _kill_server_at_write(store, args.kill_server_at_write, server_pid)
    emit(event="started", pid=os.getpid(), server_pid=server_pid)

    def progress(e: ProgressEvent) -> None:
        if e.stage == "write":
            emit(event="progress", done=e.done, total=e.total)

    ingestor = Ingestor(
        store,
        embedder,
        RuleEntityExtractor(),
        options=IngestOptions(batch_chunks=args.batch_chunks),
        progress=progress,
    )
    code = 0
    try:
        report = ingestor.ingest_paths([args.corpus])
        emit(event="report", report=report.model_dump(mode="json"))
    except KgragError as e:
        emit(event="error", error=type(e).__name__, message=str(e))
        code = e.exit_code
    finally:
        store.close()
    return code


def _kill_server_at_write(store: FalkorDBStore, n: int, pid: int | None) -> None:
    """SIGKILL the real server just before the store's ``n``-th write query reaches it."""
    original = store._execute
    count = {"writes": 0}

    def execute(text: str, params: dict[str, Any], *, read_only: bool) -> Any:
        if not read_only:
            count["writes"] += 1
            if count["writes"] == n and pid:
                os.kill(pid, signal.SIGKILL)
                emit(event="killed", server_pid=pid, write=n)
        return original(text, params, read_only=read_only)

    store._execute = execute  # type: ignore[method-assign]


def main() -> int:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    hold = sub.add_parser("hold")
    hold.add_argument("db")
    hold.add_argument("tag")
    lock = sub.add_parser("open-lock")
    lock.add_argument("db")
    slot = sub.add_parser("ingest-slot")
    slot.add_argument("db")
    ingest = sub.add_parser("ingest")
    ingest.add_argument("db")
    ingest.add_argument("corpus")
    ingest.add_argument("--batch-chunks", type=int, default=2)
    ingest.add_argument("--fail-embed-call", type=int, default=0)
    ingest.add_argument("--kill-server-at-write", type=int, default=0)
    args = parser.parse_args()
    commands = {
        "hold": cmd_hold,
        "open-lock": cmd_open_lock,
        "ingest-slot": cmd_ingest_slot,
        "ingest": cmd_ingest,
    }
    return int(commands[args.command](args))


if __name__ == "__main__":
    sys.exit(main())
