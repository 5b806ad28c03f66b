"""bench/common.py's shard cache (``make bench-scale``'s embeddings): a writer killed mid-shard or
stopped by a full disk leaves every stored shard readable and no shard that reads as complete
when it is not, and the next run resumes at the first missing shard."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
common = pytest.importorskip("common")

ROWS = 1000
DIM = 384  # one shard of 1000 MiniLM vectors: about 1.5 MB


def _shard(index: int) -> np.ndarray:
    return np.full((ROWS, DIM), float(index), dtype=np.float32)


def test_a_writer_killed_mid_shard_leaves_the_stored_shards_and_resumes(tmp_path: Path) -> None:
    """A real SIGKILL while a large shard is being written: the shards before it read back
    whole, the one being written is missing (not truncated), and the rerun fills it."""
    folder = tmp_path / "cache"
    script = textwrap.dedent(
        f"""
        import sys, numpy as np
        sys.path.insert(0, {str(BENCH)!r})
        from common import ShardCache
        cache = ShardCache(__import__("pathlib").Path({str(folder)!r}), {ROWS})
        for i in range(2):
            cache.put(i, np.full(({ROWS}, {DIM}), float(i), dtype=np.float32))
        # then a shard so large that the kill lands while it is being written
        cache.put(2, np.ones((100_000, {DIM}), dtype=np.float32))
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + 60
        partial: list[Path] = []
        while time.monotonic() < deadline and proc.poll() is None:
            partial = [p for p in folder.glob(".shard-0002.npy.*.partial") if p.stat().st_size]
            if partial:
                break
            time.sleep(0.005)
        assert partial, "the writer never started the third shard"
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL

    cache = common.ShardCache(folder, ROWS)
    assert not cache.path(2).exists()
    assert cache.get(2, 100_000) is None
    for i in range(2):
        got = cache.get(i, ROWS)
        assert got is not None and np.array_equal(got, _shard(i))
    assert cache.complete(5 * ROWS) == 2 * ROWS
    assert cache.discard_partials() == 1
    cache.put(2, _shard(2))  # the rerun
    assert cache.complete(5 * ROWS) == 3 * ROWS


def test_a_truncated_shard_is_not_taken_as_complete(tmp_path: Path) -> None:
    cache = common.ShardCache(tmp_path, ROWS)
    cache.put(0, _shard(0))
    data = cache.path(0).read_bytes()
    cache.path(0).write_bytes(data[: len(data) // 2])  # e.g. copied by hand and cut short
    assert cache.get(0, ROWS) is None


@pytest.fixture
def small_filesystem(tmp_path: Path) -> Iterator[Path]:
    """A real 4 MiB tmpfs: room for two shards, not three. Mounting needs CAP_SYS_ADMIN."""
    mount = shutil.which("mount")
    target = tmp_path / f"tiny-{uuid.uuid4().hex[:6]}"
    target.mkdir()
    if mount is None:
        pytest.skip("no mount command")
    done = subprocess.run(
        [mount, "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(target)],
        capture_output=True,
        check=False,
    )
    if done.returncode:
        pytest.skip(f"cannot mount a small tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield target
    finally:
        subprocess.run(["umount", str(target)], check=False)


def test_a_full_disk_is_a_clear_error_that_keeps_the_stored_shards(
    small_filesystem: Path,
) -> None:
    cache = common.ShardCache(small_filesystem / "cache", ROWS)
    cache.put(0, _shard(0))
    cache.put(1, _shard(1))
    with pytest.raises(common.ShardWriteError) as caught:
        cache.put(2, _shard(2))
    message = str(caught.value)
    assert str(cache.path(2)) in message and "No space left on device" in message
    assert not cache.path(2).exists()
    assert not list(cache.folder.glob(".*.partial")), "the temporary file was not removed"
    for i in range(2):
        got = cache.get(i, ROWS)
        assert got is not None and np.array_equal(got, _shard(i))
    assert cache.complete(5 * ROWS) == 2 * ROWS
