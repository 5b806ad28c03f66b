"""Route dependencies: who asks (:data:`Caller`), the app's :class:`ServerState`
(:data:`AppState`), and :data:`NEEDS_STORE` for the routes that read or write the store."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from kgrag.auth.principal import Principal
from kgrag.server.identity import principal
from kgrag.server.state import ServerState, server_state_of

#: The principal a request authenticated as (a route parameter).
Caller = Annotated[Principal, Depends(principal)]


def server_state(request: Request) -> ServerState:
    """The running app's state (a route dependency)."""
    return server_state_of(request.app.state)


#: The running app's state (a route parameter).
AppState = Annotated[ServerState, Depends(server_state)]


async def store_ready(request: Request, state: AppState) -> None:
    """503 with Retry-After at once while the store is being reopened; otherwise remember
    the store this request starts with (a failure of an older store reopens nothing)."""
    request.state.store = state.supervisor.check()


#: ``dependencies=`` of a route that needs the store.
NEEDS_STORE = [Depends(store_ready)]


def split_groups(raw: str | None) -> list[str]:
    """``"a, b"`` -> ``["a", "b"]`` (a comma-separated groups parameter)."""
    return [g.strip() for g in (raw or "").split(",") if g.strip()]
