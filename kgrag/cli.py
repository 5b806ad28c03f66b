"""The kgrag command line: parse, build objects, call the library, turn KgragError into exit
codes (the ``exit_code`` of each class in kgrag/errors.py, listed in EXIT_CODES_EPILOG and
README). Errors print as one line (no traceback unless --debug)."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.tree import Tree

from kgrag.config import Settings
from kgrag.core import OPERATOR
from kgrag.errors import ConfigError, KgragError

EXIT_CODES_EPILOG = (
    "Exit codes: 0 ok, 1 unexpected error, 2 usage error or some inputs failed, 3 configuration, "
    "4 store, 5 model, 6 plan, 7 execution, 8 not found, 130 interrupted."
)
app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="kgrag: a graph-database-backed multimodal knowledge agent.",
    epilog=EXIT_CODES_EPILOG,
)
db_app = typer.Typer(no_args_is_help=True, help="Schema and statistics of the store.")
app.add_typer(db_app, name="db")
eval_app = typer.Typer(no_args_is_help=True, help="Evaluate retrieval quality.")
app.add_typer(eval_app, name="eval")
auth_app = typer.Typer(
    no_args_is_help=True, help="API keys of the HTTP server (the file KGRAG_API_KEYS_FILE)."
)
app.add_typer(auth_app, name="auth")
traces_app = typer.Typer(no_args_is_help=True, help="Retention of the traces of answers.")
app.add_typer(traces_app, name="traces")
# soft_wrap: an error or status line stays one line when stderr is not a terminal (80 columns)
err = Console(stderr=True, soft_wrap=True)
out = Console()

StoreOpt = Annotated[
    str | None, typer.Option("--store", help="store URI (default: embedded ./kgrag-data/kg.db)")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="print one JSON object on stdout")]
_state: dict[str, bool] = {"debug": False, "quiet": False}
# loggers whose warnings only repeat what the one error line says (connection retries)
#: Loggers that repeat what kgrag's own one-line error says: each retry, and the Neo4j driver's
#: ERROR records for every failed routing attempt before it raises (shown with --debug).
_NOISY_LOGGERS = ("neo4j", "kgrag.graph.retry")


def _set_quiet(value: bool) -> bool:
    # `kgrag -q ask` and `kgrag ask -q` both land here; the group callback resets it per run
    if value:
        _state["quiet"] = True
    return value


QuietOpt = Annotated[
    bool, typer.Option("--quiet", "-q", callback=_set_quiet, help="no progress output")
]


@app.callback()
def _main(
    ctx: typer.Context,
    debug: Annotated[bool, typer.Option("--debug", help="show tracebacks and debug logs")] = False,
    quiet: QuietOpt = False,
    metrics_file: Annotated[
        Path | None,
        typer.Option(
            "--metrics-file",
            help="when the command ends, write its metrics there in the Prometheus text format "
            "(for node-exporter's textfile collector: a batch job's figures)",
        ),
    ] = None,
) -> None:
    _state["debug"], _state["quiet"] = debug, quiet
    if metrics_file is not None:  # when the command ends, failed or not
        from kgrag.metrics import write_textfile

        ctx.call_on_close(lambda: write_textfile(metrics_file))
    logging.basicConfig(
        level=logging.DEBUG if debug else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
    )
    if debug:  # main() quiets them by default
        for name in _NOISY_LOGGERS:
            logging.getLogger(name).setLevel(logging.NOTSET)


def _settings(store: str | None) -> Settings:
    return Settings(store=store) if store else Settings()


def _store(store: str | None, *, run_migrations: bool = True) -> Any:
    from kgrag.graph import open_settings_store

    return open_settings_store(_settings(store), run_migrations=run_migrations)


def _agent(store: str | None) -> Any:
    from kgrag.agent.agent import KnowledgeAgent

    return KnowledgeAgent.open(_settings(store))


def _emit(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False, default=str) + "\n")


def _check_globs(ctx: typer.Context, param: Any, values: list[str] | None) -> list[str] | None:
    """``--include`` / ``--exclude``: a usage error (exit 2, naming the option) for a glob that
    can select nothing (empty, a control character, too long)."""
    from kgrag.ingest.pipeline import check_glob

    try:
        return [check_glob(v) for v in values or ()]
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint=f"'--{param.name}'") from None


def _check_shard(value: str | None) -> str | None:
    """``--shard I/N``: a usage error (exit 2, naming the option) unless 1 <= I <= N."""
    if value is None:
        return None
    from kgrag.ingest.shards import Shard

    try:
        Shard.parse(value)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="'--shard'") from None
    return value


def _check_acl(values: list[str] | None) -> list[str] | None:
    """``--acl``: a usage error (exit 2, naming the value) unless every entry is ``user:NAME``,
    ``group:NAME`` or ``*``."""
    from kgrag.acl import parse_principal
    from kgrag.errors import InvalidAclError

    try:
        return [parse_principal(v) for v in values or ()]
    except InvalidAclError as e:
        raise typer.BadParameter(str(e), param_hint="'--acl'") from None


def _check_log_format(value: str | None) -> str | None:
    """``--log-format``: a usage error unless text or json."""
    if value not in (None, "text", "json"):
        raise typer.BadParameter(f"{value!r} is not text or json", param_hint="'--log-format'")
    return value


#: At most this many skipped files are named per reason in the summary (--json has them all).
SKIPS_SHOWN = 10


def _print_skips(report: Any) -> None:
    """The skipped files by reason: counts, and the first files of each."""
    if not report.skips:
        return
    by_kind = report.skipped_by_kind()
    err.print(
        "  skipped: " + ", ".join(f"{kind.replace('_', ' ')} {n}" for kind, n in by_kind.items()),
        markup=False,
    )
    for kind in by_kind:
        of_kind = [s for s in report.skips if s.kind == kind]
        for skip in of_kind[:SKIPS_SHOWN]:
            err.print(f"    {skip.path}: {skip.detail}", markup=False)
        if len(of_kind) > SKIPS_SHOWN:
            err.print(
                f"    ... and {len(of_kind) - SKIPS_SHOWN} more {kind.replace('_', ' ')} "
                "(--json lists every file)",
                markup=False,
            )


def _cli_actor() -> str:
    """Who runs a CLI command, as recorded with an ACL change: ``cli:<os user>``."""
    import getpass
    import os

    try:
        return f"cli:{getpass.getuser()}"
    except (OSError, KeyError):  # no user name for this uid (a container)
        return f"cli:uid-{os.getuid()}"


@app.command()
def ingest(
    paths: Annotated[list[str], typer.Argument(help="files, folders, globs or JSONL manifests")],
    acl: Annotated[
        list[str] | None,
        typer.Option(
            "--acl",
            callback=_check_acl,
            help="who may read: user:NAME, group:NAME or * (repeatable); public when none",
        ),
    ] = None,
    workers: Annotated[int, typer.Option("--workers", min=1, help="parser threads")] = 1,
    shard: Annotated[
        str | None,
        typer.Option(
            "--shard",
            metavar="I/N",
            callback=_check_shard,
            help="take only shard I of N of the inputs (by a stable hash of each file's path), "
            "so N processes on N machines split one folder; run --shard 1/N ... N/N",
        ),
    ] = None,
    include: Annotated[
        list[str] | None,
        typer.Option(
            "--include",
            metavar="GLOB",
            callback=_check_globs,
            help="ingest only files found in folders or globs that match (repeatable; "
            "'*.md', 'docs/*.pdf': matched from the right of the path)",
        ),
    ] = None,
    exclude: Annotated[
        list[str] | None,
        typer.Option(
            "--exclude",
            metavar="GLOB",
            callback=_check_globs,
            help="skip files that match (repeatable)",
        ),
    ] = None,
    ray: Annotated[
        bool,
        typer.Option(
            "--ray",
            help="parse and run the models on Ray (kgrag's ray extra): the cluster of "
            "RAY_ADDRESS (ray job submit sets it), else a local Ray sized to this machine",
        ),
    ] = False,
    ray_address: Annotated[
        str | None,
        typer.Option(
            "--ray-address",
            metavar="ADDRESS",
            help="join this Ray cluster (ray://HOST:10001, HOST:6379 or auto); implies --ray",
        ),
    ] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,  # read through _state (set by its callback)
) -> None:
    """Ingest documents, images and recordings into the graph. Every file found and not
    ingested is listed with its reason (the summary, and ``skips`` in --json); the exit code
    is 2 when some failed."""
    from kgrag.ingest.pipeline import ProgressEvent
    from kgrag.ingest.shards import Shard

    with _agent(store) as agent:
        agent.ingest_options = agent.ingest_options.model_copy(
            update={
                "workers": workers,
                "shard": Shard.parse(shard) if shard else None,
                "include": tuple(include or ()),
                "exclude": tuple(exclude or ()),
            }
        )
        show = not (as_json or _state["quiet"])
        with Progress(
            TextColumn("{task.description:>6}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=err,
            disable=not show,
        ) as bars:
            tasks: dict[str, Any] = {}

            def on_progress(e: ProgressEvent) -> None:
                if e.stage not in tasks:
                    tasks[e.stage] = bars.add_task(e.stage, total=e.total)
                bars.update(tasks[e.stage], completed=e.done, total=e.total)

            report = agent.ingest(
                paths,
                acl or (),
                progress=on_progress,
                actor=_cli_actor(),
                ray=ray_address or ray,
            )
    if as_json:
        _emit(
            report.model_dump(
                include={
                    "ingested",
                    "skipped",
                    "skips",
                    "failed",
                    "failures",
                    "seconds",
                    "stage_seconds",
                    "acl_updated",
                    "acl_changes",
                    "shard",
                    "other_shards",
                }
            )
        )
    elif not _state["quiet"]:
        err.print(
            f"ingested {report.ingested}, skipped {report.skipped}, failed {report.failed} "
            f"in {report.seconds:.1f} s"
        )
        _print_skips(report)
        if report.shard:
            err.print(
                f"  shard {report.shard}: {report.other_shards} input(s) left to other shards"
            )
        for c in report.acl_changes:
            change = f"{c.uri}: {', '.join(c.old_acl)} -> {', '.join(c.new_acl)}"
            err.print(f"  ACL changed {escape(change)}")
        for f in report.failures:
            err.print(f"  [red]failed[/red] {escape(f'{f.path}: {f.reason}')}")
        if report.stage_seconds:
            err.print(
                "  time per stage: "
                + ", ".join(f"{k} {v:.1f} s" for k, v in report.stage_seconds.items())
            )
    raise typer.Exit(2 if report.failed else 0)


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="the question ('' with --attach: the file asks)")],
    session: Annotated[str | None, typer.Option("--session", help="conversation id")] = None,
    user: Annotated[str | None, typer.Option("--user", help="who asks (for document ACLs)")] = None,
    groups: Annotated[
        str, typer.Option("--groups", help="comma-separated groups of the user")
    ] = "",
    attach: Annotated[
        list[Path] | None,
        typer.Option("--attach", help="an image or recording the question is about (repeatable)"),
    ] = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="also print iterations, exit reason, cost")
    ] = False,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,  # read through _state (set by its callback)
) -> None:
    """Answer a question with citations; the plan and steps stream as they run."""
    group_list = [g.strip() for g in groups.split(",") if g.strip()]
    show = not (as_json or _state["quiet"])

    def on_plan(plan: Any) -> None:
        if show:
            err.print(f"[bold]plan[/bold] ({len(plan.plan)} steps)")

    def on_step(step: Any, outcome: Any) -> None:
        if show:
            colour = {"ok": "green", "skipped": "yellow"}.get(outcome.status, "red")
            err.print(
                f"  step {step.step_id} {escape(f'{step.type:<13}')} "
                f"[{colour}]{escape(outcome.status)}[/{colour}] "
                f"{outcome.count} hits {outcome.duration_ms:.0f} ms"
                + (f"  ({escape(str(outcome.error))})" if outcome.error else "")
            )

    with _agent(store) as agent:
        answer = agent.ask(
            question,
            session_id=session,
            user=user,
            groups=group_list,
            attachments=attach or (),
            on_plan=on_plan,
            on_step=on_step,
        )
    if as_json:
        _emit(answer.to_json())
        return
    out.print(answer.answer, markup=False, highlight=False)
    qid = escape(answer.query_id)
    out.print(f"\n[dim]query {qid} · kgrag trace {qid}[/dim]")
    if verbose:
        out.print(
            f"iterations {answer.iterations} · exit reason {answer.exit_reason} · "
            f"cost ${answer.cost:.6f} · {answer.latency_ms:.0f} ms",
            markup=False,
            highlight=False,
        )


@app.command()
def trace(
    query_id: Annotated[str, typer.Argument(help="the query id an answer printed")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
    html: Annotated[
        Path | None, typer.Option("--html", help="write the trace viewer page to FILE")
    ] = None,
) -> None:
    """Show the reasoning of one answer: plan, steps, their Cypher and evidence."""
    from kgrag.executor.trace import read_trace

    with _store(store) as st:  # the operator, who holds the store itself, reads everything
        data = read_trace(st, query_id, OPERATOR)
    if html is not None:
        from kgrag.viewer import render_trace_html

        html.write_text(render_trace_html(data), encoding="utf-8")
        if not _state["quiet"]:
            err.print(f"wrote {html}", markup=False)
    if as_json:
        _emit(data)
        return
    if html is not None:
        return
    q = data["query"]
    tree = Tree(
        "[bold]Query[/bold] "
        + escape(f"{q['id']}: {q['text']} ({q['latency_ms']} ms, {q['exit_reason']})")
    )
    plan = tree.add(
        "[bold]Plan[/bold] " + escape(f"{data['plan']['id']} ({data['plan']['source']})")
    )
    for st_ in data["steps"]:
        node = plan.add(
            escape(
                f"step {st_['step_id']} {st_['type']} [{st_['status']}] "
                f"deps={st_['dependencies']} {st_['result_count']} hits "
                f"{st_['duration_ms']} ms" + (f" — {st_['error']}" if st_["error"] else "")
            )
        )
        for r in st_["returned"][:5]:
            node.add(escape(f"#{r['rank']} {r['kind']} {r['id']} score={r['score']:.3f}"))
    tree.add(f"[bold]Answer[/bold] cites {len(data['answer']['citations'])} sources")
    out.print(tree)


@app.command()
def audit(
    query_id: Annotated[str, typer.Argument(help="the query id an answer printed")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
    html: Annotated[
        Path | None, typer.Option("--html", help="write the audit report page to FILE")
    ] = None,
) -> None:
    """Audit one answer: plan, timed steps, sources, reasoning, groundedness, cost."""
    from kgrag.agent.audit import build_audit

    with _store(store) as st:  # the operator, who holds the store itself, reads everything
        report = build_audit(st, query_id, OPERATOR)
    if html is not None:
        html.write_text(report.to_html(), encoding="utf-8")
        if not _state["quiet"]:
            err.print(f"wrote {html}", markup=False)
    if as_json:
        sys.stdout.write(report.to_json() + "\n")
    elif html is None:
        v = report.verification
        out.print(f"Query {report.query_id}: {report.question}", markup=False)
        out.print(
            f"exit {report.exit_reason} after {report.iterations} iteration(s), cost {report.cost}",
            markup=False,
        )
        out.print(f"verification: {v.status} — {v.assessment}", markup=False)
        for line in report.reasoning:
            out.print(f"  {line}", markup=False)
        for src in report.sources:
            out.print(f"  [{src.marker}] {src.title or src.node_id} {src.uri or ''}", markup=False)


@app.command()
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


@app.command()
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


@app.command()
def delete(
    document_id: Annotated[str, typer.Argument(help="a Document id")],
    store: StoreOpt = None,
) -> None:
    """Remove a document and what only it supported."""
    with _agent(store) as agent:
        agent.delete(document_id)
    if not _state["quiet"]:
        err.print(f"deleted {document_id}", markup=False)


@app.command()
def demo(
    workdir: Annotated[
        Path, typer.Option("--dir", help="where the demo corpus and store go")
    ] = Path("demo-output"),
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            help="store URI to run the demo on, e.g. neo4j://127.0.0.1:7687 (credentials from "
            "KGRAG_NEO4J_USER / KGRAG_NEO4J_PASSWORD). It REPLACES what is in that store: "
            "every node is deleted first, without asking. Default: a new embedded store in "
            "DIR/store",
        ),
    ] = None,
) -> None:
    """Make a small multimodal corpus, ingest it, and answer questions with citations."""
    from kgrag.demo.run import run_demo

    settings = None
    if store:
        settings = Settings(store=store, data_dir=workdir / "store")
    run_demo(workdir, console=out, settings=settings)


def _keys_file() -> Path:
    from kgrag.errors import ConfigError

    path = Settings().api_keys_file
    if path is None:
        raise ConfigError(
            "set KGRAG_API_KEYS_FILE to the API key file (e.g. /etc/kgrag/api-keys.json); "
            "`kgrag serve` reads the same setting"
        )
    return path


def _expiry(value: str | None) -> Any:
    from datetime import UTC, datetime

    if value is None:
        return None
    try:
        when = datetime.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(
            f"{value!r} is not an ISO 8601 date or time (e.g. 2027-01-31 or "
            "2027-01-31T12:00:00+00:00)",
            param_hint="'--expires'",
        ) from None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


@auth_app.command("add-key")
def auth_add_key(
    user: Annotated[str, typer.Option("--user", help="the user the key reads as")],
    role: Annotated[
        list[str],
        typer.Option("--role", help="reader, writer, admin or impersonate (repeatable)"),
    ],
    groups: Annotated[str, typer.Option("--groups", help="comma-separated groups")] = "",
    expires: Annotated[
        str | None, typer.Option("--expires", help="ISO 8601 date or time (UTC unless given)")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Create an API key and print it once (only its hash is stored)."""
    from kgrag.auth.apikeys import add_key
    from kgrag.auth.principal import Role

    known = {r.value: r for r in Role}
    bad = [r for r in role if r not in known]
    if bad:
        raise typer.BadParameter(
            f"unknown role(s) {', '.join(bad)}; roles: {', '.join(known)}", param_hint="'--role'"
        )
    try:
        entry, key = add_key(
            _keys_file(),
            user=user,
            groups=[g.strip() for g in groups.split(",")] if groups.strip() else [],
            roles=[known[r] for r in role],
            expires=_expiry(expires),
        )
    except ValueError as e:
        raise typer.BadParameter(str(e)) from None
    if as_json:
        _emit({"id": entry.id, "key": key, **entry.model_dump(mode="json", exclude={"sha256"})})
        return
    sys.stdout.write(key + "\n")
    if not _state["quiet"]:
        err.print(
            f"key {entry.id} for user {entry.user} "
            f"(roles {', '.join(entry.roles)}; groups {', '.join(entry.groups) or 'none'}): "
            "shown once, store it now",
            markup=False,
        )


