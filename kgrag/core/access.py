"""Who is asking. A reader's principals are ``*`` (public), ``user:NAME`` and ``group:NAME``,
the same strings a document's ``d.acl`` holds (parsed and checked in :mod:`kgrag.acl`); every
read compares them with ``d.acl`` in Cypher."""

from __future__ import annotations

from typing import Any

from kgrag.core.frozen import Frozen

__all__ = [
    "GROUP",
    "OPERATOR",
    "PUBLIC",
    "USER",
    "AccessContext",
    "group_principal",
    "user_principal",
]

#: The public principal: every reader has it.
PUBLIC = "*"
USER = "user"
GROUP = "group"


def user_principal(name: str) -> str:
    return f"{USER}:{name}"


def group_principal(name: str) -> str:
    return f"{GROUP}:{name}"


class AccessContext(Frozen):
    """Who is asking. Every read of every step is filtered by these principals."""

    user: str | None = None
    groups: tuple[str, ...] = ()
    admin: bool = False

    @property
    def principals(self) -> list[str]:
        """What ``d.acl`` entries grant this reader: ``*``, ``group:<g>`` for each group and
        ``user:<u>``, so a group named like a user matches nothing of that user."""
        out = [PUBLIC, *(group_principal(g) for g in self.groups)]
        if self.user:
            out.append(user_principal(self.user))
        return out

    def params(self) -> dict[str, Any]:
        return {"principals": self.principals, "admin": self.admin}


#: The operator, who holds the store itself (the CLI's ``kgrag trace`` / ``kgrag audit``, the
#: demo): reads through no ACL. Never what a request to the server gets.
OPERATOR = AccessContext(admin=True)
