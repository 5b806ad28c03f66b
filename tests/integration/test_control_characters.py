"""Control characters in a file are not stored, indexed nor quoted, on both engines: util-linux's
real v2.15 release notes hold a bell ("- remove \\x07 from warning message"), GNU man-db's manual
as formatted text holds terminal escape sequences ("\\x1b[1mman-db - the database ...\\x1b[0m"),
and moreutils' real README (tests/data/line_words) is given the other kinds (C0, DEL, C1, a
backspace's overstrike). Before, they were kept in the stored text and the answer quoted them:
"- sponge:\\x07 soak up standard input ..."."""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from kgrag.agent.agent import KnowledgeAgent
from kgrag.core import AccessContext
from kgrag.core.text import CONTROL_CHARACTER_CLASS
from kgrag.executor.lexical import LEXICAL_TEMPLATE
from kgrag.modalities.text import default_text_embedder
from tests.support.engines import Engine

README = Path(__file__).resolve().parents[1] / "data" / "line_words" / "moreutils-README"
RELEASE_NOTES = Path("/usr/share/doc/util-linux/releases/v2.15-ReleaseNotes.gz")
MANUAL = Path("/usr/share/doc/man-db/man-db-manual.txt.gz")
CONTROL = re.compile(f"[{CONTROL_CHARACTER_CLASS}]")


@pytest.fixture(scope="module")
def agent(
    module_engine: Engine, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KnowledgeAgent]:
    folder = tmp_path_factory.mktemp("controls")
    text = README.read_text(encoding="utf-8")
    text = text.replace("sponge: soak", "sponge:\x07 soak").replace(
        "vidir: edit", "vi\x01dir: e\x7fdit"
    )
    text = text.replace("standard input", "standard\u0085 input").replace(
        "a file", "a f\x08file", 1
    )
    (folder / "moreutils-README").write_text(text, encoding="utf-8")
    paths = [folder / "moreutils-README"]
    for real in (RELEASE_NOTES, MANUAL):
        if real.exists():
            paths.append(folder / real.stem)
            paths[-1].write_bytes(gzip.decompress(real.read_bytes()))
    store = module_engine.open()
    with KnowledgeAgent(store, default_text_embedder()) as a:
        report = a.ingest([str(p) for p in paths])
        assert report.ingested == len(paths), report.failures
        yield a


def _stored(agent: KnowledgeAgent, word: str) -> list[str]:
    rows = agent.store.read(
        f"templates/{LEXICAL_TEMPLATE}",
        {"query": word, "k": 20, **AccessContext(admin=True).params()},
    )
    return [r["text"] for r in rows]


@pytest.mark.parametrize(
    ("word", "said", "path"),
    [
        ("sponge", "sponge: soak up standard input and write to a file", README),
        ("vidir", "vidir: edit a directory", README),
        ("warning", "remove  from warning message", RELEASE_NOTES),
        ("cached", "man-db - the database cached manual pager suite", MANUAL),
    ],
)
def test_stored_text_holds_no_control_character(
    agent: KnowledgeAgent, word: str, said: str, path: Path
) -> None:
    if not path.exists():
        pytest.skip(f"{path} is not on this machine")
    texts = _stored(agent, word)
    assert any(said in t for t in texts), texts
    assert not [t for t in texts if CONTROL.search(t) or "\x1b" in t or "[1m" in t], texts


def test_an_answer_quotes_no_control_character(agent: KnowledgeAgent) -> None:
    found = agent.ask("What does sponge do?", admin=True)
    assert "sponge: soak up standard input and write to a file" in found.answer, found.answer
    assert not CONTROL.search(found.answer), found.answer
