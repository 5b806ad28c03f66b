"""Administering users: erasing a user's questions."""

from __future__ import annotations

import logging
from typing import Annotated

from fastapi import APIRouter
from fastapi import Path as PathParam

from kgrag.auth.principal import Role
from kgrag.server.deps import NEEDS_STORE, AppState, Caller
from kgrag.server.identity import require
from kgrag.server.models import ErasureReport, UserName
from kgrag.server.openapi import errors

log = logging.getLogger(__name__)

router = APIRouter(tags=["queries"], dependencies=NEEDS_STORE)


@router.delete(
    "/users/{user}/questions",
    operation_id="forgetUser",
    response_model=ErasureReport,
    responses=errors(403, 422),
)
def forget_user(
    who: Caller,
    state: AppState,
    user: Annotated[UserName, PathParam(description="a user name")],
) -> ErasureReport:
    """Erase a user's questions: their traces, answers and audits, and the sessions left
    without a question (``kgrag forget --user``). Other users' questions stay. Needs
    ``admin``."""
    from kgrag.retention import Pacer
    from kgrag.retention import forget_user as forget

    require(who, Role.ADMIN)
    report = forget(state.agent.store, user, pacer=Pacer(state.settings.trace_prune_duty))
    log.warning("%s erased the questions of a user: %d questions", who.id, report.queries)
    return ErasureReport(queries=report.queries, nodes=report.nodes, sessions=report.sessions)
