"""The reader the fuzzer of :mod:`tests.support.fuzz_readers` drives: one path through what an
ingestion job does with it (:func:`kgrag.ingest.sources.expand_inputs`, then
:func:`kgrag.ingest.containers.expand.parse_all` on each item), OCR off."""

from __future__ import annotations

from pathlib import Path

from kgrag.ingest.containers.expand import parse_all
from kgrag.ingest.sources import expand_inputs

#: KGRAG_MAX_FILE_BYTES for the fuzzed files (the "repeat" mutation makes files of ~2 MB)
MAX_BYTES = 8_000_000

TARGET = "tests.support.fuzz_kgrag:read"


def read(path: Path) -> list[tuple[str, str]]:
    """The refusals (path, reason) of reading ``path``; raises what parse_all lets escape."""
    expanded = expand_inputs([str(path)], ())
    refusals = [(r.path, r.reason) for r in expanded.rejected]
    for item in expanded.items:
        parsed = parse_all(item, MAX_BYTES, ocr_enabled=False)
        refusals += [(r.path, r.reason) for r in parsed.refused]
    return refusals
