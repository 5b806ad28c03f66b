"""No damaged file makes a reader crash the job: a bounded, seeded run of the fuzzer
(tests/support/fuzz_readers.py; ``make bench-fuzz`` runs a long one) over real files of every
format kgrag reads, each cut short, with bytes flipped or zeroed, spliced with another, with a
block repeated, nested deep, or under another format's name, read as an ingestion job reads it.

No exception may escape ``parse_all``, and every refusal names the file (or ``file!member``).
The time budget only catches a reader that never ends (a loop on some input): it is generous,
and no timing is asserted."""

from __future__ import annotations

from pathlib import Path

from tests.support.fuzz_kgrag import TARGET
from tests.support.fuzz_readers import cases, run_cases, seeds

CASES = 240
SEED = 20261127
#: a reader still running after this long is taken to loop forever
BUDGET_S = 120.0


def test_no_damaged_file_escapes_the_readers(tmp_path: Path) -> None:
    found = seeds(tmp_path / "seeds")
    formats = {s.format for s in found}
    # every format of tests/data, and those made here with the libraries (ffmpeg may be absent)
    assert {"pdf", "docx", "odt", "pptx", "xlsx", "html", "json", "zip", "tar", "png"} <= formats
    work = tmp_path / "cases"
    work.mkdir()
    results = run_cases(TARGET, list(cases(found, CASES, SEED)), work, BUDGET_S)
    assert len(results.outcomes) == CASES
    bad = [(o.kind, o.case.format, o.case.mutation, o.detail[-1200:]) for o in results.bad()]
    assert bad == []
    # the damage was real: many files were refused, each with a reason
    refused = [r for o in results.outcomes for _, r in o.refusals]
    assert len(refused) > CASES // 5 and all(r.strip() for r in refused)
