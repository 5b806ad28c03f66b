"""SECURITY.md's limits table, for the rows no other test covers: Pillow's decompression-bomb
guard on a real image file, and ``KGRAG_LLM_TIMEOUT_S`` against a real socket that never
answers."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest
from PIL import Image

from kgrag.agent.providers import llm_client
from kgrag.config import Settings
from kgrag.errors import IngestError
from kgrag.ingest.models import SourceItem
from kgrag.ingest.parsers import parse
from kgrag.llm import ChatMessage
from kgrag.llm.errors import LLMError

LIMIT = 10_000_000


def _image(path: Path) -> SourceItem:
    return SourceItem(path=path, modality="image", mime="image/png")


def test_an_image_that_decodes_to_too_many_pixels_is_refused_naming_the_file(
    tmp_path: Path,
) -> None:
    bomb = tmp_path / "bomb.png"
    Image.new("1", (12_000, 12_000)).save(bomb)  # 144 M pixels in a few kilobytes
    assert bomb.stat().st_size < 100_000
    with pytest.raises(IngestError) as info:
        parse(_image(bomb), LIMIT)
    assert info.value.path == str(bomb)
    assert "too large to decode safely" in info.value.reason
    fine = tmp_path / "fine.png"
    Image.new("RGB", (600, 400), "white").save(fine)  # the control: an ordinary image parses
    assert parse(_image(fine), LIMIT).images[0].width == 600


def test_an_llm_request_that_gets_no_answer_ends_after_the_configured_timeout(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with socket.socket() as silent:  # accepts connections (backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        monkeypatch.setenv("KGRAG_LLM_TIMEOUT_S", "1")
        settings = Settings(llm_model="m", openai_base_url=f"http://127.0.0.1:{port}/v1")
        assert settings.llm_timeout_s == 1
        client = llm_client(settings)
        assert client is not None
        start = time.monotonic()
        with pytest.raises(LLMError):
            client.chat([ChatMessage(role="user", content="hello")])
        elapsed = time.monotonic() - start
    # three attempts (two retries) of one second each, plus the client's short backoffs
    assert 1 <= elapsed < 20, elapsed
