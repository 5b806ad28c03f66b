"""``kgrag mcp``: kgrag as a Model Context Protocol server (the official ``mcp`` SDK), over stdio
or streamable HTTP.

Tools: ``ask`` (the answer with its citations: file, page, start/end seconds, image; the query
id, exit reason and whether the agent abstained), ``search`` (the evidence without an answer),
``list_documents``, ``describe_document``, ``open_trace``, ``audit``, and ``ingest`` (an
administrator only). Resource templates: ``kgrag://documents/{document_id}`` and
``kgrag://traces/{query_id}`` (the SDK gives a fixed resource no caller, so the list of
documents, which depends on who asks, is the ``list_documents`` tool).

Who calls is decided by the server, never by the model: no tool takes a user or groups. Over
stdio every call is the principal configured for the server process (``kgrag mcp --user ...
--groups ... --role ...``). Over HTTP every request authenticates as for the HTTP API
(``Authorization: Bearer`` with an API key or a JWT, :mod:`kgrag.auth`); without authentication
configured every request is the local principal and the server binds loopback only. Reads go
through that principal's ACL (:meth:`~kgrag.auth.principal.Principal.access`), and a trace or
audit opens only for the principal that asked (or an admin), as in the HTTP API.
"""

from __future__ import annotations

import base64
import binascii
import logging
import re
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ConfigDict, Field

from kgrag.agent.answer import Answer, Citation
from kgrag.agent.attachments import MAX_ATTACHMENTS
from kgrag.agent.audit import AuditReport
from kgrag.agent.evidence import Evidence
from kgrag.auth.authenticator import Authenticator, Unauthenticated
from kgrag.auth.principal import LOCAL, Principal, Role
from kgrag.auth.readers import check_query_reader
from kgrag.config import Settings
from kgrag.core import Closed, Frozen
from kgrag.errors import DependencyMissingError, KgragError

try:
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp.types import ToolAnnotations
except ImportError as e:  # pragma: no cover (the extra is installed wherever tests run)
    raise DependencyMissingError("mcp", "mcp") from e

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from kgrag.agent.agent import KnowledgeAgent

log = logging.getLogger(__name__)

#: How a tool call learns who calls: from the request's context (HTTP headers) or the process.
Identify = Callable[[Context[Any, Any]], Principal]

INSTRUCTIONS = (
    "kgrag answers questions over documents, images and recordings with numbered citations "
    "(file, page, start/end seconds of a recording, image). Call `ask` for an answer, `search` "
    "for the evidence alone; `open_trace` or `audit` with the query_id of an answer shows how "
    "it was reached. Cite what `ask` cites; when `abstained` is true the documents do not "
    "answer the question: say so instead of guessing."
)


class AttachmentData(Closed):
    """A file a question is about, sent inline: an image (PNG, JPEG, ...) or a recording."""

    name: str = Field(min_length=1, max_length=200, description="file name with its suffix")
    data: str = Field(min_length=1, description="the file's bytes, base64-encoded")


class AskResult(Frozen):
    """An answer as an MCP client gets it."""

    answer: str
    citations: tuple[Citation, ...]
    query_id: str
    exit_reason: str
    abstained: bool
    """True when the documents do not answer the question (exit reason ``not_found``)."""
    closest: tuple[Citation, ...] = ()
    """When abstaining: the closest documents found, which do not answer the question."""
    iterations: int
    session_id: str | None = None
    groundedness: float | None = None
    trace: str
    """The resource URI of this answer's trace."""

    @classmethod
    def of(cls, answer: Answer) -> AskResult:
        return cls(
            answer=answer.answer,
            citations=answer.citations,
            query_id=answer.query_id,
            exit_reason=answer.exit_reason,
            abstained=answer.exit_reason == "not_found",
            closest=answer.closest,
            iterations=answer.iterations,
            session_id=answer.session_id,
            groundedness=answer.groundedness,
            trace=trace_uri(answer.query_id),
        )


class DocumentInfo(Frozen):
    """A stored document the caller may read."""

    # built from a store row, which holds more properties than a client is shown: those are
    # dropped, not refused
    model_config = ConfigDict(extra="ignore")

    id: str
    title: str | None = None
    uri: str | None = None
    modality: str | None = None
    mime: str | None = None
    bytes: int | None = None
    ingested_at: str | None = None
    tags: tuple[str, ...] | None = None
    chunk_count: int | None = None
    image_count: int | None = None


