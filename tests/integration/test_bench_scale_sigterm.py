"""bench/scale.py stopped by SIGTERM closes its stores: the embedded store's redis-server stops
with it (Python's default for SIGTERM is to die at once, leaving that server running). A child
process installs the script's handler, opens an embedded store as ``run()`` does (closed in a
``finally``) and is sent a real SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_sigterm_stops_the_embedded_server(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        import sys, time
        sys.path.insert(0, {str(BENCH)!r})
        import scale
        from kgrag.graph import open_store

        scale._exit_on_sigterm()
        store = open_store("falkordb-lite:///{tmp_path}/kg.db")
        try:
            print(store.server_pid(), flush=True)
            time.sleep(120)
        finally:
            store.close()
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    server = 0
    try:
        assert child.stdout is not None
        server = int(child.stdout.readline())
        assert _alive(server)
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=60) == 128 + signal.SIGTERM
        deadline = time.monotonic() + 30
        while _alive(server) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(server), f"redis-server {server} still runs after the script stopped"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        if server and _alive(server):  # the failure this test is about: leave nothing behind
            os.kill(server, signal.SIGKILL)
