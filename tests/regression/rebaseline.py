"""Re-baseline the record regression corpus: recompute every case's column digests with the current engine and print
which cases and columns changed. Run only for a deliberate, documented model change (issue 29's re-baselining); the commit
that runs it lists every changed record and why. Usage: python tests/regression/rebaseline.py [--check]"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from test_regression import CORPUS, changed_columns  # noqa: E402

from fabricsim.engine import run_wire  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--check", action="store_true", help="only report the cases whose hash would change")
    args = ap.parse_args()
    changed = 0
    for path in CORPUS:
        case = json.load(gzip.open(path))
        got = run_wire(case["spec"], case["fidelity"]).digests()
        cols = changed_columns(case["column_sha256"], got)
        if cols:
            changed += 1
            print(f"{path.name}: {', '.join(cols)}")
            if not args.check:
                case["column_sha256"] = got
                with gzip.open(path, "wt") as f:
                    json.dump(case, f, sort_keys=True)
    print(f"{changed} of {len(CORPUS)} records changed" + ("" if args.check else "; corpus rewritten"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
