"""The ACL entries and readers of the leak tests, in one place (issue 14: stored ACL entries
become namespaced, ``user:NAME`` / ``group:NAME``; only these lines change with it)."""

from __future__ import annotations

from kgrag.executor.hits import AccessContext


def user_acl(name: str) -> list[str]:
    """The ACL of a document only user ``name`` may read."""
    return [name]


def group_acl(name: str) -> list[str]:
    """The ACL of a document the members of group ``name`` may read."""
    return [name]


PUBLIC_ACL: list[str] = []
"""A public document (no ACL given: everyone may read it)."""

ADA = AccessContext(user="ada", groups=("team-a",))
BOB = AccessContext(user="bob", groups=("team-b",))
ANONYMOUS = AccessContext()
