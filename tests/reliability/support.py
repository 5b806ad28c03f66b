"""Shared helpers of the reliability tests: a small real corpus, a snapshot of a graph that two
runs can be compared by, a worker process to run jobs in, and waiting for a pid to die."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from kgrag.graph.store import GraphStore

REPO = Path(__file__).resolve().parents[2]

_PEOPLE = ["Ada Lovelace", "Charles Babbage", "Grace Hopper", "Alan Turing", "Edsger Dijkstra"]
_PLACES = ["London", "Cambridge", "Arlington", "Manchester", "Eindhoven"]
_PARTS = ["Feed Pump FP-2", "Valve V-7", "Boiler B-1", "Turbine T-3", "Condenser C-9"]


def write_corpus(folder: Path, n: int = 12, paragraphs: int = 6) -> list[Path]:
    """``n`` small text files naming people, places and parts (so entities and RELATED edges
    exist), different enough that each gets its own content hash."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        lines = [f"Maintenance report {i}", ""]
        for j in range(paragraphs):
            who = _PEOPLE[(i + j) % len(_PEOPLE)]
            other = _PEOPLE[(i + 2 * j + 1) % len(_PEOPLE)]
            where = _PLACES[(i * 3 + j) % len(_PLACES)]
            part = _PARTS[(i + j * 2) % len(_PARTS)]
            lines.append(
                f"On day {j + 1} of report {i}, {who} inspected the {part} in {where} together "
                f"with {other}. The {part} showed wear number {i * 10 + j}, and {who} agreed "
                f"with {other} to replace it before the next inspection in {where}."
            )
            lines.append("")
        path = folder / f"report_{i:02d}.txt"
        path.write_text("\n".join(lines), encoding="utf-8")
        paths.append(path)
    return paths


