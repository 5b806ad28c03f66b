"""The ACL entries and readers of the leak tests, in one place (stored ACL entries are
namespaced: ``user:NAME`` / ``group:NAME``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kgrag.core import AccessContext
from kgrag.graph.store import GraphStore


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


@dataclass(frozen=True)
class ReadAs:
    """A statement reader that reads ``store`` as ``access``, as the executor's step reader does
    (for the document tools' functions, which read through a reader)."""

    store: GraphStore
    access: AccessContext

    def read(self, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        return self.store.read(name, {**params, **self.access.params()})