class DocumentDescription(DocumentInfo):
    summary: str | None = None
    entities: tuple[str, ...] = ()
    """Names of the entities the document's passages mention or its images show."""


class IngestResult(Frozen):
    ingested: int
    skipped: int
    failed: int
    document_ids: tuple[str, ...]
    failures: tuple[str, ...]


def trace_uri(query_id: str) -> str:
    return f"kgrag://traces/{query_id}"


def process_identity(principal: Principal) -> Identify:
    """Every call is ``principal`` (stdio: the identity configured for the server process)."""
    return lambda _ctx: principal


def http_identity(authenticator: Authenticator | None) -> Identify:
    """Every call authenticates its HTTP request's ``Authorization`` header as the HTTP API
    does; without an authenticator every call is the local principal (loopback only)."""

    def identify(ctx: Context[Any, Any]) -> Principal:
        if authenticator is None:
            return LOCAL
        try:
            headers = ctx.headers
        except ValueError:  # no request: not an HTTP call
            headers = None
        if headers is None:
            raise _tool_error("this call carries no HTTP request to authenticate")
        try:
            return authenticator.authenticate(headers.get("authorization"))
        except Unauthenticated as e:
            raise _tool_error(f"unauthorized: {e}") from None

    return identify


def stdio_principal(user: str | None, groups: Sequence[str], roles: Sequence[Role]) -> Principal:
    """The principal of a stdio server: ``user`` with ``groups`` and ``roles`` (reader when none
    is given). Its id, ``mcp:<user>`` (``mcp:local`` without a user), is recorded as who
    asked."""
    return Principal(
        id=f"mcp:{user or 'local'}",
        user=user,
        groups=tuple(groups),
        roles=frozenset(roles or (Role.READER,)),
    )


def _tool_error(message: str) -> ToolError:
    return ToolError(message)


def _require(who: Principal, role: Role) -> None:
    if not who.can(role):
        held = ", ".join(sorted(r.value for r in who.roles)) or "none"
        raise _tool_error(f"forbidden: this needs the {role.value} role; this caller has {held}")


def _safe_name(name: str, index: int) -> str:
    base = re.sub(r"[^A-Za-z0-9._-]", "_", Path(name).name).lstrip(".")[:100]
    return base or f"attachment-{index}"


def _write_attachments(
    attachments: Sequence[AttachmentData], folder: Path, max_bytes: int
) -> list[Path]:
    if len(attachments) > MAX_ATTACHMENTS:
        raise _tool_error(f"at most {MAX_ATTACHMENTS} attachments, got {len(attachments)}")
    paths = []
    for index, item in enumerate(attachments):
        if len(item.data) > (max_bytes + 2) // 3 * 4 + 4:
            raise _tool_error(f"{item.name}: file is over the {max_bytes}-byte limit")
        try:
            raw = base64.b64decode(item.data, validate=True)
        except (binascii.Error, ValueError):
            raise _tool_error(f"{item.name}: data is not valid base64") from None
        target = folder / str(index) / _safe_name(item.name, index)
        target.parent.mkdir()
        target.write_bytes(raw)
        paths.append(target)
    return paths


