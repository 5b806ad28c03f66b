"""The tool registry: named tools with pydantic argument models (their JSON schemas are what a
planner sees), bound to one caller's context into the ``ExecutionEnv.tools`` shape."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from kgrag.errors import QueryRefusedError
from kgrag.executor.hits import AccessContext, Hit
from kgrag.graph.store import GraphStore

if TYPE_CHECKING:
    from kgrag.llm import LLM

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


class ToolRegistry:
    """Tools by name. ``bind(ctx)`` gives the mapping the executor's ``tool_call`` uses."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.register(tool)

    def register(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self._tools[tool.name] = tool

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __getitem__(self, name: str) -> Tool:
        try:
            return self._tools[name]
        except KeyError:
            raise QueryRefusedError(
                f"unknown tool {name!r}; known tools: {', '.join(sorted(self._tools))}"
            ) from None

    @property
    def names(self) -> list[str]:
        return sorted(self._tools)

    def available(self, *, llm: bool) -> list[Tool]:
        """The tools usable with or without an LLM client."""
        return [t for _, t in sorted(self._tools.items()) if llm or not t.needs_llm]

    def schemas(self, *, llm: bool = True) -> list[dict[str, Any]]:
        """JSON schemas of the usable tools (for an LLM planner's prompt)."""
        return [t.json_schema() for t in self.available(llm=llm)]

    def bind(self, ctx: ToolContext) -> dict[str, Callable[[dict[str, Any]], list[Hit]]]:
        """``{name: arguments -> hits}`` for ``ExecutionEnv.tools``, every call in ``ctx``."""

        def bound(tool: Tool) -> Callable[[dict[str, Any]], list[Hit]]:
            return lambda arguments: tool.call(arguments, ctx)

        return {t.name: bound(t) for t in self.available(llm=ctx.llm is not None)}


def default_registry() -> ToolRegistry:
    """calculator, cypher_template and llm_generate (the last only when an LLM is configured)."""
    from kgrag.tools.calculator import CALCULATOR
    from kgrag.tools.cypher_template import CYPHER_TEMPLATE
    from kgrag.tools.llm_generate import LLM_GENERATE

    return ToolRegistry([CALCULATOR, CYPHER_TEMPLATE, LLM_GENERATE])
