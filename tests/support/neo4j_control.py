"""Stopping and starting the suite's own Neo4j server (the one ``KGRAG_TEST_NEO4J_URI`` names),
for tests of what kgrag does while Neo4j is down.

The server must have been started on this machine by ``scripts/neo4j.sh`` (``make test`` and
``make neo4j`` do): its folder is ``NEO4J_DIR`` when set, else the script's default
``.neo4j/<version>``. Its pid file, configuration (ports, heap, page cache) and resolved version
are read from that folder, so ``scripts/neo4j.sh start`` brings back the same server. A Neo4j the
tests cannot control this way (a remote one, a container) skips such tests, or fails them under
``KGRAG_REQUIRE_NEO4J=1``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "neo4j.sh"


@dataclass(frozen=True)
class LocalNeo4j:
    """The suite's Neo4j server, started by scripts/neo4j.sh with its data in ``folder``."""

    folder: Path
    version: str
    bolt: int
    http: int
    heap: str
    pagecache: str
    password: str

    @property
    def pid_file(self) -> Path:
        return self.folder / "run" / "neo4j.pid"

    def pid(self) -> int | None:
        """The server's java process, or None when it does not run."""
        try:
            pid = int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        return pid

    def _env(self) -> dict[str, str]:
        return {
            **os.environ,
            "NEO4J_DIR": str(self.folder),
            "NEO4J_VERSION": self.version,
            "NEO4J_BOLT_PORT": str(self.bolt),
            "NEO4J_HTTP_PORT": str(self.http),
            "NEO4J_HEAP": self.heap,
            "NEO4J_PAGECACHE": self.pagecache,
            "NEO4J_PASSWORD": self.password,
        }

    def kill(self, timeout: float = 30.0) -> int:
        """SIGKILL the server (as a crash or an OOM kill would) and wait until it is gone and
        Bolt refuses connections. Returns the killed pid."""
        import psutil

        pid = self.pid()
        assert pid, f"no Neo4j runs from {self.folder}"
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + timeout
        while True:
            try:
                if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                    break
            except psutil.NoSuchProcess:
                break
            assert time.monotonic() < deadline, f"Neo4j pid {pid} survived SIGKILL"
            time.sleep(0.05)
        # as scripts/neo4j.sh stop does: the pid file goes with the process (a zombie not yet
        # reaped would still pass the script's `kill -0` and make `start` wait for it)
        self.pid_file.unlink(missing_ok=True)
        return pid

    def start(self, timeout: float = 300.0) -> None:
        """``scripts/neo4j.sh start`` with the server's own settings; returns once Bolt
        answers (the script waits). Does nothing to a server that runs."""
        done = subprocess.run(
            [str(SCRIPT), "start"],
            cwd=REPO,
            env=self._env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        assert done.returncode == 0, f"scripts/neo4j.sh start: {done.stderr[-3000:]}"


def _conf(folder: Path) -> dict[str, str]:
    values = {}
    for line in (folder / "conf" / "neo4j.conf").read_text().splitlines():
        key, sep, value = line.partition("=")
        if sep and not key.startswith("#"):
            values[key.strip()] = value.strip()
    return values


def _port(address: str) -> int:
    return int(address.rsplit(":", 1)[1])


def local_neo4j(uri: str, password: str) -> LocalNeo4j:
    """The scripts/neo4j.sh server that serves ``uri``; skips (fails under
    ``KGRAG_REQUIRE_NEO4J=1``) when the tests cannot stop and start it."""
    from tests.support.engines import _missing

    candidates = [Path(os.environ["NEO4J_DIR"])] if os.environ.get("NEO4J_DIR") else []
    candidates += sorted((REPO / ".neo4j").glob("*/")) if (REPO / ".neo4j").is_dir() else []
    port = urlparse(uri).port or 7687
    for folder in candidates:
        try:
            conf = _conf(folder)
            key = (folder / "classpath.txt.key").read_text().split()
        except OSError:
            continue
        if _port(conf.get("server.bolt.listen_address", ":0")) != port or not key:
            continue
        local = LocalNeo4j(
            folder=folder,
            version=key[0],
            bolt=port,
            http=_port(conf["server.http.listen_address"]),
            heap=conf.get("server.memory.heap.max_size", "1g"),
            pagecache=conf.get("server.memory.pagecache.size", "512m"),
            password=password,
        )
        if local.pid() is not None:
            return local
    where = ", ".join(str(c) for c in candidates) or "no NEO4J_DIR and no .neo4j/ folder"
    _missing(
        f"this test stops and restarts the suite's Neo4j ({uri}), which must run from a "
        f"scripts/neo4j.sh folder on this machine (NEO4J_DIR); none serves Bolt port {port} "
        f"({where})"
    )
    raise AssertionError("unreachable")