class KgragTools:
    """What the tools do, on one agent, for the caller ``identify`` names."""

    def __init__(
        self, agent: KnowledgeAgent, identify: Identify, ingest_roots: Sequence[Path] = ()
    ) -> None:
        self.agent = agent
        self.identify = identify
        self.ingest_roots = tuple(ingest_roots)

    def reader(self, ctx: Context[Any, Any]) -> Principal:
        who = self.identify(ctx)
        _require(who, Role.READER)
        return who

    async def ask(
        self,
        ctx: Context[Any, Any],
        question: str,
        session_id: str | None,
        attachments: Sequence[AttachmentData],
    ) -> AskResult:
        who = self.reader(ctx)
        with tempfile.TemporaryDirectory(prefix="kgrag-mcp-") as folder:
            paths = _write_attachments(
                attachments, Path(folder), self.agent.ingest_options.max_file_bytes
            )
            answer = await self.agent.aask(
                question,
                session_id=session_id,
                user=who.user,
                groups=who.groups,
                asked_by=who.id,
                attachments=paths,
            )
        return AskResult.of(answer)

    async def search(self, ctx: Context[Any, Any], question: str, limit: int) -> Evidence:
        who = self.reader(ctx)
        return await self.agent.asearch(
            question, user=who.user, groups=who.groups, asked_by=who.id, limit=limit
        )

    def documents(self, ctx: Context[Any, Any]) -> list[DocumentInfo]:
        who = self.reader(ctx)
        rows = self.agent.store.read("document_list", who.access().params())
        return [DocumentInfo.model_validate(r) for r in rows]

    def describe(self, ctx: Context[Any, Any], document_id: str) -> DocumentDescription:
        who = self.reader(ctx)
        rows = self.agent.store.read("document_list", who.access().params())
        found = next((r for r in rows if r["id"] == document_id), None)
        if found is None:
            raise _tool_error(f"no document {document_id!r} readable by this caller")
        ids = [r["id"] for r in self.agent.store.read("document_entities", {"id": document_id})]
        names = sorted({r["name"] for r in self.agent.store.read("entity_by_ids", {"ids": ids})})
        return DocumentDescription.model_validate({**found, "entities": tuple(names)})

    def trace(self, ctx: Context[Any, Any], query_id: str) -> dict[str, Any]:
        from kgrag.executor.trace import read_trace

        who = self.reader(ctx)
        check_query_reader(self.agent.store, query_id, who)
        return read_trace(self.agent.store, query_id, who.access()).to_json()

    def audit(self, ctx: Context[Any, Any], query_id: str) -> AuditReport:
        from kgrag.agent.audit import build_audit

        who = self.reader(ctx)
        check_query_reader(self.agent.store, query_id, who)
        return build_audit(self.agent.store, query_id, who.access())

    async def ingest(
        self, ctx: Context[Any, Any], paths: Sequence[str], acl: Sequence[str]
    ) -> IngestResult:
        from kgrag.server.errors import ApiError
        from kgrag.server.security import confine_paths

        who = self.identify(ctx)
        _require(who, Role.ADMIN)
        try:
            confined = confine_paths(paths, acl, self.ingest_roots)
        except ApiError as e:
            raise _tool_error(f"{e.error}: {e.detail}") from None
        report = await self.agent.aingest(confined, acl, actor=who.id)
        return IngestResult(
            ingested=report.ingested,
            skipped=report.skipped,
            failed=report.failed,
            document_ids=tuple(report.document_ids),
            failures=tuple(f"{f.path}: {f.reason}" for f in report.failures),
        )