class GraphSnapshot(BaseModel):
    """What two runs must agree on: documents (id, status, hash) and counts per label and type."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    documents: dict[str, str]  # id -> status
    hashes: dict[str, int]  # sha256 -> number of Document nodes with it
    labels: dict[str, int]
    relationships: dict[str, int]

    def unfinished(self) -> list[str]:
        return sorted(d for d, s in self.documents.items() if s != "complete")


EVIDENCE = {"Document", "Chunk", "Segment", "Image", "Entity"}
EVIDENCE_RELS = {"PART_OF", "NEXT", "MENTIONS", "RELATED", "DEPICTS", "NEAR"}


def snapshot(store: GraphStore) -> GraphSnapshot:
    docs = store.read_freeform(
        "MATCH (d:Document) RETURN d.id AS id, d.status AS status, d.sha256 AS sha256"
    )
    labels = {r["label"]: r["n"] for r in store.read("stats_labels") if r["label"] in EVIDENCE}
    rels = {
        r["type"]: r["n"] for r in store.read("stats_relationships") if r["type"] in EVIDENCE_RELS
    }
    return GraphSnapshot(
        documents={r["id"]: str(r["status"]) for r in docs},
        hashes=dict(Counter(r["sha256"] for r in docs)),
        labels=labels,
        relationships=rels,
    )


def worker(*args: str, **popen: Any) -> subprocess.Popen[str]:
    """Start ``python -m tests.reliability.worker ARGS`` from the repository root."""
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    env.update(popen.pop("env", {}))
    return subprocess.Popen(
        [sys.executable, "-m", "tests.reliability.worker", *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.PIPE,
        text=True,
        **popen,
    )


def read_event(proc: subprocess.Popen[str], timeout: float = 120.0) -> dict[str, Any]:
    """The next JSON line a worker prints (fails the test on timeout or early exit)."""
    import selectors

    assert proc.stdout is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sel.select(timeout=max(0.0, deadline - time.monotonic())):
            line = proc.stdout.readline()
            if not line:
                err = proc.stderr.read() if proc.stderr else ""
                raise AssertionError(f"worker exited ({proc.wait()}) without output: {err[-3000:]}")
            if line.startswith("{"):
                return dict(json.loads(line))
    proc.kill()
    raise AssertionError(f"worker printed nothing in {timeout} s")


def finish(proc: subprocess.Popen[str], timeout: float = 120.0) -> tuple[int, str]:
    """Close the worker's stdin (its signal to stop), wait; its exit code and stderr."""
    try:
        _, err = proc.communicate(input="", timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
        raise AssertionError(f"worker did not stop in {timeout} s: {err[-3000:]}") from None
    return proc.returncode, err


def kill_and_wait(pid: int, timeout: float = 10.0) -> None:
    """SIGKILL ``pid`` and wait until it is gone (or a zombie)."""
    import psutil

    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return
        except psutil.NoSuchProcess:
            return
        time.sleep(0.02)
    raise AssertionError(f"process {pid} survived SIGKILL for {timeout} s")


def server_alive(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def server_gone(pid: int, timeout: float = 30.0) -> bool:
    """Whether the process ``pid`` has exited within ``timeout`` seconds. A SIGKILLed server is
    not gone at once: the kernel first tears down its memory and sockets, and on a loaded machine
    its client sees the reset before the process has finished exiting."""
    deadline = time.monotonic() + timeout
    while server_alive(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


class GraphContents(BaseModel):
    """The evidence graph itself, for runs that must build exactly the same graph (say one
    process against N shards): every evidence node by label and id with its key properties, and
    every evidence relationship by type and end ids with its weight or count."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    nodes: dict[str, dict[str, tuple[Any, ...]]]  # label -> id -> key properties
    relationships: frozenset[tuple[str, str, str, Any]]  # (type, start id, end id, value)

    def differences(self, other: GraphContents, limit: int = 10) -> list[str]:
        """What differs, in words (at most ``limit`` lines per kind), for assertion messages."""
        out = []
        for label in sorted(set(self.nodes) | set(other.nodes)):
            mine, theirs = self.nodes.get(label, {}), other.nodes.get(label, {})
            wrong = [
                f"{label} {k}: {mine.get(k)} != {theirs.get(k)}"
                for k in sorted(set(mine) | set(theirs))
                if mine.get(k) != theirs.get(k)
            ]
            out += wrong[:limit]
        only = sorted(self.relationships - other.relationships, key=str)[:limit]
        out += [f"only in the first: {r}" for r in only]
        only = sorted(other.relationships - self.relationships, key=str)[:limit]
        out += [f"only in the second: {r}" for r in only]
        return out


# Key properties per label (besides the id); the node's embeddings are left out.
_KEYS = {
    "Document": ("status", "sha256", "uri", "chunk_count", "image_count", "acl"),
    "Chunk": ("document_id", "position", "page", "text"),
    "Segment": ("document_id", "position", "start_s", "end_s", "text"),
    "Image": ("uri", "page"),
    "Entity": ("name", "type"),
}
# The property that carries a relationship's value, per type.
_VALUE = {"MENTIONS": "count", "RELATED": "weight", "DEPICTS": "score"}


def contents(store: GraphStore) -> GraphContents:
    nodes: dict[str, dict[str, tuple[Any, ...]]] = {}
    for label, keys in _KEYS.items():
        fields = ", ".join(f"n.{k} AS {k}" for k in keys)
        rows = store.read_freeform(f"MATCH (n:{label}) RETURN n.id AS id, {fields}")
        found = nodes.setdefault(label, {})
        for r in rows:
            assert r["id"] not in found, f"two {label} nodes with id {r['id']}"
            found[r["id"]] = tuple(
                tuple(sorted(v)) if isinstance(v, list) else v for v in (r[k] for k in keys)
            )
    rels = store.read_freeform(
        "MATCH (a)-[r]->(b) WHERE type(r) IN $types "
        "RETURN type(r) AS type, a.id AS a, b.id AS b, r.count AS count, r.weight AS weight, "
        "r.score AS score",
        {"types": sorted(EVIDENCE_RELS)},
    )
    relationships = []
    for r in rels:
        value = r.get(_VALUE.get(r["type"], ""))
        if isinstance(value, float):
            value = round(value, 4)
        relationships.append((r["type"], str(r["a"]), str(r["b"]), value))
    assert len(set(relationships)) == len(relationships), "duplicate relationships"
    return GraphContents(nodes=nodes, relationships=frozenset(relationships))
