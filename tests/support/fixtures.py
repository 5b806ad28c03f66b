"""Pytest fixtures shared by the suite (registered through ``pytest_plugins`` in conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.openai_server import LocalOpenAIServer


@pytest.fixture
def openai_server() -> Iterator[LocalOpenAIServer]:
    """A running :class:`LocalOpenAIServer` for one test; ``openai_server.base_url`` is the URL
    to give an OpenAI client (any API key is accepted)."""
    with LocalOpenAIServer() as server:
        yield server
