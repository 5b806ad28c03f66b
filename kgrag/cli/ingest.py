"""``kgrag ingest``: its option checks, progress bars and summary."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape

from kgrag.cli.common import (
    JsonOpt,
    QuietOpt,
    StoreOpt,
    cli_actor,
    emit,
    err,
    open_agent,
    progress_bars,
    state,
)


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


def _check_ray_address(value: str | None) -> str | None:
    """``--ray-address``: a usage error (exit 2, naming the option) unless Ray can join it."""
    if value is None:
        return None
    from kgrag.ingest.ray_job import check_ray_address

    try:
        return check_ray_address(value)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="'--ray-address'") from None


def _check_acl(values: list[str] | None) -> list[str] | None:
    """``--acl``: a usage error (exit 2, naming the value) unless every entry is ``user:NAME``,
    ``group:NAME`` or ``*``."""
    from kgrag.acl import parse_principal
    from kgrag.errors import InvalidAclError

    try:
        return [parse_principal(v) for v in values or ()]
    except InvalidAclError as e:
        raise typer.BadParameter(str(e), param_hint="'--acl'") from None


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
    writers: Annotated[
        int | None,
        typer.Option(
            "--writers",
            min=1,
            max=64,
            help="batches written at once into Neo4j (default KGRAG_WRITERS, 1); the embedded "
            "engine takes one writer",
        ),
    ] = None,
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
            callback=_check_ray_address,
            help="join this Ray cluster (ray://HOST:10001, HOST:6379 or auto); implies --ray",
        ),
    ] = None,
    bulk_import: Annotated[
        bool,
        typer.Option(
            "--bulk-import",
            help="first load of an EMPTY Neo4j database with neo4j-admin database import "
            "(stops and restarts the server: scripts/neo4j.sh, or the script "
            "KGRAG_NEO4J_SCRIPT names); text documents only",
        ),
    ] = False,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,  # read through _state (set by its callback)
) -> None:
    """Ingest documents, images and recordings into the graph. Every file found and not
    ingested is listed with its reason (the summary, and ``skips`` in --json); the exit code
    is 2 when some failed."""
    from kgrag.ingest.pipeline import ProgressEvent
    from kgrag.ingest.shards import Shard

    with open_agent(store) as agent:
        agent.ingest_options = agent.ingest_options.model_copy(
            update={
                "workers": workers,
                "writers": writers or agent.ingest_options.writers,
                "shard": Shard.parse(shard) if shard else None,
                "include": tuple(include or ()),
                "exclude": tuple(exclude or ()),
            }
        )
        show = not (as_json or state["quiet"])
        with progress_bars(show, label_width=6) as bars:
            tasks: dict[str, Any] = {}

            def on_progress(e: ProgressEvent) -> None:
                if e.stage not in tasks:
                    tasks[e.stage] = bars.add_task(e.stage, total=e.total)
                bars.update(tasks[e.stage], completed=e.done, total=e.total)

            if bulk_import:
                from kgrag.ingest.bulk_job import bulk_ingest

                report, loaded = bulk_ingest(
                    agent,
                    paths,
                    acl or (),
                    ray=ray_address or ray,
                    progress=on_progress,
                    actor=cli_actor(),
                )
                if loaded is not None and not (as_json or state["quiet"]):
                    err.print(
                        f"bulk import: {loaded.documents} documents, {loaded.chunks} chunks "
                        f"in {loaded.total_seconds:.1f} s (CSV files {loaded.csv_seconds:.1f} s, "
                        f"import and restart {loaded.import_seconds + loaded.restart_seconds:.1f} "
                        f"s, indexes {loaded.migrate_seconds:.1f} s)"
                    )
            else:
                report = agent.ingest(
                    paths,
                    acl or (),
                    progress=on_progress,
                    actor=cli_actor(),
                    ray=ray_address or ray,
                )
    if as_json:
        emit(
            report.model_dump(
                include={
                    "ingested",
                    "skipped",
                    "skips",
                    "failed",
                    "failures",
                    "notes",
                    "seconds",
                    "stage_seconds",
                    "acl_updated",
                    "acl_changes",
                    "shard",
                    "other_shards",
                }
            )
        )
    elif not state["quiet"]:
        err.print(
            f"ingested {report.ingested}, skipped {report.skipped}, failed {report.failed} "
            f"in {report.seconds:.1f} s"
        )
        _print_skips(report)
        for n in report.notes:
            err.print(f"  note {escape(f'{n.path}: {n.detail}')}")
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
