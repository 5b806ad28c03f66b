"""The suite's own layout: pytest imports each test file by its base name (the default
``prepend`` import mode, no ``__init__.py`` in the test folders), so two test files of one name
in two folders stop the whole run at collection ("import file mismatch"), though each folder
passes alone. CI runs them all at once (2026-11-27: tests/unit and tests/integration both held a
``test_namesakes.py``)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_no_two_test_files_share_a_name() -> None:
    names = Counter(p.name for p in TESTS.rglob("test_*.py"))
    assert not [name for name, count in names.items() if count > 1]
