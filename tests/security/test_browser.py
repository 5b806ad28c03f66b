"""What a browser can be made to do against a ``kgrag serve`` without authentication on
127.0.0.1 (the local principal): a page of another site that rebinds its DNS name to 127.0.0.1
sends the wrong Host (400), and a cross-site form or fetch may not write (403). The health check
tells health, not where the store is. Without authentication the server binds loopback only,
and the removed shared token refuses to start."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from kgrag.server.launch import serve_subprocess

QUESTION = {"question": "Who maintains the Feed Pump FP-2?"}


@dataclass
class Local:
    base: str
    store_path: Path
    log: Path

    def client(self, **headers: str) -> httpx.Client:
        return httpx.Client(base_url=self.base, headers=headers, timeout=120)


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Local]:
    tmp = tmp_path_factory.mktemp("local")
    root = tmp / "docs"
    root.mkdir()
    (root / "roster.md").write_text(
        "# Maintenance roster\n\nThe Feed Pump FP-2 is maintained by Grace Hopper.\n"
    )
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("KGRAG_API_KEYS", "KGRAG_JWT", "KGRAG_ALLOWED"))
    }
    env.update({"KGRAG_DATA_DIR": str(tmp / "data"), "OMP_NUM_THREADS": "1"})
    store_path = tmp / "store" / "kg.db"
    with serve_subprocess(
        f"falkordb-lite:///{store_path}", env, tmp / "server.log", ["--ingest-root", str(root)]
    ) as up:
        yield Local(up.base, store_path, up.log)


def test_the_server_says_it_serves_the_local_principal(local: Local) -> None:
    log = local.log.read_text()
    assert "no authentication configured" in log and "local principal" in log


@pytest.mark.parametrize("path", ["/healthz", "/openapi.json", "/jobs/job_x"])
@pytest.mark.parametrize("host", ["evil.example", "evil.example:8000", "127.0.0.1.evil.example"])
def test_a_foreign_host_header_is_400_before_anything_else(
    local: Local, path: str, host: str
) -> None:
    with local.client(Host=host) as c:
        r = c.get(path)
    assert r.status_code == 400, (host, path, r.status_code)
    assert r.json()["error"] == "invalid_host"
    with local.client(Host="evil.example") as c:  # a write too, before its body is read
        r = c.post("/ask", json=QUESTION)
        assert r.status_code == 400 and "Grace" not in r.text
    port = local.base.rsplit(":", 1)[1]
    for own in (f"localhost:{port}", f"127.0.0.1:{port}", "LOCALHOST"):
        with local.client(Host=own) as c:
            assert c.get("/healthz").status_code == 200, own


def test_cross_site_writes_are_403(local: Local) -> None:
    port = local.base.rsplit(":", 1)[1]
    form = {"question": QUESTION["question"]}
    png = [("files", ("a.png", b"\x89PNG\r\n\x1a\n", "image/png"))]
    with local.client() as c:
        # an HTML form posted from another site: no Authorization header, a form content type
        r = c.post("/ask/upload", data=form, files=png, headers={"Origin": "http://evil.example"})
        assert r.status_code == 403 and r.json()["error"] == "cross_site_request", r.text
        r = c.post("/ask/upload", data=form, files=png)  # no Origin at all (an old browser)
        assert r.status_code == 403 and r.json()["error"] == "cross_site_request"
        r = c.post("/ask", content=b'{"question": "x"}', headers={"Content-Type": "text/plain"})
        assert r.status_code == 403 and r.json()["error"] == "cross_site_request"
        # a fetch from another site's page, whatever its headers
        for headers in (
            {"Origin": "http://evil.example", "Authorization": "Bearer x"},
            {"Origin": f"http://localhost:{int(port) + 1}", "Authorization": "Bearer x"},
            {"Sec-Fetch-Site": "cross-site", "Authorization": "Bearer x"},
            {"Origin": "null"},
        ):
            r = c.post("/ask", json=QUESTION, headers=headers)
            assert r.status_code == 403 and r.json()["error"] == "cross_site_request", headers
        r = c.post(
            "/ingest", json={"paths": ["roster.md"]}, headers={"Origin": "http://evil.example"}
        )
        assert r.status_code == 403
        # the server's own page, and a client that is not a browser, may write
        r = c.post("/ask", json=QUESTION, headers={"Origin": local.base})
        assert r.status_code == 200, r.text
        assert c.post("/ask", json=QUESTION).status_code == 200
        # reading is not refused: a GET changes nothing
        assert c.get("/jobs/job_x", headers={"Sec-Fetch-Site": "cross-site"}).status_code == 404


def test_health_tells_health_not_where_the_store_is(local: Local) -> None:
    with local.client() as c:
        r = c.get("/healthz")
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "ok" and body["version"]
    assert {"store_reopens", "store_failures"} <= set(body)
    assert str(local.store_path) not in r.text and "falkordb" not in r.text.lower()
    assert "store" not in body


def test_the_local_principal_may_name_a_user_and_is_recorded_as_asking(local: Local) -> None:
    with local.client() as c:
        r = c.post("/ask", json={**QUESTION, "user": "ada", "groups": ["team-a"]})
        assert r.status_code == 200, r.text
        audit = c.get(
            f"/queries/{r.json()['query_id']}/audit", params={"user": "ada", "groups": "team-a"}
        )
        assert audit.json()["user"] == "ada" and audit.json()["asked_by"] == "local"


def _serve_exit(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kgrag.cli", "serve", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.1", "example.org"])
def test_without_authentication_only_loopback_is_served(tmp_path: Path, host: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KGRAG_API", "KGRAG_JWT"))}
    done = _serve_exit(["--host", host, "--store", f"falkordb-lite:///{tmp_path}/kg.db"], env)
    assert done.returncode == 2, done.stderr
    assert "refusing to serve" in done.stderr and "kgrag auth add-key" in done.stderr
    assert not (tmp_path / "kg.db").exists()  # refused before the store is opened


def test_the_removed_shared_token_refuses_to_start(tmp_path: Path) -> None:
    env = {**os.environ, "KGRAG_API_TOKEN": "old-shared-secret"}
    done = _serve_exit(["--store", f"falkordb-lite:///{tmp_path}/kg.db"], env)
    assert done.returncode == 3, done.stderr
    assert "KGRAG_API_TOKEN is no longer supported" in done.stderr
    assert "kgrag auth add-key" in done.stderr and "old-shared-secret" not in done.stderr
