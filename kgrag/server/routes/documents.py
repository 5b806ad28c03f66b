"""Removing a document."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Response
from fastapi import Path as PathParam

from kgrag.auth.principal import Role
from kgrag.server.deps import NEEDS_STORE, AppState, Caller
from kgrag.server.identity import require
from kgrag.server.models import Text
from kgrag.server.openapi import errors

router = APIRouter(tags=["ingest"], dependencies=NEEDS_STORE)


@router.delete(
    "/documents/{document_id}",
    status_code=204,
    operation_id="deleteDocument",
    responses={**errors(403, 404, 422), 204: {"description": "deleted"}},
)
def delete_document(
    who: Caller,
    state: AppState,
    document_id: Annotated[Text, PathParam(description="a document id (`kgrag db documents`)")],
) -> Response:
    """Remove a document and what only it supported (``kgrag delete``). Needs ``admin``."""
    require(who, Role.ADMIN)
    state.agent.delete(document_id)
    return Response(status_code=204)
