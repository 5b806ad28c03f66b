"""Waiting for an ingestion job of a served API."""

from __future__ import annotations

import time
from typing import Any

import httpx


def wait_job(client: httpx.Client, job_id: str, timeout: float = 300) -> dict[str, Any]:
    """Poll ``GET /jobs/{job_id}`` until the ingest job is done or failed; its last view."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job: dict[str, Any] = client.get(f"/jobs/{job_id}").json()
        if job["status"] in ("done", "failed"):
            return job
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} did not finish in {timeout} s")
