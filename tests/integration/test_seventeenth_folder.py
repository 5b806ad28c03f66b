"""What the seventeenth real folder found (BENCHMARKS.md "A seventeenth folder"), on real files
of this machine and both engines:

- "How fast are dconf reads compared to GHashTable?" abstained: its one name, GHashTable, is
  mentioned in passing in dconf's README, and "dconf", what it is about, is written in lower
  case, so no name phrase was in a heading or a topic sentence. A file the question names by its
  whole name (``dconf README``: "dconf") now counts as a name phrase its file's passages hold
  (kgrag.agent.support.files_named);
- "Who designed the FreeType logo?" (nothing answers it) quoted FreeType's README ("It is
  written in C, designed to be small ..."): a question asking who is not answered by quotes
  naming no one (kgrag.agent.someone); "Who wrote the note about the use of Readline?" still is;
- "What is the maximum file size that tar can archive?" (nothing answers it) quoted tar(1)'s
  "Options to GNU tar can be given in three different styles.": a size is stated in digits or a
  unit of size (kgrag.agent.quantity);
- pkgconf's README was cited as "pkgconf test" (its heading's CI badge) and rustup's TOML file
  as 'config_version = "1"' (its first line, a setting); so titled, "Which Rust components ...?"
  abstained: its rows hold "rust-docs", and a hyphenated word now holds its parts.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")

from kgrag.agent.agent import KnowledgeAgent
from kgrag.graph.store import GraphStore
from tests.support.folders import ingested_copy

DATA = Path(__file__).parents[1] / "data" / "seventeenth_folder"
FILES = (
    "dconf README",
    "freetype README",
    "tar.1.gz",
    "pkgconf README.md.gz",
    "multirust-config.toml",
    "readline USAGE",
)


@pytest.fixture(scope="module")
def agent(module_store: GraphStore, tmp_path_factory: pytest.TempPathFactory) -> KnowledgeAgent:
    return ingested_copy(module_store, tmp_path_factory, DATA, FILES)


def test_a_file_named_in_lower_case_is_what_the_question_is_about(agent: KnowledgeAgent) -> None:
    answer = agent.ask("How fast are dconf reads compared to GHashTable?")
    assert answer.exit_reason != "not_found", answer.answer
    assert "less than 10 times slower than GHashTable" in answer.answer, answer.answer
    assert {c.title for c in answer.citations} == {"dconf README"}, answer.citations


@pytest.mark.parametrize(
    "question",
    ["Who designed the FreeType logo?", "What is the maximum file size that tar can archive?"],
)
def test_quotes_naming_no_one_or_no_size_do_not_answer(
    agent: KnowledgeAgent, question: str
) -> None:
    answer = agent.ask(question)
    assert answer.exit_reason == "not_found", answer.answer
    assert not answer.citations, answer.answer


def test_a_quote_naming_someone_answers_who(agent: KnowledgeAgent) -> None:
    answer = agent.ask("Who wrote the message about the use of Readline?")
    assert answer.exit_reason != "not_found", answer.answer
    assert "Stallman" in answer.answer or "rms@gnu.org" in answer.answer, answer.answer


def test_a_badge_or_a_setting_does_not_title_a_file(agent: KnowledgeAgent) -> None:
    listed = agent.ask("Which TOML files do I have?")
    assert [c.title for c in listed.citations] == ["multirust-config"], listed.answer
    answer = agent.ask("How do I make autotools use pkgconf instead of pkg-config?")
    assert answer.citations and {c.title for c in answer.citations} == {"pkgconf"}, answer.answer


def test_a_hyphenated_word_holds_the_name_it_starts_with(agent: KnowledgeAgent) -> None:
    """The rows quoted hold "rust-docs", "rust-std", "rustc", not the word "Rust" alone: the
    quoted-names gate abstained once the file was titled by its name, not its first line."""
    answer = agent.ask("Which Rust components are installed according to the multirust config?")
    assert answer.exit_reason != "not_found", answer.answer
    assert "rust-std" in answer.answer, answer.answer