@auth_app.command("list-keys")
def auth_list_keys(as_json: JsonOpt = False) -> None:
    """List the API keys (ids, users, groups, roles, dates; never a key)."""
    from kgrag.auth.apikeys import read_keys

    keys = read_keys(_keys_file()).keys
    rows = [k.model_dump(mode="json", exclude={"sha256"}) for k in keys]
    if as_json:
        _emit({"keys": rows})
        return
    for r in rows:
        sys.stdout.write(
            f"{r['id']}  {r['user']}  roles={','.join(r['roles'])}  "
            f"groups={','.join(r['groups']) or '-'}  created={r['created']}  "
            f"expires={r['expires'] or 'never'}\n"
        )


@auth_app.command("revoke-key")
def auth_revoke_key(
    key_id: Annotated[str, typer.Argument(help="the key id list-keys shows")],
) -> None:
    """Remove an API key: a running server refuses it from its next request."""
    from kgrag.auth.apikeys import revoke_key

    entry = revoke_key(_keys_file(), key_id)
    if not _state["quiet"]:
        err.print(f"revoked key {entry.id} of user {entry.user}", markup=False)


@db_app.command("migrate")
def db_migrate(store: StoreOpt = None) -> None:
    """Apply pending schema migrations."""
    from kgrag.graph.migrations import migrate, status

    with _store(store, run_migrations=False) as st:
        applied = migrate(st)
        err.print(f"applied {len(applied)} migrations; {len(status(st))} known")


