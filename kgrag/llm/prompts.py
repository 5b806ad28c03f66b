"""Prompts live in text files beside the code that sends them (``<package>/prompts/NAME.txt``),
as the Cypher lives in ``cypher/``: read once with :mod:`importlib.resources` (so they ship in
the wheel with their package) and filled in with :class:`string.Template` (``$name``), so the
JSON examples in a prompt need no escaping. A file's final newline is not part of its prompt."""

from __future__ import annotations

from functools import cache
from importlib import resources
from string import Template

__all__ = ["render_prompt"]


@cache
def _template(package: str, name: str) -> Template:
    path = resources.files(package).joinpath("prompts", f"{name}.txt")
    return Template(path.read_text(encoding="utf-8").removesuffix("\n"))


def render_prompt(package: str, name: str, **values: object) -> str:
    """The prompt ``name`` of ``package`` (e.g. ``kgrag.agent``) with ``values`` filled in;
    a placeholder without a value raises ``KeyError``."""
    return _template(package, name).substitute(values)
