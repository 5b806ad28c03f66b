"""The tool registry: the tools (kgrag.tools.base) by name, bound to one caller's context into
the ``ExecutionEnv.tools`` shape."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kgrag.core import Hit
from kgrag.errors import QueryRefusedError
from kgrag.tools.base import Tool, ToolContext
from kgrag.tools.calculator import CALCULATOR
from kgrag.tools.cypher_template import CYPHER_TEMPLATE
from kgrag.tools.llm_generate import LLM_GENERATE


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
    return ToolRegistry([CALCULATOR, CYPHER_TEMPLATE, LLM_GENERATE])
