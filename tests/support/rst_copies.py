"""Counts the lines docutils' state machine copies (its ``ViewList`` slices: what made one parse
of a long reStructuredText document quadratic in its length), for tests/unit/test_rst_pieces.py
and bench/rst_reader.py. Counting, not timing."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def copied_lines() -> Iterator[list[int]]:
    """``[n]``: the lines docutils' ``ViewList`` slices copy while the block runs."""
    from docutils.statemachine import ViewList

    count = [0]
    original = ViewList.__getitem__

    def counting(self: ViewList, i: object) -> object:
        out = original(self, i)  # type: ignore[arg-type]
        if isinstance(i, slice):
            count[0] += len(out)  # type: ignore[arg-type]
        return out

    ViewList.__getitem__ = counting  # type: ignore[assignment,method-assign]
    try:
        yield count
    finally:
        ViewList.__getitem__ = original  # type: ignore[method-assign]
