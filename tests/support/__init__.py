"""Test support shared by the whole suite: a local OpenAI-wire server and pytest fixtures."""

from tests.support.openai_server import LocalOpenAIServer, RecordedRequest, hashed_embedding

__all__ = ["LocalOpenAIServer", "RecordedRequest", "hashed_embedding"]
