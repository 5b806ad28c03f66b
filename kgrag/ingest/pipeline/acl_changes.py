"""Who may change a stored document's ACL (:class:`AclPolicy`), the ACL change ingesting a
document makes, and the reason one is refused."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kgrag.acl import stored_acl
from kgrag.core import Frozen
from kgrag.ingest.models import ParsedDocument
from kgrag.ingest.records import AclChange


class AclPolicy(Frozen):
    """Who runs an ingestion and whether they may change a stored document's ACL."""

    actor: str | None = None
    may_change_acl: bool = True


def acl_change(
    doc: ParsedDocument,
    new_id: str,
    previous: Sequence[Mapping[str, Any]],
    policy: AclPolicy,
    at: str,
) -> AclChange | None:
    """The ACL change ingesting ``doc`` makes, or None: when a stored version of the file
    (``previous``: the same content, or the version it replaces) has another ACL."""
    acl = stored_acl(doc.source.acl)
    if not previous or set(previous[0].get("acl") or ()) == set(acl):
        return None
    return AclChange(
        document_id=new_id,
        uri=str(doc.source.path),
        old_acl=tuple(previous[0].get("acl") or ()),
        new_acl=acl,
        actor=policy.actor,
        at=at,
    )


def acl_refused(old: Sequence[str], new: Sequence[str]) -> str:
    return (
        f"ACL change refused: the stored document is readable by {', '.join(old)}; ingesting "
        f"it readable by {', '.join(new)} would change who may read it, which needs the admin "
        "role. Nothing was changed; ingest it with its current ACL, or ask an admin"
    )
