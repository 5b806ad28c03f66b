"""Retention of what was asked: ``kgrag traces prune``, ``kgrag flag`` and ``kgrag forget``."""

from __future__ import annotations

from typing import Annotated

import typer

from kgrag.cli.common import App, JsonOpt, StoreOpt, emit, err, open_store, settings_for, state


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


def _check_duty(value: float | None) -> float | None:
    """``--duty D``: a usage error (exit 2, naming the option) unless 0.01 <= D <= 1."""
    from kgrag.retention import check_duty

    try:
        return None if value is None else check_duty(value)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="'--duty'") from None


traces_app = App(no_args_is_help=True, help="Retention of the traces of answers.")


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
            "--keep-last",
            callback=_check_keep_last,
            help="keep the N newest questions of each session in any case (those asked "
            "outside a session count as one session)",
        ),
    ] = 0,
    duty: Annotated[
        float | None,
        typer.Option(
            "--duty",
            callback=_check_duty,
            help="share of its time the prune spends deleting, 0.01 to 1: it pauses the rest, "
            "so questions asked meanwhile wait less (default: KGRAG_TRACE_PRUNE_DUTY, 0.1)",
        ),
    ] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Remove old traces: each question's Query, Plan, Step and Answer nodes with their
    relationships, and sessions left empty. Flagged answers (kgrag flag) stay, and so do
    documents, chunks, images and entities."""
    from kgrag.retention import Pacer, prune_traces

    pacer = Pacer(duty if duty is not None else settings_for(store).trace_prune_duty)
    with open_store(store) as st:
        report = prune_traces(
            st, older_than_days=float(older_than), keep_last=keep_last, pacer=pacer
        )
    if as_json:
        emit(report.model_dump())
    elif not state["quiet"]:
        err.print(
            f"pruned {report.queries} questions asked before {report.before} "
            f"({report.nodes} trace nodes, {report.sessions} sessions; {report.work_seconds:.1f} s "
            f"of work, {report.pause_seconds:.1f} s of pauses at duty {report.duty:g})",
            markup=False,
        )


#: Who a flag set from the command line names: the operator, who holds the store itself.
OPERATOR_ID = "operator"


def flag(
    query_id: Annotated[str, typer.Argument(help="the query id an answer printed")],
    reason: Annotated[
        str | None, typer.Option("--reason", help="why the answer is flagged")
    ] = None,
    clear: Annotated[
        bool, typer.Option("--clear", help="clear the flag (prunes remove it again)")
    ] = False,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Flag an answer: trace retention (kgrag traces prune, the server's background prune)
    keeps its trace and audit until the flag is cleared. kgrag forget still erases it."""
    from kgrag.retention import MAX_FLAG_REASON, flag_query, unflag_query

    if clear and reason is not None:
        raise typer.BadParameter(
            "--reason goes with a flag, not with --clear", param_hint="'--reason'"
        )
    if reason is not None and len(reason) > MAX_FLAG_REASON:
        raise typer.BadParameter(
            f"at most {MAX_FLAG_REASON:,} characters, not {len(reason):,}", param_hint="'--reason'"
        )
    with open_store(store) as st:
        if clear:
            report = unflag_query(st, query_id)
        else:
            report = flag_query(st, query_id, by=OPERATOR_ID, reason=reason)
    if as_json:
        emit(report.model_dump())
    elif not state["quiet"]:
        what = "flagged" if report.flagged else "cleared the flag of"
        err.print(f"{what} {report.query_id}", markup=False)


def forget(
    user: Annotated[str, typer.Option("--user", help="the user whose questions to erase")],
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Erase one user's questions: their traces, answers, audits and the sessions left empty
    (their conversation memory). Other users' questions stay; documents are not touched.
    Paced as a prune (KGRAG_TRACE_PRUNE_DUTY)."""
    from kgrag.auth.principal import check_name
    from kgrag.retention import Pacer, forget_user

    try:
        check_name("user", user)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="'--user'") from None
    pacer = Pacer(settings_for(store).trace_prune_duty)
    with open_store(store) as st:
        report = forget_user(st, user, pacer=pacer)
    if as_json:
        emit(report.model_dump(exclude={"before"}))
    elif not state["quiet"]:
        err.print(
            f"erased {report.queries} questions of {user} ({report.nodes} trace nodes, "
            f"{report.sessions} sessions)",
            markup=False,
        )
