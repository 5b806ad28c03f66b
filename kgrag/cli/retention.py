"""Retention of what was asked: ``kgrag traces prune`` and ``kgrag forget``."""

from __future__ import annotations

from typing import Annotated

import typer

from kgrag.cli.common import JsonOpt, StoreOpt, emit, err, open_store, state


def _check_age(value: str) -> str:
    """``--older-than DAYS``: a usage error (exit 2, naming the option) unless DAYS is a number
    of days from 0 to 100 years."""
    from kgrag.retention import check_age_days

    try:
        days = float(value)
    except ValueError:
        raise typer.BadParameter(
            f"{value!r} is not a number of days (e.g. 30 or 0.5)", param_hint="'--older-than'"
        ) from None
    try:
        check_age_days(days)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="'--older-than'") from None
    return value


def _check_keep_last(value: int) -> int:
    """``--keep-last N``: a usage error (exit 2, naming the option) unless 0 <= N <= 10^9."""
    from kgrag.retention import check_keep_last

    try:
        return check_keep_last(value)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="'--keep-last'") from None


traces_app = typer.Typer(no_args_is_help=True, help="Retention of the traces of answers.")


@traces_app.command("prune")
def traces_prune(
    older_than: Annotated[
        str,
        typer.Option(
            "--older-than",
            metavar="DAYS",
            callback=_check_age,
            help="remove the traces of questions asked more than DAYS days ago (0: all)",
        ),
    ],
    keep_last: Annotated[
        int,
        typer.Option(
            "--keep-last", callback=_check_keep_last, help="keep the N newest questions in any case"
        ),
    ] = 0,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Remove old traces: each question's Query, Plan, Step and Answer nodes with their
    relationships, and sessions left empty. Documents, chunks, images and entities stay."""
    from kgrag.retention import prune_traces

    with open_store(store) as st:
        report = prune_traces(st, older_than_days=float(older_than), keep_last=keep_last)
    if as_json:
        emit(report.model_dump())
    elif not state["quiet"]:
        err.print(
            f"pruned {report.queries} questions asked before {report.before} "
            f"({report.nodes} trace nodes, {report.sessions} sessions)",
            markup=False,
        )


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
    with open_store(store) as st:
        report = forget_user(st, user)
    if as_json:
        emit(report.model_dump(exclude={"before"}))
    elif not state["quiet"]:
        err.print(
            f"erased {report.queries} questions of {user} ({report.nodes} trace nodes, "
            f"{report.sessions} sessions)",
            markup=False,
        )
