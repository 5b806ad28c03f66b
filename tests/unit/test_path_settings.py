"""A folder setting that cannot be written is a configuration error naming the setting and the
path at its first write, not an ``OSError`` of whatever wrote there first (empty and blank paths
are refused earlier, when the settings are read: tests/unit/test_settings_hostile.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from kgrag.cli import app
from kgrag.config import Settings, writable_folder
from kgrag.errors import ConfigError
from kgrag.ingest.bulk_job import _scratch
from kgrag.modalities import factory


@pytest.fixture
def under_a_file(tmp_path: Path) -> Path:
    """A folder path whose parent is a regular file: it cannot be created, even by root."""
    (tmp_path / "a-file").write_text("not a folder", encoding="utf-8")
    return tmp_path / "a-file" / "models"


def test_an_unwritable_model_cache_is_a_config_error_naming_it(
    tmp_path: Path, under_a_file: Path
) -> None:
    settings = Settings(model_cache=under_a_file, data_dir=tmp_path / "data", text_backend="onnx")
    embedder = factory.text_embedder(settings)  # the file is built on first use
    with pytest.raises(ConfigError) as caught:
        embedder.embed(["Ada Lovelace"])
    message = str(caught.value)
    assert message.startswith("KGRAG_MODEL_CACHE: cannot create the folder "), message
    assert str(under_a_file) in message
    assert caught.value.exit_code == 3
    assert not (tmp_path / "data").exists()


def test_an_unwritable_data_dir_is_a_config_error_naming_it(under_a_file: Path) -> None:
    with pytest.raises(ConfigError, match=r"^KGRAG_DATA_DIR: cannot create the folder .*models"):
        _scratch(under_a_file)


def test_a_writable_folder_is_created(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b"
    assert writable_folder(target, "KGRAG_DATA_DIR") == target and target.is_dir()
    assert writable_folder(target, "KGRAG_DATA_DIR") == target  # already there: fine


def test_an_unwritable_api_keys_file_is_a_config_error_naming_it(under_a_file: Path) -> None:
    keys = under_a_file / "api-keys.json"
    result = CliRunner().invoke(
        app,
        ["auth", "add-key", "--user", "ada", "--role", "reader"],
        env={"KGRAG_API_KEYS_FILE": str(keys)},
    )
    assert isinstance(result.exception, ConfigError), result.output  # kgrag exits 3
    assert str(result.exception).startswith("KGRAG_API_KEYS_FILE: cannot create the folder ")
    assert str(under_a_file) in str(result.exception)
