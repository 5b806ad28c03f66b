"""Tools a plan's ``tool_call`` steps may use: a registry with JSON schemas, a safe calculator,
read-only Cypher through allow-listed templates, and ``llm_generate``."""

from kgrag.tools.base import Tool, ToolContext
from kgrag.tools.calculator import evaluate_arithmetic
from kgrag.tools.registry import ToolRegistry, default_registry

__all__ = ["Tool", "ToolContext", "ToolRegistry", "default_registry", "evaluate_arithmetic"]
