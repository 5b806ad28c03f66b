"""Write the plan JSON Schema to docs/plan.schema.json (or check that it is up to date).

python scripts/export_plan_schema.py            # write docs/plan.schema.json
python scripts/export_plan_schema.py --check    # exit 1 when the file differs from the models
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kgrag.planner.models import plan_json_schema

DEFAULT_OUTPUT = Path(__file__).resolve().parents[1] / "docs" / "plan.schema.json"


def render() -> str:
    """The schema as the text stored in docs/plan.schema.json."""
    return json.dumps(plan_json_schema(), indent=2, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is stale: run scripts/export_plan_schema.py", file=sys.stderr)
            return 1
        print(f"{args.output} is up to date")
        return 0
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
