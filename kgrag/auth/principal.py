"""A principal: who a request authenticated as, and what its roles allow.

Roles (issue 14, decision 2): ``reader`` asks and reads the traces and audits of its own
questions; ``writer`` is a reader that may also ingest (a re-ingest keeps a document's ACL);
``admin`` is a writer that may also change ACLs, delete documents and read any trace;
``impersonate`` (given on its own) may name ``user``/``groups`` in a request, and every such
question records who really asked; ``metrics`` (on its own, for a Prometheus scraper; an admin
has it too) reads ``GET /metrics``."""

from __future__ import annotations

import enum
import re

from pydantic import field_validator

from kgrag.core import AccessContext, Frozen, check_text
from kgrag.graph.keys import KEY_EDGE_CHARS, KEY_INNER_CHARS, KEY_MAX_BYTES


class Role(enum.StrEnum):
    READER = "reader"
    WRITER = "writer"
    ADMIN = "admin"
    IMPERSONATE = "impersonate"
    METRICS = "metrics"


#: What each role also grants.
_IMPLIED: dict[Role, frozenset[Role]] = {
    Role.READER: frozenset({Role.READER}),
    Role.WRITER: frozenset({Role.READER, Role.WRITER}),
    Role.ADMIN: frozenset({Role.READER, Role.WRITER, Role.ADMIN, Role.METRICS}),
    Role.IMPERSONATE: frozenset({Role.IMPERSONATE}),
    Role.METRICS: frozenset({Role.METRICS}),
}

#: A name as an ACL entry names it (kgrag.acl): the id rule of kgrag.graph.keys.
_NAME = re.compile(rf"^[^{KEY_EDGE_CHARS}](?:[^{KEY_INNER_CHARS}]*[^{KEY_EDGE_CHARS}])?$")


def check_name(kind: str, value: str) -> str:
    """A user or group name as ACL entries name them (``user:NAME``, ``group:NAME``): not
    empty, no surrounding whitespace, no control characters; a group also no comma, which
    separates groups in forms, query strings and ``--groups``; at most
    :data:`~kgrag.graph.keys.KEY_MAX_BYTES` UTF-8 bytes; valid Unicode. ``ValueError`` naming
    ``kind`` otherwise (:class:`~kgrag.errors.InvalidTextError` for a lone surrogate)."""
    check_text(f"{kind} name", value)
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > KEY_MAX_BYTES:
        raise ValueError(f"a {kind} name is at most {KEY_MAX_BYTES:,} bytes; this one has {size:,}")
    if not _NAME.match(value):
        raise ValueError(
            f"a {kind} name must be non-empty, without surrounding spaces or control "
            f"characters: {value!r}"
        )
    if kind == "group" and "," in value:
        raise ValueError(f"a group name must not hold a comma: {value!r}")
    return value


class Principal(Frozen):
    """Who a request authenticated as. ``id`` names the credential (``key:<key id>``,
    ``jwt:<issuer>:<subject>`` or ``local``); ``user`` and ``groups`` are whose documents it
    reads."""

    id: str
    user: str | None
    groups: tuple[str, ...] = ()
    roles: frozenset[Role] = frozenset()

    @field_validator("user")
    @classmethod
    def _user(cls, v: str | None) -> str | None:
        return None if v is None else check_name("user", v)

    @field_validator("groups")
    @classmethod
    def _groups(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(check_name("group", g) for g in v)

    def can(self, role: Role) -> bool:
        """Whether one of the principal's roles grants ``role`` (an admin is also a writer)."""
        return any(role in _IMPLIED[r] for r in self.roles)

    def access(self) -> AccessContext:
        """The principal's read filter. Never ``admin``: an admin asks through ACLs too."""
        return AccessContext(user=self.user, groups=self.groups)


#: The one principal of a server without authentication (loopback only): the operator's own
#: tool, as the CLI is, with every role.
LOCAL = Principal(id="local", user=None, roles=frozenset(Role))
