"""The example pages of the API reference site (docs/examples/*.md), run as written: each page's
Python block in a fresh interpreter, on the embedded store with the real small models (MiniLM,
the bundled tiny CLIP, faster-whisper tiny.en) and espeak-ng. What each prints must hold the
answers and citations the page promises."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "docs" / "examples"


def python_blocks(page: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.DOTALL)


def run_page(page: Path, folder: Path) -> str:
    (code,) = python_blocks(page)  # one runnable block per example page
    script = folder / f"{page.stem}.py"
    script.write_text(code, encoding="utf-8")
    env = os.environ | {"PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "TMPDIR": str(folder)}
    for name in ("KGRAG_STORE", "KGRAG_LLM_MODEL", "KGRAG_DATA_DIR"):
        env.pop(name, None)
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng is missing")
def test_the_cross_modal_example_answers_an_image_and_a_spoken_question(tmp_path: Path) -> None:
    out = run_page(EXAMPLES / "cross-modal.md", tmp_path)
    assert "7 documents ingested" in out
    image_part, audio_part = out.split("heard:", 1)
    # the drawing of a red circle finds the valve's drawing and the manual's figure of it
    assert "image: valve_pv7.png" in image_part
    assert "image: manual.pdf, page 2" in image_part
    # the spoken question is transcribed and answered from the roster, which it cites
    assert "lovelace" in audio_part.splitlines()[0].lower()
    assert "The Pressure Valve PV-7 is maintained by Ada Lovelace." in audio_part
    assert "chunk: maintenance.md" in audio_part


def test_every_example_page_is_run_by_a_test_here() -> None:
    # a new page needs a test above that runs it and checks what it prints
    assert {p.name for p in EXAMPLES.glob("*.md")} == {"cross-modal.md"}
