"""A real ``kgrag serve`` on 127.0.0.1 for one test: started as a subprocess on a free port,
waited for until ``/healthz`` answers, stopped (terminate, then kill) when the test is done."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Served:
    proc: subprocess.Popen[bytes]
    base: str
    log: Path


@contextlib.contextmanager
def serve(
    store: str,
    env: Mapping[str, str],
    log: Path,
    args: Sequence[str] = (),
    start_timeout_s: float = 180,
) -> Iterator[Served]:
    """``kgrag serve --store STORE ARGS...`` with ``env``; its output goes to ``log``."""
    port = free_port()
    with log.open("w") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "kgrag.cli",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--store",
                store,
                *args,
            ],
            env=dict(env),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + start_timeout_s
            while True:
                assert proc.poll() is None, "kgrag serve exited: " + log.read_text()[-3000:]
                try:
                    if httpx.get(f"{base}/healthz", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline, "server did not start: " + log.read_text()
                time.sleep(0.3)
            yield Served(proc, base, log)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def wait_job(client: httpx.Client, job_id: str, timeout: float = 300) -> dict[str, Any]:
    """Poll ``GET /jobs/{job_id}`` until the ingest job is done or failed; its last view."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job: dict[str, Any] = client.get(f"/jobs/{job_id}").json()
        if job["status"] in ("done", "failed"):
            return job
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} did not finish in {timeout} s")
