"""The ACL entries and readers of the leak tests, in one place (stored ACL entries are
namespaced: ``user:NAME`` / ``group:NAME``)."""

from __future__ import annotations

from kgrag.core import AccessContext


def user_acl(name: str) -> list[str]:
    """The ACL of a document only user ``name`` may read."""
    return [f"user:{name}"]


def group_acl(name: str) -> list[str]:
    """The ACL of a document the members of group ``name`` may read."""
    return [f"group:{name}"]


PUBLIC_ACL: list[str] = []
"""A public document (no ACL given: everyone may read it)."""

ADA = AccessContext(user="ada", groups=("team-a",))
BOB = AccessContext(user="bob", groups=("team-b",))
ANONYMOUS = AccessContext()
