"""SECURITY.md: every string the HTTP API takes is refused with 422 when it holds a NUL character
(FalkorDB cannot parse such a parameter) or a lone surrogate. Checked on the OpenAPI document
(every string parameter and body field has a pattern refusing NUL, so a new endpoint cannot forget
it) and against a real ``kgrag serve`` on loopback."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from kgrag.config import Settings
from kgrag.server.app import create_app
from kgrag.server.launch import serve_subprocess


def _strings(
    schema: dict[str, Any], where: str, components: dict[str, Any], seen: frozenset[str]
) -> Iterator[tuple[str, dict[str, Any]]]:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        if name not in seen:
            yield from _strings(components[name], f"{where}:{name}", components, seen | {name})
        return
    for key in ("anyOf", "oneOf", "allOf"):
        for option in schema.get(key, []):
            yield from _strings(option, where, components, seen)
    uploaded_file = schema.get("format") == "binary" or "contentMediaType" in schema
    if schema.get("type") == "string" and not uploaded_file:
        yield where, schema
    if schema.get("type") == "array" and "items" in schema:
        yield from _strings(schema["items"], f"{where}[]", components, seen)
    for name, field in schema.get("properties", {}).items():
        yield from _strings(field, f"{where}.{name}", components, seen)


def _request_strings(doc: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    components = doc.get("components", {}).get("schemas", {})
    out: list[tuple[str, dict[str, Any]]] = []
    for path, operations in doc["paths"].items():
        for method, op in operations.items():
            for param in op.get("parameters", []):
                where = f"{method.upper()} {path} {param['in']} {param['name']}"
                out += _strings(param["schema"], where, components, frozenset())
            for media, body in (op.get("requestBody") or {}).get("content", {}).items():
                where = f"{method.upper()} {path} {media}"
                out += _strings(body["schema"], where, components, frozenset())
    return out


def test_every_string_parameter_and_field_refuses_nul_by_its_pattern() -> None:
    strings = _request_strings(create_app(Settings()).openapi())
    open_to_nul = [
        where
        for where, schema in strings
        if "enum" not in schema
        and not ("pattern" in schema and re.search(schema["pattern"], "a\x00b") is None)
    ]
    assert open_to_nul == [], f"strings the API takes with NUL allowed: {open_to_nul}"
    assert len(strings) > 10  # the walk sees the bodies, forms and parameters


def test_a_real_server_answers_422_to_nul_and_lone_surrogates(tmp_path: Path) -> None:
    env = {**os.environ, "KGRAG_DATA_DIR": str(tmp_path / "data"), "OMP_NUM_THREADS": "1"}
    env.pop("KGRAG_API_TOKEN", None)
    with serve_subprocess(f"falkordb-lite:///{tmp_path}/kg.db", env, tmp_path / "server.log") as up:
        json_headers = {"Content-Type": "application/json"}
        with httpx.Client(base_url=up.base, timeout=60) as http:
            answers = {
                "ask NUL": http.post("/ask", json={"question": "a\x00b"}),
                "ask surrogate": http.post(
                    "/ask", content=b'{"question": "a\\ud800b"}', headers=json_headers
                ),
                "stream surrogate": http.post(
                    "/ask/stream", content=b'{"question": "a\\udfffb"}', headers=json_headers
                ),
                "ingest NUL": http.post("/ingest", json={"paths": ["docs\x00/a.txt"]}),
                "upload NUL": http.post(
                    "/ask/upload",
                    data={"question": "a\x00b"},
                    files={"files": ("a.png", b"\x89PNG\r\n\x1a\n", "image/png")},
                    # a form on a server without authentication: any Authorization header
                    # shows it is not a cross-site HTML form (kgrag/server/browser.py)
                    headers={"Authorization": "Bearer local"},
                ),
                "job NUL": http.get("/jobs/a%00b"),
                "trace NUL": http.get("/queries/a%00b/trace"),
                "audit NUL": http.get("/queries/a%00b/audit"),
            }
            assert {k: r.status_code for k, r in answers.items()} == dict.fromkeys(answers, 422), {
                k: r.text[:200] for k, r in answers.items()
            }
            assert http.post("/ask", json={"question": "ab"}).status_code == 200  # the control
