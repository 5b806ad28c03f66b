"""Who each request is: an ASGI middleware authenticates every request outside
:data:`~kgrag.server.security.OPEN_PATHS` (401 otherwise) and puts its
:class:`~kgrag.auth.principal.Principal` into the request state; routes take it with
:func:`principal`, check roles with :func:`require` and resolve a request that names
``user``/``groups`` with :func:`acting_as` (only the ``impersonate`` role may). Without an
authenticator every request is :data:`~kgrag.auth.principal.LOCAL` (the server then binds
loopback only)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from fastapi import Request

from kgrag.auth.authenticator import Authenticator, Unauthenticated
from kgrag.auth.principal import LOCAL, Principal, Role
from kgrag.errors import KgragError
from kgrag.server.errors import ApiError, error_body
from kgrag.server.security import OPEN_PATHS, HttpMiddleware, headers_of, reply

log = logging.getLogger(__name__)

STATE_KEY = "principal"


class AuthMiddleware(HttpMiddleware):
    """401 ``unauthorized`` (with ``WWW-Authenticate: Bearer``) for a request without a valid
    credential; otherwise its principal goes into ``scope["state"]``."""

    def __init__(self, app: Any, *, authenticator: Authenticator | None) -> None:
        super().__init__(app)
        self.authenticator = authenticator

    async def http(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if self.authenticator is None:
            found = LOCAL
        elif scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        else:
            try:
                found = self.authenticator.authenticate(headers_of(scope).get("authorization"))
            except Unauthenticated as e:
                await reply(
                    send,
                    401,
                    error_body("unauthorized", str(e)),
                    extra=[(b"www-authenticate", b"Bearer")],
                )
                return
            except KgragError as e:  # the key file became unreadable or invalid meanwhile
                log.error("authenticating a request: %s", e)
                await reply(
                    send,
                    500,
                    error_body("internal", "the credentials cannot be checked; see the server log"),
                )
                return
        scope.setdefault("state", {})[STATE_KEY] = found
        await self.app(scope, receive, send)


async def principal(request: Request) -> Principal:
    """The request's principal (a route dependency)."""
    found = request.scope.get("state", {}).get(STATE_KEY)
    if not isinstance(found, Principal):  # only on an open path, which takes no principal
        raise ApiError(401, "unauthorized", "this request carries no credential")
    return found


def require(who: Principal, role: Role) -> None:
    """403 ``forbidden`` unless ``who`` has ``role`` (or a role that grants it)."""
    if not who.can(role):
        raise ApiError(
            403,
            "forbidden",
            f"this needs the {role.value} role; this credential has "
            f"{', '.join(sorted(r.value for r in who.roles)) or 'none'}",
        )


def acting_as(who: Principal, user: str | None, groups: Sequence[str]) -> Principal:
    """Whom a request acts as: ``who`` itself when it names no ``user`` and no ``groups``;
    otherwise, for a principal with the ``impersonate`` role only, that user with those groups
    as a reader (no admin right carries over; ``id`` stays the real principal's, recorded as
    ``asked_by``). 403 ``impersonation_refused`` for any other principal."""
    if user is None and not groups:
        return who
    if not who.can(Role.IMPERSONATE):
        raise ApiError(
            403,
            "impersonation_refused",
            "this credential may not name 'user' or 'groups' (that needs the impersonate "
            "role); leave them out: the request reads as the credential's own user and groups",
        )
    return Principal(id=who.id, user=user, groups=tuple(groups), roles=frozenset({Role.READER}))
