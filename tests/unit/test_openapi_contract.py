"""What ``/openapi.json`` promises, checked on the document itself (no store is opened):
tests/integration/test_api_fuzz.py holds a live server to it; this is the quick guard."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from kgrag.auth.apikeys import add_key
from kgrag.auth.principal import Role
from kgrag.config import Settings
from kgrag.server.app import create_app
from kgrag.server.models import KEY_PATTERN, AskRequest


@pytest.fixture(scope="module")
def keys_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("keys") / "api-keys.json"
    add_key(path, user="ada", groups=(), roles=[Role.READER])
    return path


def _spec(keys_file: Path | None) -> dict[str, Any]:
    return dict(create_app(Settings(api_keys_file=keys_file)).openapi())


def _operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(m.upper(), p, op) for p, item in spec["paths"].items() for m, op in item.items()]


def test_every_error_is_an_error_body_and_every_operation_may_fail(keys_file: Path) -> None:
    spec = _spec(keys_file)
    error_ref = {"$ref": "#/components/schemas/ErrorBody"}
    for method, path, op in _operations(spec):
        statuses = {int(s) for s in op["responses"]}
        assert {400, 500} <= statuses, (method, path)
        if path not in ("/healthz", "/livez", "/readyz"):  # the probes: open, unbounded
            assert {401, 403, 503} <= statuses, (method, path, statuses)
            assert op["security"] == [{"bearerAuth": []}], (method, path)
        if "requestBody" in op:
            assert {400, 413, 422} <= statuses, (method, path, statuses)
        for status, response in op["responses"].items():
            if int(status) >= 400:
                assert response["content"] == {"application/json": {"schema": error_ref}}, (
                    method,
                    path,
                    status,
                )
            if status in ("429", "503"):
                assert response["headers"]["Retry-After"]["required"] is True
    assert "HTTPValidationError" not in spec["components"]["schemas"]


def test_without_authentication_no_security_and_no_401() -> None:
    spec = _spec(None)
    assert "securitySchemes" not in spec.get("components", {})
    for method, path, op in _operations(spec):
        assert "401" not in op["responses"] and "security" not in op, (method, path)


def test_statuses_and_media_types_of_each_operation(keys_file: Path) -> None:
    ops = {(m, p): op for m, p, op in _operations(_spec(keys_file))}
    stream = ops[("POST", "/ask/stream")]["responses"]["200"]["content"]
    assert list(stream) == ["text/event-stream"]
    assert {"403", "429"} <= set(ops[("POST", "/ingest")]["responses"])
    assert "404" in ops[("GET", "/jobs/{job_id}")]["responses"]
    assert {"204", "403", "404"} <= set(ops[("DELETE", "/documents/{document_id}")]["responses"])
    for page in ("trace.html", "audit.html"):
        op = ops[("GET", f"/queries/{{query_id}}/{page}")]
        assert list(op["responses"]["200"]["content"]) == ["text/html"]
        assert "404" in op["responses"]
    ask = ops[("POST", "/ask")]["responses"]["200"]
    assert ask["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Answer"}
    assert {h for h, d in ask["headers"].items() if d["required"]} == {
        "X-Kgrag-Query-Id",
        "X-Kgrag-Iterations",
        "X-Kgrag-Exit-Reason",
        "X-Kgrag-Cost",
    }
    assert set(ask["links"]) >= {"trace", "audit", "followUp"}
    assert ops[("POST", "/ingest")]["responses"]["202"]["links"]["job"]["operationId"] == "getJob"


def test_the_upload_form_requires_one_to_four_files(keys_file: Path) -> None:
    spec = _spec(keys_file)
    ref = spec["paths"]["/ask/upload"]["post"]["requestBody"]["content"]["multipart/form-data"]
    body = spec["components"]["schemas"][ref["schema"]["$ref"].rsplit("/", 1)[1]]
    assert "files" in body["required"]
    assert (body["properties"]["files"]["minItems"], body["properties"]["files"]["maxItems"]) == (
        1,
        4,
    )


def test_a_405_names_the_allowed_methods() -> None:
    # not entered: no store is opened; a loopback Host, as the Host check wants
    client = TestClient(create_app(Settings()), base_url="http://127.0.0.1")
    for method, path in (("TRACE", "/healthz"), ("GET", "/ask"), ("DELETE", "/jobs/j1")):
        r = client.request(method, path)
        assert r.status_code == 405, (method, path, r.status_code)
        assert r.headers.get("allow"), (method, path, r.headers)
        assert r.json()["error"] == "method_not_allowed"


def test_a_405_on_a_path_of_two_routes_names_the_methods_of_both() -> None:
    # POST and DELETE /queries/{id}/flag are two routes; Starlette alone answers Allow: POST
    client = TestClient(create_app(Settings()), base_url="http://127.0.0.1")
    r = client.request("PUT", "/queries/q1/flag")
    assert r.status_code == 405
    assert r.headers["allow"] == "DELETE, POST"


@pytest.mark.parametrize(
    ("session_id", "ok"),
    [
        ("s1", True),
        ("a b", True),
        ("é" * 256, True),
        ("", False),
        (" s1", False),
        ("s1\u3000", False),
        ("s\n1", False),
        ("a" * 257, False),
    ],
)
def test_the_session_id_rule_is_the_key_guard_rule(session_id: str, ok: bool) -> None:
    """The schema's pattern for session_id refuses what kgrag.graph.keys refuses (256 characters
    are at most 1,024 bytes), so a schema-valid session id is never a 422 invalid_key."""
    from kgrag.graph.keys import key_problem

    assert (key_problem(session_id) is None) is ok or len(session_id) > 256
    try:
        AskRequest(question="q", session_id=session_id)
        accepted = True
    except ValueError:
        accepted = False
    assert accepted is ok, (session_id, KEY_PATTERN)


@settings(max_examples=500, deadline=None, derandomize=True)
@given(st.text(max_size=40))
def test_the_session_id_pattern_agrees_with_the_key_guard(session_id: str) -> None:
    from kgrag.graph.keys import key_problem

    assert (re.fullmatch(KEY_PATTERN, session_id) is not None) is (key_problem(session_id) is None)
