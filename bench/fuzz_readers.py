"""Fuzz every reader of kgrag (``make bench-fuzz``): real files of each format, damaged with
seeded mutations (tests/support/fuzz_readers.py), each read as an ingestion job reads it
(``parse_all``) in a worker process with a time budget.

    python bench/fuzz_readers.py [--cases 3000] [--seed 1] [--budget 30] [--json OUT]

Prints cases per format, refusals by reason, max and median read time per format, and every
crash (an exception that escaped), hang (over the budget) and refusal that does not name its
file, with the case's format, mutation and how to rebuild it (the seed and case number). Exit
status 1 when any was found. Figures only; nothing here is asserted on timings.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.fuzz_kgrag import TARGET
from tests.support.fuzz_readers import Outcome, cases, run_cases, seeds

#: what a reason says, without the file's own words (quoted names, numbers, exception text)
_DETAIL = re.compile(r"\(.*\)|'[^']*'|\"[^\"]*\"|\d[\d,.]*")


def reason_kind(reason: str) -> str:
    """A refusal's reason, generalised: "corrupt or unreadable PDF: ..." -> its first words."""
    head = _DETAIL.sub("N", reason.split(":", 1)[0] if ": " in reason else reason)
    return " ".join(head.split()[:8])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--budget", type=float, default=30.0, help="seconds per file")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    parser.add_argument("--keep", type=Path, help="copy each crashing or hanging case here")
    parser.add_argument("--only", type=int, nargs="*", help="run only these case numbers")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="kgrag-fuzz-") as tmp:
        work = Path(tmp)
        found = seeds(work / "seeds")
        all_cases = cases(found, args.cases, args.seed)
        if args.only:
            all_cases = (c for c in all_cases if c.number in args.only)
        print(
            f"{len(found)} seed files of {len({s.format for s in found})} formats; "
            f"{args.cases} cases, seed {args.seed}, budget {args.budget:g} s"
        )
        cases_dir = work / "cases"
        cases_dir.mkdir()
        started = time.perf_counter()

        def progress(o: Outcome) -> None:
            if o.kind != "ok":
                last = o.detail.strip().splitlines()[-1] if o.detail else ""
                print(f"  {o.kind}: case {o.case.number} {o.case.format} {o.case.mutation}: {last}")
            elif (o.case.number + 1) % 500 == 0:
                print(f"  {o.case.number + 1} cases, {time.perf_counter() - started:.0f} s")

        results = run_cases(TARGET, all_cases, cases_dir, args.budget, progress, args.keep)
    wall = time.perf_counter() - started

    per_format: dict[str, list[float]] = defaultdict(list)
    for o in results.outcomes:
        per_format[o.case.format].append(o.seconds)
    reasons = Counter(reason_kind(r) for o in results.outcomes for _, r in o.refusals)
    bad = results.bad()
    kinds = Counter(o.kind for o in bad)
    print(
        f"\n{len(results.outcomes)} cases in {wall:.0f} s; escaped {kinds['escaped']}, "
        f"hangs {kinds['hang']}, unnamed refusals {kinds['unnamed']}"
    )
    print(f"\n{'format':<10} {'cases':>6} {'median ms':>10} {'max ms':>9}")
    table = {}
    for fmt in sorted(per_format):
        times = per_format[fmt]
        table[fmt] = {
            "cases": len(times),
            "median_ms": round(statistics.median(times) * 1000, 1),
            "max_ms": round(max(times) * 1000, 1),
        }
        row = table[fmt]
        print(f"{fmt:<10} {row['cases']:>6} {row['median_ms']:>10.1f} {row['max_ms']:>9.1f}")
    slowest = sorted(results.outcomes, key=lambda o: -o.seconds)[:8]
    print("\nslowest cases (--only N reads one again):")
    for o in slowest:
        print(
            f"{o.seconds * 1000:>9.1f} ms  case {o.case.number} {o.case.format} {o.case.mutation}"
        )
    print("\nrefusals by reason (most first):")
    for kind, n in reasons.most_common(25):
        print(f"{n:>6}  {kind}")
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "cases": len(results.outcomes),
                    "seed": args.seed,
                    "budget_s": args.budget,
                    "seconds": round(wall, 1),
                    "formats": table,
                    "reasons": dict(reasons.most_common()),
                    "slowest": [
                        {
                            "case": o.case.number,
                            "format": o.case.format,
                            "mutation": o.case.mutation,
                            "ms": round(o.seconds * 1000, 1),
                        }
                        for o in slowest
                    ],
                    "bad": [
                        {
                            "case": o.case.number,
                            "format": o.case.format,
                            "mutation": o.case.mutation,
                            "kind": o.kind,
                            "detail": o.detail[-1500:],
                        }
                        for o in bad
                    ],
                },
                indent=1,
            )
        )
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
