"""Who is asking, attacked through a real ``kgrag serve`` on 127.0.0.1 (each engine: the
embedded FalkorDB and Neo4j) with API keys and JWTs (a local JWKS file) configured: requests
without a valid credential get 401, a credential reads only as its own user unless it has the
impersonate role (and then the question records who really asked), roles gate ingest and
delete, and a query's trace and audit open only to its asker or an admin."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from kgrag.auth.apikeys import KeyFile, read_keys
from kgrag.auth.principal import Role
from kgrag.server.launch import serve_subprocess
from tests.integration.test_server import _wait_job
from tests.support.credentials import AUDIENCE, ISSUER, Issuer, bearer, new_key
from tests.support.engines import Engine

#: The ACL of the team's document (issue 14 decision 1 namespaces it: ``group:team-a``).
TEAM_ACL = ["group:team-a"]
COOLING = "Who maintains the Cooling Fan CF-9?"
QUERY_PAGES = ("trace", "trace.html", "audit", "audit.html")


@dataclass
class Server:
    base: str
    root: Path
    keys_file: Path
    env: dict[str, str]
    issuer: Issuer
    #: name -> (key id, key)
    keys: dict[str, tuple[str, str]] = field(default_factory=dict)
    secret_doc: str = ""
    public_doc: str = ""

    def client(self, name: str | None = None, **headers: str) -> httpx.Client:
        auth = bearer(self.keys[name][1]) if name else {}
        return httpx.Client(base_url=self.base, headers={**auth, **headers}, timeout=120)

    def as_token(self, token: str) -> httpx.Client:
        return httpx.Client(base_url=self.base, headers=bearer(token), timeout=120)


def _expire(path: Path, key_id: str) -> None:
    """What an operator's edit does: the key's expiry moved into the past."""
    current = read_keys(path)
    past = datetime.now(UTC) - timedelta(hours=1)
    keys = tuple(
        k.model_copy(update={"expires": past}) if k.id == key_id else k for k in current.keys
    )
    path.write_text(json.dumps(KeyFile(keys=keys).model_dump(mode="json")))


@pytest.fixture(scope="module")
def server(module_engine: Engine) -> Iterator[Server]:
    tmp = module_engine.folder
    root = tmp / "docs"
    root.mkdir()
    (root / "roster.md").write_text(
        "# Maintenance roster\n\nThe Feed Pump FP-2 is maintained by Grace Hopper.\n"
    )
    (root / "cooling.md").write_text(
        "# Cooling notes\n\nThe Cooling Fan CF-9 is maintained by Hedy Lamarr. "
        "Its secret code word is heliotrope.\n"
    )
    (root / "scratch.md").write_text("# Scratch\n\nThe Test Rig TR-1 is a scratch device.\n")
    keys_file = tmp / "api-keys.json"
    issuer = Issuer.create()
    keys = {
        "ada": new_key(keys_file, "ada", Role.READER, groups=("team-a",)),
        "ada-alone": new_key(keys_file, "ada", Role.READER),
        "bob": new_key(keys_file, "bob", Role.READER),
        "writer": new_key(keys_file, "wes", Role.WRITER),
        "admin": new_key(keys_file, "root", Role.ADMIN),
        "impersonator": new_key(keys_file, "gateway", Role.READER, Role.IMPERSONATE),
        "expired": new_key(keys_file, "old", Role.READER),
        "revoked": new_key(keys_file, "gone", Role.READER),
    }
    _expire(keys_file, keys["expired"][0])
    env = {
        **os.environ,
        "KGRAG_DATA_DIR": str(tmp / "data"),
        "OMP_NUM_THREADS": "1",
        "KGRAG_API_KEYS_FILE": str(keys_file),
        "KGRAG_JWT_JWKS_FILE": str(issuer.write_jwks(tmp / "jwks.json")),
        "KGRAG_JWT_ISSUER": ISSUER,
        "KGRAG_JWT_AUDIENCE": AUDIENCE,
        **module_engine.env(),
    }
    with serve_subprocess(
        module_engine.uri, env, tmp / "server.log", ["--ingest-root", str(root)]
    ) as up:
        srv = Server(up.base, root, keys_file, env, issuer, keys)
        with srv.client("writer") as c:
            jobs = [
                c.post("/ingest", json={"paths": ["roster.md"]}),
                c.post("/ingest", json={"paths": ["cooling.md"], "acl": TEAM_ACL}),
            ]
            assert all(r.status_code == 202 for r in jobs), [r.text for r in jobs]
            done = [_wait_job(c, r.json()["id"]) for r in jobs]
        assert all(j["status"] == "done" and j["report"]["ingested"] == 1 for j in done), done
        srv.public_doc = done[0]["report"]["document_ids"][0]
        srv.secret_doc = done[1]["report"]["document_ids"][0]
        yield srv


# -- credentials ------------------------------------------------------------------------------
def test_the_key_file_is_private_and_holds_no_key(server: Server) -> None:
    assert stat.S_IMODE(server.keys_file.stat().st_mode) == 0o600
    text = server.keys_file.read_text()
    for key_id, key in server.keys.values():
        assert key_id in text and key not in text and key.split("_", 2)[2] not in text


def _refused(r: httpx.Response, *secrets: str) -> str:
    assert r.status_code == 401, (r.status_code, r.text)
    assert r.json()["error"] == "unauthorized" and r.headers["www-authenticate"] == "Bearer"
    for s in secrets:
        assert s not in r.text
    return str(r.json()["detail"])


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/ask", {"question": COOLING}),
        ("POST", "/ask/stream", {"question": COOLING}),
        ("POST", "/ingest", {"paths": ["roster.md"]}),
        ("GET", "/jobs/job_x", None),
        ("GET", "/queries/q_x/trace", None),
        ("GET", "/queries/q_x/audit.html", None),
        ("DELETE", "/documents/d_x", None),
    ],
)
def test_no_credential_is_401_everywhere_but_health_and_the_schema(
    server: Server, method: str, path: str, body: Any
) -> None:
    with server.client() as anon:
        assert "no credential" in _refused(anon.request(method, path, json=body))
        assert anon.get("/healthz").status_code == 200
        assert anon.get("/openapi.json").status_code == 200


def test_wrong_malformed_expired_and_revoked_keys_are_401(server: Server) -> None:
    ask = {"question": "Who maintains the Feed Pump FP-2?"}
    key = server.keys["ada"][1]
    wrong_secret = key[:-4] + ("AAAA" if not key.endswith("AAAA") else "BBBB")
    unknown_id = "kgr_000000000000_" + key.split("_", 2)[2]
    for credential, reason in (
        (wrong_secret, "unknown or revoked"),
        (unknown_id, "unknown or revoked"),
        ("kgr_short", "malformed"),
        (server.keys["expired"][1], "expired"),
    ):
        with server.as_token(credential) as c:
            assert reason in _refused(c.post("/ask", json=ask), credential)
    with server.client("ada") as c:  # the same request with the right key answers
        assert c.post("/ask", json=ask).status_code == 200
    with httpx.Client(base_url=server.base, headers={"Authorization": "Basic YTpi"}) as c:
        _refused(c.post("/ask", json=ask))
    # revoked with the CLI while the server runs: refused from the next request on
    revoked_id, revoked = server.keys["revoked"]
    with server.as_token(revoked) as c:
        assert c.get("/jobs/job_x").status_code == 404
        done = subprocess.run(
            [sys.executable, "-m", "kgrag.cli", "auth", "revoke-key", revoked_id],
            env=server.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        assert "unknown or revoked" in _refused(c.get("/jobs/job_x"), revoked)


def test_a_jwt_from_the_issuer_authenticates_with_its_claims(server: Server) -> None:
    iss = server.issuer
    member = iss.token(iss.claims("carol", groups=["team-a"]))
    with server.as_token(member) as c:
        r = c.post("/ask", json={"question": COOLING})
        assert r.status_code == 200, r.text
        assert server.secret_doc in {x["document_id"] for x in r.json()["citations"]}
        audit = c.get(f"/queries/{r.json()['query_id']}/audit").json()
        assert audit["user"] == "carol" and audit["asked_by"] == f"jwt:{ISSUER}:carol"
    ec_token = iss.token(iss.claims("dana"), alg="ES256")
    with server.as_token(ec_token) as c:
        r = c.post("/ask", json={"question": COOLING})
        assert r.status_code == 200 and server.secret_doc not in r.text
    no_roles = iss.token(iss.claims("erin", roles=None))
    with server.as_token(no_roles) as c:
        r = c.post("/ask", json={"question": COOLING})
        assert r.status_code == 403 and r.json()["error"] == "forbidden"


def test_forged_and_mismatched_jwts_are_401(server: Server) -> None:
    iss = server.issuer
    good = iss.claims("carol", roles=["admin"])
    other = Issuer.create()  # another key under the same kid: the signature fails
    forged = {
        "wrong issuer": iss.token({**good, "iss": "https://evil.example"}),
        "wrong audience": iss.token({**good, "aud": "another-service"}),
        "expired": iss.token({**good, "iat": 1, "exp": 1000}),
        "alg none": iss.unsigned_token(good),
        "HS256 with the public key": iss.hmac_with_public_key(good),
        "unknown kid": iss.token(good, kid="rsa-9"),
        "RS256 under the EC key's kid": iss.token(good, kid="ec-1"),
        "another key's signature": other.token(good),
        "no exp": iss.token({**good, "exp": None}),
        "not a token": "a.b.c",
    }
    for name, token in forged.items():
        with server.as_token(token) as c:
            detail = _refused(c.post("/ask", json={"question": COOLING}), token)
            assert "evil.example" not in detail and "another-service" not in detail, name
    with server.as_token(iss.token(good)) as c:  # the genuine token is taken
        assert c.post("/ask", json={"question": COOLING}).status_code == 200


# -- identity comes from the credential -------------------------------------------------------
def test_a_reader_may_not_name_a_user_or_groups(server: Server) -> None:
    with server.client("bob") as c:
        for named in ({"user": "ada"}, {"groups": ["team-a"]}, {"user": "bob"}):
            for path in ("/ask", "/ask/stream"):
                r = c.post(path, json={"question": COOLING, **named})
                assert r.status_code == 403, (path, named, r.text)
                assert r.json()["error"] == "impersonation_refused"
                assert "Hedy" not in r.text and "heliotrope" not in r.text
        r = c.post(
            "/ask/upload",
            data={"question": COOLING, "user": "ada", "groups": "team-a"},
            files=[("files", ("a.png", b"\x89PNG\r\n\x1a\n", "image/png"))],
        )
        assert r.status_code == 403 and r.json()["error"] == "impersonation_refused"
        r = c.get("/queries/q_x/trace", params={"user": "ada"})
        assert r.status_code == 403 and r.json()["error"] == "impersonation_refused"
        # as itself, bob reads public documents only
        r = c.post("/ask", json={"question": COOLING})
        assert r.status_code == 200 and server.secret_doc not in r.text


def test_an_impersonator_asks_as_another_user_and_the_audit_names_it(server: Server) -> None:
    imp_id = server.keys["impersonator"][0]
    with server.client("impersonator") as c:
        r = c.post("/ask", json={"question": COOLING, "user": "ada", "groups": ["team-a"]})
        assert r.status_code == 200, r.text
        assert "Hedy Lamarr" in r.json()["answer"]
        qid = r.json()["query_id"]
        # the impersonator itself is not ada: it opens the query only as ada
        assert c.get(f"/queries/{qid}/audit").status_code == 404
        as_ada = c.get(f"/queries/{qid}/audit", params={"user": "ada", "groups": "team-a"})
        assert as_ada.status_code == 200
    for who in ("admin", "ada"):
        with server.client(who) as c:
            audit = c.get(f"/queries/{qid}/audit")
            assert audit.status_code == 200, (who, audit.text)
            assert audit.json()["user"] == "ada"
            assert audit.json()["asked_by"] == f"key:{imp_id}"
            page = c.get(f"/queries/{qid}/audit.html").text
            assert f"asked by key:{imp_id}" in page
    with server.client("ada") as c:  # a question as oneself records one's own key
        r = c.post("/ask", json={"question": COOLING})
        audit = c.get(f"/queries/{r.json()['query_id']}/audit").json()
        assert audit["asked_by"] == f"key:{server.keys['ada'][0]}"


def test_only_the_asker_or_an_admin_opens_a_query(server: Server) -> None:
    with server.client("ada") as c:
        r = c.post("/ask", json={"question": COOLING})
        assert server.secret_doc in r.text
        qid = r.json()["query_id"]
        for page in QUERY_PAGES:
            assert c.get(f"/queries/{qid}/{page}").status_code == 200, page
    # another reader, the same user without the group, a writer: as for an unknown id
    for who in ("bob", "ada-alone", "writer"):
        with server.client(who) as c:
            for page in QUERY_PAGES:
                r = c.get(f"/queries/{qid}/{page}")
                assert r.status_code == 404, (who, page, r.status_code)
                assert r.json()["error"] == "not_found"
                assert server.secret_doc not in r.text and "heliotrope" not in r.text
    with server.client("admin") as c:
        assert all(c.get(f"/queries/{qid}/{p}").status_code == 200 for p in QUERY_PAGES)


# -- roles gate writes ------------------------------------------------------------------------
def test_readers_may_not_ingest_or_delete_and_writers_may_not_delete(server: Server) -> None:
    for who in ("bob", "impersonator"):
        with server.client(who) as c:
            r = c.post("/ingest", json={"paths": ["scratch.md"]})
            assert r.status_code == 403 and r.json()["error"] == "forbidden", r.text
            r = c.delete(f"/documents/{server.public_doc}")
            assert r.status_code == 403 and r.json()["error"] == "forbidden"
    with server.client("writer") as c:
        r = c.delete(f"/documents/{server.public_doc}")
        assert r.status_code == 403 and "admin" in r.json()["detail"]
        job = c.post("/ingest", json={"paths": ["scratch.md"]})
        assert job.status_code == 202
        done = _wait_job(c, job.json()["id"])
        assert done["status"] == "done", done
        scratch = done["report"]["document_ids"][0]
    with server.client("bob") as c:  # another principal's job is not shown
        assert c.get(f"/jobs/{job.json()['id']}").status_code == 404
    with server.client("admin") as c:
        assert c.get(f"/jobs/{job.json()['id']}").status_code == 200
        assert c.delete(f"/documents/{scratch}").status_code == 204
        r = c.delete(f"/documents/{scratch}")
        assert r.status_code == 404 and r.json()["error"] == "not_found"
    with server.client("bob") as c:  # the public document is still there
        r = c.post("/ask", json={"question": "Who maintains the Feed Pump FP-2?"})
        assert server.public_doc in {x["document_id"] for x in r.json()["citations"]}


def test_a_cross_site_write_is_refused_even_with_a_valid_key(server: Server) -> None:
    with server.client("ada") as c:
        for headers in ({"Origin": "http://evil.example"}, {"Sec-Fetch-Site": "cross-site"}):
            r = c.post("/ask", json={"question": COOLING}, headers=headers)
            assert r.status_code == 403 and r.json()["error"] == "cross_site_request", headers
        with server.client() as anon:  # a form from another site carries no credential
            r = anon.post("/ask/upload", data={"question": COOLING}, files=[("files", b"x")])
            assert r.status_code == 401
        with server.client("ada", Host="evil.example") as rebound:
            assert rebound.post("/ask", json={"question": COOLING}).status_code == 400


def test_a_writer_cannot_change_an_acl_by_re_ingesting(server: Server) -> None:
    """Last in this module: while the refusal is missing it makes the document public, and
    the admin puts its ACL back."""
    try:
        with server.client("writer") as c:
            job = c.post("/ingest", json={"paths": ["cooling.md"], "acl": ["*"]})
            assert job.status_code == 202, job.text
            done = _wait_job(c, job.json()["id"])
        with server.client("bob") as c:
            r = c.post("/ask", json={"question": COOLING})
            assert server.secret_doc not in r.text and "heliotrope" not in r.text
        assert done["report"]["failed"] == 1, done
        assert "cooling.md" in json.dumps(done["report"]["failures"])
    finally:
        with server.client("admin") as c:
            job = c.post("/ingest", json={"paths": ["cooling.md"], "acl": TEAM_ACL})
            assert _wait_job(c, job.json()["id"])["status"] == "done"
