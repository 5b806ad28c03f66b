"""The servers: ``kgrag serve`` (HTTP API) and ``kgrag mcp`` (MCP over stdio or HTTP)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from kgrag.cli.common import StoreOpt
from kgrag.config import Settings


def _check_log_format(value: str | None) -> str | None:
    """``--log-format``: a usage error unless text or json."""
    if value not in (None, "text", "json"):
        raise typer.BadParameter(f"{value!r} is not text or json", param_hint="'--log-format'")
    return value


def serve(
    host: Annotated[str, typer.Option("--host", help="address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="TCP port")] = 8000,
    ingest_root: Annotated[
        list[Path] | None,
        typer.Option("--ingest-root", help="folder POST /ingest may read (repeatable)"),
    ] = None,
    store: StoreOpt = None,
    log_format: Annotated[
        str | None,
        typer.Option(
            "--log-format",
            callback=_check_log_format,
            help="text, or json: one object a line with request and query ids (KGRAG_LOG_FORMAT)",
        ),
    ] = None,
) -> None:
    """Serve the HTTP API. Who may call it: API keys (`kgrag auth add-key`,
    KGRAG_API_KEYS_FILE) or JWTs (KGRAG_JWT_*); with neither it binds loopback only and every
    request is the local principal. Body limit: KGRAG_MAX_REQUEST_BYTES."""
    from kgrag.server import serve as run_server

    overrides: dict[str, Any] = {"store": store} if store else {}
    if log_format:
        overrides["log_format"] = log_format
    if ingest_root:
        overrides["ingest_roots"] = tuple(ingest_root)
    run_server(Settings(**overrides), host=host, port=port)


def mcp(
    transport: Annotated[
        str, typer.Option("--transport", help="stdio (a client starts this) or http")
    ] = "stdio",
    user: Annotated[
        str | None, typer.Option("--user", help="stdio: the user every call reads as")
    ] = None,
    groups: Annotated[str, typer.Option("--groups", help="stdio: comma-separated groups")] = "",
    role: Annotated[
        list[str] | None,
        typer.Option("--role", help="stdio: reader (default) or admin (may ingest); repeatable"),
    ] = None,
    host: Annotated[str, typer.Option("--host", help="http: address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="http: TCP port")] = 8765,
    ingest_root: Annotated[
        list[Path] | None,
        typer.Option("--ingest-root", help="folder the ingest tool may read (repeatable)"),
    ] = None,
    store: StoreOpt = None,
) -> None:
    """Serve kgrag to MCP clients (assistants, coding agents): tools ask, search,
    list_documents, describe_document, open_trace, audit and (admin) ingest. Over stdio every
    call is --user/--groups/--role (the model cannot choose); over HTTP (/mcp) each request
    authenticates as for `kgrag serve`."""
    from kgrag.auth.principal import Role
    from kgrag.integrations import mcp as mcp_server

    if transport not in ("stdio", "http"):
        raise typer.BadParameter("must be stdio or http", param_hint="--transport")
    try:
        roles = [Role(r) for r in role or ()]
        principal = mcp_server.stdio_principal(
            user, [g.strip() for g in groups.split(",") if g.strip()], roles
        )
    except ValueError as e:
        raise typer.BadParameter(str(e)) from None
    overrides: dict[str, Any] = {"store": store} if store else {}
    if ingest_root:
        overrides["ingest_roots"] = tuple(ingest_root)
    mcp_server.run(
        Settings(**overrides),
        "http" if transport == "http" else "stdio",
        principal=principal,
        host=host,
        port=port,
    )
