"""Text embedders against real backends: the bundled MiniLM model, and OpenAIEmbedder over HTTP
against LocalOpenAIServer (a real server on 127.0.0.1 speaking the OpenAI wire format)."""

from __future__ import annotations

import math
import sys
import time
from typing import Any

import numpy as np
import openai
import pytest

from kgrag.errors import ConfigError, DependencyMissingError, ModelError
from kgrag.modalities.base import TextEmbedder
from kgrag.modalities.text import (
    DEFAULT_SENTENCE_MODEL,
    OpenAIEmbedder,
    SentenceTransformerEmbedder,
    default_text_embedder,
)
from tests.support.openai_server import LocalOpenAIServer, hashed_embedding

EMBEDDINGS = "/v1/embeddings"


def _cos(a: list[float], b: list[float]) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


# ----------------------------------------------------------------------------------- MiniLM


@pytest.fixture(scope="module")
def minilm() -> SentenceTransformerEmbedder:
    return default_text_embedder()


class TestMiniLM:
    def test_identity_and_sizes(self, minilm: SentenceTransformerEmbedder) -> None:
        embedder: TextEmbedder = minilm  # satisfies the protocol (mypy checks this line)
        assert embedder.model_name == DEFAULT_SENTENCE_MODEL
        assert embedder.dimensions == 384
        assert embedder.max_tokens == 256
        assert default_text_embedder() is minilm  # cached factory

    def test_unit_length_vectors_in_order(self, minilm: SentenceTransformerEmbedder) -> None:
        texts = ["The cat sat on the mat.", "Quarterly revenue rose by 4 percent.", "x"]
        vectors = minilm.embed(texts)
        assert len(vectors) == 3
        assert all(len(v) == 384 for v in vectors)
        assert all(isinstance(x, float) for x in vectors[0])
        np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
        # Order is kept: embedding the second text alone gives the second vector.
        np.testing.assert_allclose(minilm.embed([texts[1]])[0], vectors[1], atol=1e-5)
        assert minilm.embed([]) == []

    def test_paraphrase_scores_higher_than_unrelated(
        self, minilm: SentenceTransformerEmbedder
    ) -> None:
        query, paraphrase, unrelated = minilm.embed(
            [
                "How do I reset my password?",
                "What are the steps to change a forgotten login password?",
                "The volcano erupted and covered the village in ash.",
            ]
        )
        close, far = _cos(query, paraphrase), _cos(query, unrelated)
        assert close > 0.5
        assert far < 0.2
        assert close > far + 0.3

    def test_count_tokens_uses_the_model_tokenizer(
        self, minilm: SentenceTransformerEmbedder
    ) -> None:
        # WordPiece: "hello" "," "unbelievable" "world" "!" with no [CLS]/[SEP].
        assert minilm.count_tokens("Hello, unbelievable world!") == 5
        assert minilm.count_tokens("") == 0
        # Rare words split into several pieces.
        assert minilm.count_tokens("Schwarzschild") > 1
        # No padding and no truncation in counting: a long text counts in full.
        assert minilm.count_tokens("word " * 1000) == 1000

    def test_long_text_is_truncated_not_refused(self, minilm: SentenceTransformerEmbedder) -> None:
        long_text = "graph " * 2000
        short_text = "graph " * (minilm.max_tokens - 2)  # exactly fills 256 with CLS/SEP
        long_vec, short_vec = minilm.embed([long_text, short_text])
        np.testing.assert_allclose(long_vec, short_vec, atol=1e-5)

    def test_batching_equals_one_by_one(self, minilm: SentenceTransformerEmbedder) -> None:
        texts = [
            f"Document {i} talks about {topic} and its {detail}."
            for i, (topic, detail) in enumerate(
                (t, d)
                for t in ("graphs", "audio", "images", "retrieval", "planning")
                for d in ("history", "costs", "risks", "uses", "limits", "future", "data", "tools")
            )
        ] * 5
        texts = [f"{t} ({i})" for i, t in enumerate(texts)]
        assert len(texts) == 200
        batched = SentenceTransformerEmbedder(batch_size=64)
        batched._model = minilm._load()  # same weights, no second load
        together = np.asarray(batched.embed(texts))
        alone = np.asarray([minilm.embed([t])[0] for t in texts])
        np.testing.assert_allclose(together, alone, atol=2e-5)

    def test_missing_package_names_the_extra(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import fails
        with pytest.raises(DependencyMissingError) as info:
            SentenceTransformerEmbedder().embed(["hi"])
        assert info.value.extra == "text"
        assert "kgrag[text]" in str(info.value)

    def test_unknown_model_is_a_model_error(self) -> None:
        embedder = SentenceTransformerEmbedder("/nonexistent/model-folder")
        with pytest.raises(ModelError, match="could not load the sentence-transformers model"):
            embedder.embed(["hi"])


# ----------------------------------------------------------------------------------- OpenAI


def _embedder(server: LocalOpenAIServer, **kwargs: Any) -> OpenAIEmbedder:
    return OpenAIEmbedder(base_url=server.base_url, api_key="test-key", **kwargs)


class TestOpenAIEmbedder:
    def test_batches_and_keeps_order(self, openai_server: LocalOpenAIServer) -> None:
        embedder = _embedder(openai_server, dimensions=64, batch_size=256)
        texts = [f"passage {i} about topic {i % 7}" for i in range(600)]
        vectors = embedder.embed(texts)

        requests = openai_server.requests_to(EMBEDDINGS)
        assert [len(r.body["input"]) for r in requests] == [256, 256, 88]
        assert all(r.body["model"] == "text-embedding-3-small" for r in requests)
        assert all(r.body["dimensions"] == 64 for r in requests)
        assert requests[0].headers["authorization"] == "Bearer test-key"
        assert len(vectors) == 600
        for i in (0, 255, 256, 511, 599):
            np.testing.assert_allclose(vectors[i], hashed_embedding(texts[i], 64), atol=1e-6)
        np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)

    def test_dimensions_configured_need_no_request(self, openai_server: LocalOpenAIServer) -> None:
        embedder = _embedder(openai_server, dimensions=128)
        assert embedder.dimensions == 128
        assert embedder.model_name == "text-embedding-3-small"
        assert embedder.max_tokens == 8191
        assert openai_server.requests == []
        assert len(embedder.embed(["hello"])[0]) == 128

    def test_dimensions_from_first_response(self, openai_server: LocalOpenAIServer) -> None:
        embedder = _embedder(openai_server, model="local-embedder")
        vectors = embedder.embed(["alpha beta"])
        assert len(vectors[0]) == openai_server.default_dimensions == 384
        assert embedder.dimensions == 384
        assert len(openai_server.requests) == 1  # no probe after a real response
        assert "dimensions" not in openai_server.requests[0].body  # not a text-embedding-3 model

        fresh = _embedder(openai_server, model="text-embedding-3-large")
        assert fresh.dimensions == 3072  # read from one probe request
        assert len(openai_server.requests) == 2

    def test_declared_dimensions_checked_against_responses(
        self, openai_server: LocalOpenAIServer
    ) -> None:
        embedder = _embedder(openai_server, model="local-embedder", dimensions=64)
        with pytest.raises(ModelError, match="returned 384-dimensional vectors, expected 64"):
            embedder.embed(["alpha"])

    def test_retries_two_server_errors_with_backoff(self, openai_server: LocalOpenAIServer) -> None:
        embedder = _embedder(openai_server, dimensions=32, max_retries=4)
        openai_server.fail_next(2, status=500)
        start = time.monotonic()
        vectors = embedder.embed(["retry me", "and me"])
        elapsed = time.monotonic() - start

        requests = openai_server.requests_to(EMBEDDINGS)
        assert [r.status for r in requests] == [500, 500, 200]
        assert all(r.body["input"] == ["retry me", "and me"] for r in requests)
        np.testing.assert_allclose(vectors[0], hashed_embedding("retry me", 32), atol=1e-6)
        # Exponential backoff: about 0.5 s then 1 s (less up to 25% jitter), the second longer.
        first_gap = requests[1].at - requests[0].at
        second_gap = requests[2].at - requests[1].at
        assert first_gap >= 0.3
        assert second_gap > first_gap
        assert elapsed >= 1.0

    def test_retries_rate_limits_and_dropped_connections(
        self, openai_server: LocalOpenAIServer
    ) -> None:
        embedder = _embedder(openai_server, dimensions=32, max_retries=4)
        openai_server.fail_next(1, status=429, retry_after_ms=20)
        openai_server.drop_next(1)
        assert len(embedder.embed(["limited"])) == 1
        assert [r.status for r in openai_server.requests_to(EMBEDDINGS)] == [429, 0, 200]

    def test_gives_up_after_max_retries(self, openai_server: LocalOpenAIServer) -> None:
        embedder = _embedder(openai_server, dimensions=32, max_retries=2)
        openai_server.fail_next(5, status=503, retry_after_ms=10)
        with pytest.raises(ModelError) as info:
            embedder.embed(["never"])
        message = str(info.value)
        assert "HTTP 503" in message
        assert "still failing after 2 retries" in message
        assert isinstance(info.value.__cause__, openai.InternalServerError)
        assert len(openai_server.requests_to(EMBEDDINGS)) == 3  # first try + 2 retries

    def test_bad_request_is_a_clear_model_error_and_not_retried(
        self, openai_server: LocalOpenAIServer
    ) -> None:
        embedder = _embedder(openai_server, dimensions=32)
        openai_server.fail_next(1, status=400, message="This model's maximum context is 8192")
        with pytest.raises(ModelError) as info:
            embedder.embed(["too long, say"])
        message = str(info.value)
        assert "HTTP 400" in message
        assert "maximum context is 8192" in message
        assert "text-embedding-3-small" in message
        assert openai_server.base_url in message
        assert "check the model name" in message
        assert isinstance(info.value.__cause__, openai.BadRequestError)
        assert len(openai_server.requests) == 1

    def test_refused_key_says_so(self) -> None:
        with LocalOpenAIServer(api_key="right-key") as server:
            embedder = OpenAIEmbedder(base_url=server.base_url, api_key="wrong-key")
            with pytest.raises(ModelError, match="API key was refused"):
                embedder.embed(["secret"])

    def test_unreachable_server_is_a_model_error(self) -> None:
        with LocalOpenAIServer() as server:
            url = server.base_url
        embedder = OpenAIEmbedder(base_url=url, api_key="k", max_retries=0, timeout=5)
        with pytest.raises(ModelError, match="could not connect"):
            embedder.embed(["anyone?"])

    def test_empty_text_refused_before_any_request(self, openai_server: LocalOpenAIServer) -> None:
        embedder = _embedder(openai_server, dimensions=32)
        with pytest.raises(ModelError, match="text 1 of 2 is empty"):
            embedder.embed(["fine", ""])
        assert openai_server.requests == []
        assert embedder.embed([]) == []

    def test_count_tokens(self, openai_server: LocalOpenAIServer) -> None:
        embedder = _embedder(openai_server)
        ten_words = "one two three four five six seven eight nine ten"
        # tiktoken when its encoding is at hand (10), else the words * 1.3 estimate (13).
        assert embedder.count_tokens(ten_words) in (10, math.ceil(10 * 1.3))
        assert embedder.count_tokens("") == 0

    def test_missing_openai_package_names_the_extra(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setitem(sys.modules, "openai", None)  # import fails
        with pytest.raises(DependencyMissingError) as info:
            OpenAIEmbedder(base_url="http://127.0.0.1:9/v1", api_key="k")
        assert (info.value.package, info.value.extra) == ("openai", "openai")

    def test_missing_key_for_openai_is_a_config_error(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
            OpenAIEmbedder()


# ------------------------------------------------------ the chat side of LocalOpenAIServer


class TestLocalOpenAIServerChat:
    def test_scripted_structured_reply_with_usage(self, openai_server: LocalOpenAIServer) -> None:
        client = openai.OpenAI(base_url=openai_server.base_url, api_key="k", max_retries=0)
        openai_server.add_chat_reply('{"plan": []}', "second")
        schema = {"type": "object", "properties": {"plan": {"type": "array"}}}
        response_format: Any = {
            "type": "json_schema",
            "json_schema": {"name": "plan", "schema": schema, "strict": True},
        }
        response = client.chat.completions.create(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": "plan this question please"}],
            response_format=response_format,
        )
        assert response.choices[0].message.content == '{"plan": []}'
        assert response.choices[0].finish_reason == "stop"
        assert response.usage is not None
        assert response.usage.prompt_tokens == 4
        assert response.usage.completion_tokens > 0
        recorded = openai_server.requests_to("/v1/chat/completions")[0].body
        assert recorded["response_format"]["json_schema"]["name"] == "plan"
        assert openai_server.pending_chat_replies == 1

    def test_handler_faults_and_missing_script(self, openai_server: LocalOpenAIServer) -> None:
        client = openai.OpenAI(base_url=openai_server.base_url, api_key="k", max_retries=2)
        with pytest.raises(openai.BadRequestError, match="no scripted reply"):
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
        openai_server.chat_handler = lambda req: req["messages"][-1]["content"].upper()
        openai_server.fail_next(1, status=500, retry_after_ms=10)
        response = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "echo me"}]
        )
        assert response.choices[0].message.content == "ECHO ME"
        statuses = [r.status for r in openai_server.requests_to("/v1/chat/completions")]
        assert statuses == [400, 500, 200]
