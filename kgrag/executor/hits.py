"""Typed results of steps: every step returns ranked hits, never dicts of strings."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from kgrag.acl import PUBLIC, group_principal, user_principal

HitKind = Literal["chunk", "segment", "image", "entity", "document"]


class Hit(BaseModel):
    """One piece of evidence a step returned."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    kind: HitKind
    score: float
    text: str | None = None
    document_id: str | None = None
    title: str | None = None
    uri: str | None = None
    image_uri: str | None = None
    page: int | None = None
    start_s: float | None = None
    end_s: float | None = None
    table: int | None = None
    """A table row's table (1-based in its document), sheet and row (the header is row 1)."""
    sheet: str | None = None
    row: int | None = None
    provenance: tuple[int, ...] = ()  # the steps that produced or carried this hit

    @classmethod
    def from_row(cls, row: dict[str, Any], kind: str | None = None, step_id: int = 0) -> Hit:
        k = kind or row.get("kind") or "chunk"
        if k == "chunk" and row.get("start_s") is not None:
            k = "segment"
        return cls(
            id=str(row["id"]),
            kind=k,
            score=float(row.get("score") or 0.0),
            text=row.get("text"),
            document_id=row.get("document_id"),
            title=row.get("title"),
            uri=row.get("uri"),
            image_uri=row.get("image_uri"),
            page=row.get("page"),
            start_s=row.get("start_s"),
            end_s=row.get("end_s"),
            table=row.get("table_number"),
            sheet=row.get("sheet"),
            row=row.get("table_row"),
            provenance=(step_id,) if step_id else (),
        )

    def rescored(self, score: float, step_id: int) -> Hit:
        return self.model_copy(update={"score": score, "provenance": (*self.provenance, step_id)})


class AccessContext(BaseModel):
    """Who is asking. Every read of every step is filtered by these principals."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    user: str | None = None
    groups: tuple[str, ...] = ()
    admin: bool = False

    @property
    def principals(self) -> list[str]:
        """What ``d.acl`` entries grant this reader: ``*``, ``group:<g>`` for each group and
        ``user:<u>`` (kgrag.acl), so a group named like a user matches nothing of that user."""
        out = [PUBLIC, *(group_principal(g) for g in self.groups)]
        if self.user:
            out.append(user_principal(self.user))
        return out

    def params(self) -> dict[str, Any]:
        return {"principals": self.principals, "admin": self.admin}


#: The operator, who holds the store itself (the CLI's ``kgrag trace`` / ``kgrag audit``, the
#: demo): reads through no ACL. Never what a request to the server gets.
OPERATOR = AccessContext(admin=True)