@db_app.command("status")
def db_status(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Show which migrations are applied."""
    from kgrag.graph.migrations import status

    with _store(store, run_migrations=False) as st:
        rows = status(st)
        version = st.server_version()
    if as_json:
        _emit({"server": version, "migrations": [r.model_dump() for r in rows]})
        return
    out.print(f"server: {version}", markup=False)
    for r in rows:
        out.print(f"  {r.name}: {r.applied_at or 'pending'}", markup=False)


@db_app.command("documents")
def db_documents(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """List every stored document (id, title, type, file): the ids `kgrag delete` takes."""
    with _store(store) as st:
        rows = st.read("document_list", {"principals": [], "admin": True})
    docs = [
        {k: r[k] for k in ("id", "title", "modality", "uri", "ingested_at", "tags")} for r in rows
    ]
    if as_json:
        _emit({"documents": docs})
        return
    for d in docs:
        out.print(f"{d['id']}  {d['modality']:<5}  {d['title'] or ''}  {d['uri']}", markup=False)


@db_app.command("stats")
def db_stats(store: StoreOpt = None, as_json: JsonOpt = False) -> None:
    """Count nodes per label and relationships per type."""
    with _store(store) as st:
        nodes = {r["label"]: r["n"] for r in st.read("stats_labels")}
        rels = {r["type"]: r["n"] for r in st.read("stats_relationships")}
    if as_json:
        _emit({"nodes": nodes, "relationships": rels})
        return
    for k, v in nodes.items():
        out.print(f"{k:>16} {v}", markup=False)
    for k, v in rels.items():
        out.print(f"{k:>16} {v}", markup=False)


@traces_app.command("prune")
def traces_prune(
    older_than: Annotated[
        float,
        typer.Option(
            "--older-than",
            metavar="DAYS",
            min=0,
            help="remove the traces of questions asked more than DAYS days ago (0: all)",
        ),
    ],
    keep_last: Annotated[
        int, typer.Option("--keep-last", min=0, help="keep the N newest questions in any case")
    ] = 0,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Remove old traces: each question's Query, Plan, Step and Answer nodes with their
    relationships, and sessions left empty. Documents, chunks, images and entities stay."""
    from kgrag.retention import prune_traces

    with _store(store) as st:
        report = prune_traces(st, older_than_days=older_than, keep_last=keep_last)
    if as_json:
        _emit(report.model_dump())
    elif not _state["quiet"]:
        err.print(
            f"pruned {report.queries} questions asked before {report.before} "
            f"({report.nodes} trace nodes, {report.sessions} sessions)",
            markup=False,
        )


@app.command()
def forget(
    user: Annotated[str, typer.Option("--user", help="the user whose questions to erase")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Erase one user's questions: their traces, answers, audits and the sessions left empty
    (their conversation memory). Other users' questions stay; documents are not touched."""
    from kgrag.auth.principal import check_name
    from kgrag.retention import forget_user

    try:
        check_name("user", user)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="'--user'") from None
    with _store(store) as st:
        report = forget_user(st, user)
    if as_json:
        _emit(report.model_dump(exclude={"before"}))
    elif not _state["quiet"]:
        err.print(
            f"erased {report.queries} questions of {user} ({report.nodes} trace nodes, "
            f"{report.sessions} sessions)",
            markup=False,
        )


@db_app.command("backup")
def db_backup(
    path: Annotated[Path, typer.Argument(help="the backup file to write (a folder: kg.db in it)")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Write a consistent snapshot of the embedded store to PATH while it keeps serving (Neo4j:
    `neo4j-admin database dump`, docs/operations.md)."""
    from kgrag.graph.backup import backup

    with _store(store, run_migrations=False) as st:
        written = backup(st, path)
    if as_json:
        _emit(written.model_dump(exclude={"kept"}))
    elif not _state["quiet"]:
        err.print(f"backed up to {written.path} ({written.bytes} bytes)", markup=False)


@db_app.command("restore")
def db_restore(
    path: Annotated[Path, typer.Argument(help="a backup that `kgrag db backup` wrote")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Replace the embedded store with the backup PATH; refused while any process uses the
    store. The replaced files are kept beside it (*.before-restore-TIME)."""
    from kgrag.errors import ConfigError
    from kgrag.graph import embedded_path
    from kgrag.graph.backup import NOT_EMBEDDED, restore

    db = embedded_path(_settings(store).store)
    if db is None:
        raise ConfigError(NOT_EMBEDDED)
    restored = restore(db, path)
    if as_json:
        _emit(restored.model_dump())
    elif not _state["quiet"]:
        err.print(
            f"restored {restored.path} from {path}; the replaced files are kept: "
            + ", ".join(restored.kept or ["none"]),
            markup=False,
        )


EvalQuestionsOpt = Annotated[
    Path, typer.Option("--questions", help="HippoRAG-format questions (MuSiQue or HotpotQA)")
]
EvalCorpusOpt = Annotated[Path, typer.Option("--corpus", help="the passages to retrieve from")]
EvalStoreOpt = Annotated[
    str | None,
    typer.Option("--store", help="store URI (default: one per corpus in ./kgrag-data/eval)"),
]
EvalLimitOpt = Annotated[int | None, typer.Option("--limit", min=1, help="first N questions")]


def _eval_progress(show: bool) -> Progress:
    """The progress bars of the ``kgrag eval`` commands (on stderr; hidden for ``--json``)."""
    return Progress(
        TextColumn("{task.description:>9}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=err,
        disable=not show,
    )


@eval_app.command("retrieval")
def eval_retrieval(
    questions: EvalQuestionsOpt,
    corpus: EvalCorpusOpt,
    store: EvalStoreOpt = None,
    limit: EvalLimitOpt = None,
    per_question: Annotated[
        Path | None,
        typer.Option("--per-question", help="write each question's titles and recall (JSON)"),
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Passage recall@2/@5 of kgrag and of dense-only retrieval, and per-question latency."""
    from kgrag.eval.retrieval import run_retrieval_eval

    show = not (as_json or _state["quiet"])
    with _eval_progress(show) as bars:
        tasks: dict[str, Any] = {}

        def on_progress(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bars.add_task(stage, total=total)
            bars.update(tasks[stage], completed=done, total=total)

        report = run_retrieval_eval(
            questions,
            corpus,
            Settings(),
            store=store,
            limit=limit,
            progress=lambda e: on_progress(e.stage, e.done, e.total),
            on_question=lambda n, total: on_progress("questions", n, total),
        )
    if per_question is not None:
        rows = [r.row() for r in report.per_question]
        per_question.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    if as_json:
        _emit(report.summary())
        return
    out.print(
        f"{report.questions} questions, {report.passages} passages ({report.format})", markup=False
    )
    for name, r in (("kgrag", report.kgrag), ("dense", report.dense)):
        out.print(f"{name:>6}: recall@2 {r.at_2 * 100:.1f}  recall@5 {r.at_5 * 100:.1f}")
    lat = report.latency_ms
    out.print(f"latency per question: p50 {lat.p50:.0f} ms, p95 {lat.p95:.0f} ms")
    ing = report.ingest
    out.print(
        f"ingestion: {ing.ingested} new passages, {ing.skipped} already stored, "
        f"{ing.seconds:.1f} s (ingestion fingerprint {report.ingestion_fingerprint})",
        markup=False,
    )


@eval_app.command("answers")
def eval_answers(
    questions: EvalQuestionsOpt,
    corpus: EvalCorpusOpt,
    store: EvalStoreOpt = None,
    limit: EvalLimitOpt = None,
    unanswerable: Annotated[
        bool,
        typer.Option(
            "--unanswerable/--no-unanswerable",
            help="also ask each question with its supporting passages hidden, and out-of-domain "
            "questions (abstention figures)",
        ),
    ] = True,
    as_json: JsonOpt = False,
) -> None:
    """Is the gold answer (or an alias) in the agent's answer? With recall@k and abstention."""
    from kgrag.eval.answers import run_answers_eval

    show = not (as_json or _state["quiet"])
    with _eval_progress(show) as bars:
        task = bars.add_task("questions", total=None)
        report = run_answers_eval(
            questions,
            corpus,
            Settings(),
            store=store,
            limit=limit,
            unanswerable=unanswerable,
            out_of_domain=unanswerable,
            on_question=lambda n, total: bars.update(task, completed=n, total=total),
        )
    if as_json:
        _emit(report.model_dump(mode="json", by_alias=True))
        return
    a = report.answerable
    out.print(
        f"answerable: {a.correct}/{a.questions} answers contain the gold answer "
        f"({(a.answer_accuracy or 0) * 100:.1f}%), false abstention {a.abstention_rate * 100:.1f}%",
        markup=False,
    )
    if a.recall is not None:
        out.print(
            f"retrieval: recall@2 {a.recall.at_2 * 100:.1f}  recall@5 {a.recall.at_5 * 100:.1f}"
        )
    for name, summary in (
        ("unanswerable", report.unanswerable),
        ("out of domain", report.out_of_domain),
    ):
        if summary is not None:
            out.print(
                f"{name}: abstained on {summary.abstained}/{summary.questions} "
                f"({summary.abstention_rate * 100:.1f}%)",
                markup=False,
            )


@eval_app.command("intents")
def eval_intents(as_json: JsonOpt = False) -> None:
    """Accuracy of the intent classifier on the held-out phrasings and on issue 15's phrasings
    (neither trained nor tuned on)."""
    from kgrag.eval.intents import run_intent_eval

    report = run_intent_eval()
    if as_json:
        _emit(report.model_dump(mode="json"))
        return
    out.print(
        f"{report.training_phrasings} training phrasings, accuracy on the training folds "
        f"{report.cv_accuracy * 100:.1f}%, fallback margin {report.threshold} (chosen on them)",
        markup=False,
    )
    for r in report.sets:
        out.print(
            f"{r.name}: {r.size} phrasings, class accuracy {r.accuracy * 100:.1f}%, "
            f"right plan {r.plan_accuracy * 100:.1f}% ({r.fallbacks} unsure -> content plan)",
            markup=False,
        )
        for m in r.misses:
            out.print(
                f"  miss: {m.text!r} is {m.label}, classified {m.predicted} "
                f"(margin {m.margin:.2f}), acted on as {m.acted_on}",
                markup=False,
            )


def _usage_error_classes() -> tuple[type[Exception], ...]:
    """The ClickException classes typer may raise: typer >= 0.23 bundles its own copy of click
    (``typer._click``), older versions raise the real click's."""
    classes: list[type[Exception]] = []
    try:
        from typer._click.exceptions import ClickException as TyperClickException

        classes.append(TyperClickException)
    except ImportError:  # an older typer that uses click itself
        pass
    try:
        from click.exceptions import ClickException

        classes.append(ClickException)
    except ImportError:
        pass
    return tuple(classes)


def _print_error(message: str) -> None:
    """One line on stderr, whatever the message holds (newlines, brackets)."""
    err.print(f"[red]error:[/red] {escape(' '.join(message.split()))}", highlight=False)


def main() -> None:
    # --debug (the app callback) lets them through again. CRITICAL, not ERROR: the Neo4j driver
    # logs "Unable to retrieve routing information" as an ERROR on every connection attempt.
    for name in _NOISY_LOGGERS:
        logging.getLogger(name).setLevel(logging.CRITICAL)
    try:
        # without standalone mode click returns a typer.Exit's code instead of exiting with it
        # (typer turns Ctrl-C into Exit(130)); everything else is raised to here
        code = app(standalone_mode=False)
        if isinstance(code, int) and code:
            sys.exit(code)
    except KgragError as e:
        if _state["debug"]:
            raise
        _print_error(str(e))
        sys.exit(e.exit_code)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except (typer.Abort, KeyboardInterrupt):
        sys.exit(130)
    except Exception as e:
        usage_errors = _usage_error_classes()
        if isinstance(e, usage_errors):
            # NoArgsIsHelpError: typer has already printed the help
            if type(e).__name__ != "NoArgsIsHelpError":
                e.show()  # type: ignore[attr-defined]
            sys.exit(getattr(e, "exit_code", 2))
        if _state["debug"]:
            raise
        settings_problem = _settings_problem(e)
        if settings_problem:
            _print_error(settings_problem)
            sys.exit(ConfigError.exit_code)
        _print_error(f"{type(e).__name__}: {e} (run with --debug for details)")
        sys.exit(1)


def _settings_problem(e: Exception) -> str | None:
    """A bad ``KGRAG_*`` value as one line naming the variable, or ``None`` for other errors."""
    from pydantic import ValidationError

    if not isinstance(e, ValidationError) or e.title != Settings.__name__:
        return None
    problems = [
        f"KGRAG_{'_'.join(str(part) for part in err['loc']).upper()}={err.get('input')!r}: "
        f"{err['msg']}"
        for err in e.errors()
    ]
    return "invalid configuration: " + "; ".join(problems)


if __name__ == "__main__":
    main()
