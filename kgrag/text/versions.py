"""How a version is written, one pattern for every stage that reads one.

A version is a dotted number (``3.19``, ``2.6.32``), written alone or after a ``v`` (``v2.39``,
``V1.0.2``). Retrieval must tell ``3.19`` from ``3.18`` (an embedding scores them alike), BM25
must find the release written ``3.19.0`` for a question about "3.19", and the support test must
see "Git 2.39" in "Git v2.39 Release Notes": :mod:`kgrag.planner.rule`,
:mod:`kgrag.text.tokens` and :mod:`kgrag.agent.names` all read versions through this module.
"""

from __future__ import annotations

import re

__all__ = [
    "DOTTED_NUMBER",
    "V_PREFIX",
    "is_dotted_number",
    "is_version",
    "shorter_versions",
    "without_v",
]

#: A dotted number, as a regular expression's text (to embed in a larger pattern).
DOTTED_NUMBER = r"\d+(?:\.\d+)+"
_DOTTED = re.compile(DOTTED_NUMBER)
_V_VERSION = re.compile(rf"[vV]{DOTTED_NUMBER}")
#: The "v" before a version ("v2.39", "V1.0.2"), matched alone (the version follows it).
V_PREFIX = re.compile(r"\b[vV](?=\d+\.\d)")


def is_dotted_number(word: str) -> bool:
    """Whether ``word`` is a dotted number (``3.19``, ``2.6.32``; not ``v2.39``)."""
    return bool(_DOTTED.fullmatch(word))


def is_version(word: str) -> bool:
    """Whether ``word`` is a version, with or without its ``v``: ``3.19``, ``v2.39.5``."""
    return is_dotted_number(word) or bool(_V_VERSION.fullmatch(word))


def without_v(word: str) -> str:
    """``word`` without the ``v`` of a version (``v2.39.5`` -> ``2.39.5``); any other word as it
    is."""
    return word[1:] if _V_VERSION.fullmatch(word) else word


def shorter_versions(version: str) -> list[str]:
    """The versions ``version`` (without its ``v``) is a release of, longest first:
    ``3.19.0`` -> ``["3.19"]``, ``1.2.3.4`` -> ``["1.2.3", "1.2"]``; none for ``3.19``."""
    parts = version.split(".")
    return [".".join(parts[:n]) for n in range(len(parts) - 1, 1, -1)]
