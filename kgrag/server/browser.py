"""What a browser could be made to send: a request for another host name that resolves here
(DNS rebinding) is refused with 400 ``invalid_host`` unless its ``Host`` is allowed (the
loopback names, the bound host and ``KGRAG_ALLOWED_HOSTS``); a cross-site write is refused with
403 ``cross_site_request``: a POST/PUT/PATCH/DELETE whose ``Origin`` is not this server's,
whose ``Sec-Fetch-Site`` is ``cross-site``, or (on a server without authentication, where no
credential is checked) whose content type a plain HTML form can send (form, multipart,
text/plain) without an ``Authorization`` header, which no form can set. With authentication
configured such a request has no credential: it is 401 (:mod:`kgrag.server.identity`)."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from kgrag.server.errors import error_body
from kgrag.server.security import HttpMiddleware, headers_of, reply

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
#: Content types a cross-site HTML form or a "simple" fetch sends without a CORS preflight.
SIMPLE_TYPES = frozenset({"application/x-www-form-urlencoded", "multipart/form-data", "text/plain"})
_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` listens on the loopback interface only."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(value: str) -> str:
    """The host of a ``Host`` header or an origin's netloc, without its port, lower case
    (``[::1]:8000`` -> ``::1``)."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:].split("]", 1)[0]
    name, sep, port = value.rpartition(":")
    return name if sep and port.isdigit() else value


def allowed_hosts(bound: str | None, configured: Iterable[str]) -> frozenset[str]:
    names = set(LOOPBACK_NAMES) | {host_name(h) for h in configured}
    if bound:
        names.add(host_name(bound))
    return frozenset(names)


class BrowserGuardMiddleware(HttpMiddleware):
    def __init__(self, app: Any, *, hosts: frozenset[str], authenticated: bool) -> None:
        super().__init__(app)
        self.hosts = hosts
        self.authenticated = authenticated

    async def http(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        headers = headers_of(scope)
        host = headers.get("host", "")
        if "*" not in self.hosts and host_name(host) not in self.hosts:
            await reply(
                send,
                400,
                error_body(
                    "invalid_host",
                    "this server does not answer for that Host; an operator adds the names "
                    "clients use to KGRAG_ALLOWED_HOSTS",
                ),
            )
            return
        if scope["method"] not in _SAFE_METHODS:
            refused = _cross_site(headers, host, need_authorization=not self.authenticated)
            if refused:
                await reply(send, 403, error_body("cross_site_request", refused))
                return
        await self.app(scope, receive, send)


def _cross_site(headers: dict[str, str], host: str, *, need_authorization: bool) -> str | None:
    """Why a write looks sent by another site's page, or None."""
    if headers.get("sec-fetch-site", "").lower() == "cross-site":
        return "a cross-site request (Sec-Fetch-Site: cross-site) may not write"
    origin = headers.get("origin")
    if origin is not None and urlsplit(origin).netloc.lower() != host.strip().lower():
        return "the request's Origin is not this server's"
    media = headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if need_authorization and media in SIMPLE_TYPES and "authorization" not in headers:
        return (
            f"a {media} request must carry an Authorization header (an HTML form on another "
            "site cannot); this server checks no credential: any value will do"
        )
    return None
