"""A real ``kgrag serve`` as a child process on a free loopback port: started, waited for until
``GET /healthz`` answers 200, and stopped (SIGTERM, then SIGKILL) when the caller is done. What the
tests and the benchmarks that measure a real server share (:func:`serve_subprocess`)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from kgrag.errors import KgragError

#: Seconds a stopped server gets to exit after SIGTERM before it is killed.
STOP_TIMEOUT_S = 30.0


class ServerStartError(KgragError):
    """The ``kgrag serve`` child exited, or did not answer ``/healthz`` in time."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Served:
    """A running ``kgrag serve``: its process, its base URL and the file its output goes to."""

    proc: subprocess.Popen[bytes]
    base: str
    log: Path | None


def _log_tail(log: Path | None, chars: int = 3000) -> str:
    if log is None or not log.exists():
        return "(no log)"
    return log.read_text(errors="replace")[-chars:]


def wait_healthy(served: Served, timeout_s: float) -> None:
    """Wait until ``GET /healthz`` answers 200; :class:`ServerStartError` when the process exits
    first or ``timeout_s`` pass."""
    deadline = time.monotonic() + timeout_s
    while True:
        if served.proc.poll() is not None:
            raise ServerStartError(
                f"kgrag serve exited with {served.proc.returncode}: {_log_tail(served.log)}"
            )
        try:
            with urllib.request.urlopen(f"{served.base}/healthz", timeout=2) as r:  # noqa: S310 (loopback)
                if r.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass  # not listening yet, or 503 while the store opens
        if time.monotonic() > deadline:
            raise ServerStartError(
                f"kgrag serve did not answer /healthz within {timeout_s} s: {_log_tail(served.log)}"
            )
        time.sleep(0.3)


def stop(proc: subprocess.Popen[bytes], timeout_s: float = STOP_TIMEOUT_S) -> None:
    """SIGTERM, then SIGKILL after ``timeout_s``; returns once the process is gone."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def serve_subprocess(
    store: str,
    env: Mapping[str, str],
    log: Path | None,
    args: Sequence[str] = (),
    *,
    start_timeout_s: float = 180.0,
    cwd: Path | None = None,
) -> Iterator[Served]:
    """``kgrag serve --host 127.0.0.1 --port FREE --store STORE ARGS...`` with exactly ``env``
    (this interpreter, ``python -m kgrag.cli``), its output to ``log`` (None: discarded);
    yields once it is healthy and stops it on leaving."""
    port = free_port()
    command = [
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
    ]
    with contextlib.ExitStack() as stack:
        out = stack.enter_context(log.open("w")) if log is not None else subprocess.DEVNULL
        proc = subprocess.Popen(
            command, env=dict(env), cwd=cwd, stdout=out, stderr=subprocess.STDOUT
        )
        served = Served(proc, f"http://127.0.0.1:{port}", log)
        try:
            wait_healthy(served, start_timeout_s)
            yield served
        finally:
            stop(proc)
