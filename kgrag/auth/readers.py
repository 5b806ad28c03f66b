"""Who may open a stored question (its trace and audit): the principal that asked it (the same
user, holding every group it was asked with) or an admin. The HTTP API and the MCP server both
check it here; to anyone else a query is as absent as an unknown id."""

from __future__ import annotations

from kgrag.auth.principal import Principal, Role
from kgrag.errors import NotFoundError
from kgrag.graph.store import GraphStore


def check_query_reader(store: GraphStore, query_id: str, reader: Principal) -> None:
    """:class:`NotFoundError` unless ``reader`` may open query ``query_id``."""
    rows = store.read("trace_read_query", {"id": query_id})
    if rows and not reader.can(Role.ADMIN):
        asker, asker_groups = rows[0].get("user"), set(rows[0].get("groups") or ())
        if asker != reader.user or not asker_groups <= set(reader.groups):
            rows = []
    if not rows:
        raise NotFoundError(f"no query {query_id!r} readable by this user")
