"""What the chat client (:class:`~kgrag.llm.client.LLMClient`) and the OpenAI embedder
(:class:`~kgrag.modalities.text.OpenAIEmbedder`) share: the ``openai`` client of one
OpenAI-compatible endpoint (imported when one is built), and one translation of its errors into
kgrag's, saying what failed and what to do. Retries of HTTP 408/409/429/5xx and lost connections
are the ``openai`` client's own backoff loop (``max_retries``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from kgrag.errors import ConfigError, DependencyMissingError, ModelError

__all__ = ["ErrorHints", "OpenAIEndpoint"]

T = TypeVar("T")


@dataclass(frozen=True)
class ErrorHints:
    """What to do about each kind of failure, as the user of one endpoint configures it."""

    key: str
    """After a refused key, e.g. ``check KGRAG_OPENAI_API_KEY``."""
    retry: str
    """After an HTTP error retried in vain (408/409/429/5xx), e.g. ``try again later``."""
    request: str
    """After any other HTTP error, e.g. ``check the model name and the request``."""
    timeout: str
    """Said after ``timed out``, e.g. ``after 2 retries; raise KGRAG_LLM_TIMEOUT_S``."""
    connect: str
    """After a lost connection, e.g. ``check KGRAG_OPENAI_BASE_URL and that the server runs``."""


class OpenAIEndpoint:
    """The ``openai`` client of one endpoint and the translation of its errors.

    Subclasses say how a missing key is handled (:meth:`_api_key`) and what to advise
    (:attr:`hints`); their calls go through :meth:`_request`."""

    error: type[ModelError] = ModelError
    """The kgrag error a failed request raises."""

    def __init__(
        self,
        *,
        api_key: str | None,
        base_url: str | None,
        timeout: float,
        max_retries: int,
        subject: str = "",
        setup_hint: str = "",
    ) -> None:
        """``subject`` and ``setup_hint`` complete the message of a client that cannot be
        configured: ``could not configure the OpenAI client{subject}: ...{setup_hint}``."""
        try:
            import openai
        except ImportError as e:
            raise DependencyMissingError("openai", extra="openai") from e
        key = self._api_key(api_key, base_url)
        self._max_retries = max_retries
        try:
            self._client: Any = openai.OpenAI(
                api_key=key, base_url=base_url, timeout=timeout, max_retries=max_retries
            )
        except openai.OpenAIError as e:
            raise ConfigError(
                f"could not configure the OpenAI client{subject}: {e}{setup_hint}"
            ) from e

    def _api_key(self, api_key: str | None, base_url: str | None) -> str | None:
        """The key to send: ``None`` lets the ``openai`` package read ``OPENAI_API_KEY``; a
        custom ``base_url`` without one gets a placeholder (local servers accept any key)."""
        if not api_key and base_url is not None:
            return "not-needed"
        return api_key or None

    @property
    def hints(self) -> ErrorHints:
        raise NotImplementedError

    @property
    def endpoint(self) -> str:
        return str(self._client.base_url).rstrip("/")

    def _request(self, what: str, call: Callable[[], T]) -> T:
        """``call()`` (one API request described by ``what``), its errors raised as
        :attr:`error` with what to do about them."""
        import openai

        hints = self.hints
        try:
            return call()
        except openai.AuthenticationError as e:
            raise self.error(
                f"{what} failed: the API key was refused (HTTP {e.status_code}: "
                f"{_api_message(e)}); {hints.key}"
            ) from e
        except openai.APIStatusError as e:
            hint = (
                f"still failing after {self._max_retries} retries; {hints.retry}"
                if e.status_code in (408, 409, 429) or e.status_code >= 500
                else hints.request
            )
            raise self.error(
                f"{what} failed with HTTP {e.status_code}: {_api_message(e)}; {hint}"
            ) from e
        except openai.APITimeoutError as e:
            raise self.error(f"{what} timed out {hints.timeout}") from e
        except openai.APIConnectionError as e:
            raise self.error(f"{what} failed: could not connect ({e}); {hints.connect}") from e
        except openai.OpenAIError as e:
            raise self.error(f"{what} failed: {e}") from e


def _api_message(e: Any) -> str:
    body = getattr(e, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
    return str(getattr(e, "message", e))
