"""``cypher_template``: read-only Cypher. Non-admin callers may only run the allow-listed
templates of ``cypher/templates`` (values as parameters, the caller's principals added by the
tool, never by the caller); an admin context may also run free-form Cypher, which the engine
itself refuses unless it is read-only (``GraphStore.read_freeform``)."""

from __future__ import annotations

import json
from typing import Any, get_args

from pydantic import Field, JsonValue, model_validator

from kgrag.core import Frozen, Hit, HitKind
from kgrag.errors import QueryRefusedError
from kgrag.graph import cypher
from kgrag.tools.base import Tool, ToolContext

#: Parameters only the tool sets: the caller's principals and admin flag.
RESERVED_PARAMS = frozenset({"principals", "admin"})


class CypherTemplateArgs(Frozen):
    """Arguments of ``cypher_template``: a template name and its parameters, or (admin only)
    free-form read-only Cypher."""

    template: str | None = Field(
        default=None, pattern=r"^[a-z][a-z0-9_]*$", description="a name in cypher/templates"
    )
    params: dict[str, JsonValue] = Field(default_factory=dict)
    cypher: str | None = Field(
        default=None, max_length=10_000, description="free-form read-only Cypher (admin only)"
    )
    k: int = Field(default=20, ge=1, le=1000)

    @model_validator(mode="after")
    def _one_of(self) -> CypherTemplateArgs:
        if (self.template is None) == (self.cypher is None):
            raise ValueError("give exactly one of 'template' and 'cypher'")
        return self


def templates() -> list[str]:
    """The allow-listed template names."""
    return [n.removeprefix("templates/") for n in cypher.names("templates")]


def _run(args: CypherTemplateArgs, ctx: ToolContext) -> list[Hit]:
    reserved = sorted(RESERVED_PARAMS & set(args.params))
    if reserved:
        raise QueryRefusedError(
            f"cypher_template: parameter(s) {', '.join(reserved)} are set by kgrag, not by a plan"
        )
    params: dict[str, Any] = {**args.params, "k": args.k, **ctx.access.params()}
    if args.cypher is not None:
        if not ctx.access.admin:
            raise QueryRefusedError(
                "cypher_template: free-form Cypher needs an admin context; "
                f"use one of the templates: {', '.join(templates())}"
            )
        rows = ctx.store.read_freeform(args.cypher, params)
        return [_row_hit(i, row) for i, row in enumerate(rows[: args.k])]
    assert args.template is not None
    if args.template not in templates():
        raise QueryRefusedError(
            f"cypher_template: {args.template!r} is not an allow-listed template; "
            f"known: {', '.join(templates())}"
        )
    rows = ctx.store.read(f"templates/{args.template}", params)
    return [_row_hit(i, r) for i, r in enumerate(rows)]


def _row_hit(index: int, row: dict[str, Any]) -> Hit:
    """A node row (``id`` and a known ``kind``) as its hit; any other row as a ``document`` hit
    whose text is the row's JSON."""
    if isinstance(row.get("id"), str) and row.get("kind") in get_args(HitKind):
        return Hit.from_row(row)
    return Hit(
        id=f"tool:cypher:{index}",
        kind="document",
        score=1.0,
        text=json.dumps(row, default=str, sort_keys=True)[:2000],
    )


CYPHER_TEMPLATE = Tool(
    name="cypher_template",
    description=(
        "Run a read-only allow-listed Cypher template from cypher/templates with parameters "
        "(free-form read-only Cypher only for an admin)."
    ),
    arguments=CypherTemplateArgs,
    run=_run,
)
