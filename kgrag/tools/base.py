"""What a tool is (:class:`Tool`: a name, a pydantic argument model whose JSON schema a planner
sees, and the function that runs it) and what it runs with (:class:`ToolContext`). The tools
(calculator, cypher_template, llm_generate) and the registry that names them import this module."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from kgrag.core import AccessContext, Hit
from kgrag.errors import QueryRefusedError
from kgrag.graph.store import GraphStore
from kgrag.llm import LLM

__all__ = ["Tool", "ToolContext", "ToolFunction"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ToolContext:
    """Who calls a tool and with what: every read a tool makes carries ``access``."""

    store: GraphStore
    access: AccessContext
    llm: LLM | None = None


ToolFunction = Callable[[Any, ToolContext], list[Hit]]


@dataclass(frozen=True)
class Tool:
    """A named tool: what it does, its argument model, and the function that runs it."""

    name: str
    description: str
    arguments: type[BaseModel]
    run: ToolFunction
    needs_llm: bool = False

    def json_schema(self) -> dict[str, Any]:
        """The OpenAI function-tool shape: ``{"type": "function", "function": {...}}``."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.arguments.model_json_schema(),
            },
        }

    def call(self, arguments: Mapping[str, Any], ctx: ToolContext) -> list[Hit]:
        try:
            parsed = self.arguments.model_validate(dict(arguments))
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(arguments)"
            raise QueryRefusedError(
                f"tool {self.name!r}: invalid arguments at {where}: {first['msg']}"
            ) from None
        log.debug("tool %s called", self.name)
        return self.run(parsed, ctx)