def build_server(
    agent: KnowledgeAgent, identify: Identify, *, ingest_roots: Sequence[Path] = ()
) -> MCPServer[Any]:
    """The MCP server of ``agent``; ``identify`` says who each call is
    (:func:`process_identity` for stdio, :func:`http_identity` for HTTP)."""
    from kgrag import __version__

    tools = KgragTools(agent, identify, ingest_roots)
    server: MCPServer[Any] = MCPServer(name="kgrag", version=__version__, instructions=INSTRUCTIONS)
    reads = ToolAnnotations(readOnlyHint=True, openWorldHint=False)

    def guarded(call: Callable[[], Any]) -> Any:
        try:
            return call()
        except KgragError as e:
            raise _tool_error(str(e)) from None

    @server.tool(annotations=ToolAnnotations(readOnlyHint=False, openWorldHint=False))
    async def ask(
        question: str,
        ctx: Context,
        session_id: str | None = None,
        attachments: list[AttachmentData] | None = None,
    ) -> AskResult:
        """Answer a question from the knowledge base with numbered citations (file, page,
        start/end seconds of a recording, image). `attachments`: images or recordings the
        question is about, base64-encoded (an empty question then asks what they show).
        `session_id` makes follow-up questions in one conversation. The answer's `query_id`
        opens its trace (`open_trace`) and audit (`audit`); `abstained` is true when the
        documents do not answer the question."""
        try:
            return await tools.ask(ctx, question, session_id, attachments or ())
        except KgragError as e:
            raise _tool_error(str(e)) from None

    @server.tool(annotations=ToolAnnotations(readOnlyHint=False, openWorldHint=False))
    async def search(question: str, ctx: Context, limit: int = 10) -> Evidence:
        """The evidence for a question without an answer: ranked passages, recording segments,
        images and documents, each with its document, page, start/end seconds and image; the
        `query_id` opens the trace of the search."""
        if not 1 <= limit <= 50:
            raise _tool_error("limit must be between 1 and 50")
        try:
            return await tools.search(ctx, question, limit)
        except KgragError as e:
            raise _tool_error(str(e)) from None

    @server.tool(annotations=reads)
    def list_documents(ctx: Context) -> list[DocumentInfo]:
        """The documents the caller may read: id, title, file, type, ingestion time, tags."""
        return guarded(lambda: tools.documents(ctx))

    @server.tool(annotations=reads)
    def describe_document(document_id: str, ctx: Context) -> DocumentDescription:
        """One readable document: its metadata, summary and the entities it mentions."""
        return guarded(lambda: tools.describe(ctx, document_id))

    @server.tool(annotations=reads)
    def open_trace(query_id: str, ctx: Context) -> dict[str, Any]:
        """How an answer was reached: its plans, steps, evidence and decisions (the caller's
        own questions only)."""
        return guarded(lambda: tools.trace(ctx, query_id))

    @server.tool(annotations=reads)
    def audit(query_id: str, ctx: Context) -> AuditReport:
        """The audit of an answer: its claims, the evidence for each, and what it missed."""
        return guarded(lambda: tools.audit(ctx, query_id))

    @server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False))
    async def ingest(paths: list[str], ctx: Context, acl: list[str] | None = None) -> IngestResult:
        """Ingest files or folders on the server (inside its ingest roots), readable by `acl`
        (`user:NAME`, `group:NAME`, `*`; public when empty). Administrators only."""
        try:
            return await tools.ingest(ctx, paths, acl or ())
        except KgragError as e:
            raise _tool_error(str(e)) from None

    @server.resource("kgrag://documents/{document_id}", mime_type="application/json")
    def document_resource(document_id: str, ctx: Context) -> dict[str, Any]:
        """One readable document, described."""
        return guarded(lambda: tools.describe(ctx, document_id)).model_dump(mode="json")

    @server.resource("kgrag://traces/{query_id}", mime_type="application/json")
    def trace_resource(query_id: str, ctx: Context) -> dict[str, Any]:
        """The trace of one of the caller's answers."""
        return guarded(lambda: tools.trace(ctx, query_id))

    return server


def http_app(
    server: MCPServer[Any], authenticator: Authenticator | None, *, host: str = "127.0.0.1"
) -> Starlette:
    """The streamable HTTP app (``/mcp``) behind the HTTP API's authentication: a request
    without a valid credential gets 401 before it reaches the MCP session."""
    from kgrag.server.identity import AuthMiddleware

    app = server.streamable_http_app(host=host)
    app.add_middleware(AuthMiddleware, authenticator=authenticator)
    return app


def run(
    settings: Settings,
    transport: Literal["stdio", "http"],
    *,
    principal: Principal,
    host: str = "127.0.0.1",
    port: int = 8765,
) -> None:
    """Open the agent ``settings`` names and serve it until interrupted: over stdio as
    ``principal``, or over streamable HTTP (``http://HOST:PORT/mcp``) authenticating each
    request (loopback only without authentication configured, as ``kgrag serve``)."""
    from kgrag.agent.agent import KnowledgeAgent

    authenticator = None
    if transport == "http":
        from kgrag.server import check_serve

        check_serve(settings, host)
        authenticator = Authenticator.from_settings(settings)
    agent = KnowledgeAgent.open(settings)
    try:
        if transport == "stdio":
            build_server(
                agent, process_identity(principal), ingest_roots=settings.ingest_roots
            ).run("stdio")
            return
        import uvicorn

        server = build_server(
            agent, http_identity(authenticator), ingest_roots=settings.ingest_roots
        )
        uvicorn.run(http_app(server, authenticator, host=host), host=host, port=port)
    finally:
        agent.close()
