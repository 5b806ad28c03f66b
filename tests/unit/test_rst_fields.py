"""A reStructuredText field (``:Number of Instances: 442``) is read as one line.

Found on the eleventh real folder (BENCHMARKS.md): scikit-learn's ``diabetes.rst`` was read as
"Number of Instances" and "442" in paragraphs of their own (docutils' text of a field list), so
"How many instances does the diabetes dataset have?" quoted "Number of Instances" without its
number."""

from __future__ import annotations

from pathlib import Path

from kgrag.ingest.parsers import parse
from kgrag.ingest.sources import expand_inputs

NOTES = Path(__file__).parents[1] / "data" / "dataset_notes" / "diabetes.rst"


def _text(path: Path) -> str:
    (found,) = expand_inputs([str(path)]).items
    return "\n".join(p.text for p in parse(found, 10_000_000).pages)


def test_a_field_reads_as_its_name_and_value_on_one_line() -> None:
    lines = _text(NOTES).splitlines()
    assert "Number of Instances: 442" in lines
    assert "Number of Attributes: First 10 columns are numeric predictive values" in lines
    assert (
        "Target: Column 11 is a quantitative measure of disease progression one year after baseline"
        in lines
    )
    # a field whose body is a list: its name, then the list
    at = lines.index("Attribute Information:")
    assert "age     age in years" in lines[at:]


def test_a_field_list_in_any_document_keeps_its_names_with_their_values(tmp_path: Path) -> None:
    path = tmp_path / "notes.rst"
    path.write_text(
        "Release\n=======\n\n:Version: 2.1\n:Date: 2026-11-27\n:Authors: - Ada\n  - Grace\n\n"
        "Text after.\n",
        encoding="utf-8",
    )
    text = _text(path)
    assert "Version: 2.1" in text and "Date: 2026-11-27" in text
    assert "Authors: Ada, Grace" in text and "Text after." in text
