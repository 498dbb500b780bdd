"""Table IV at hybrid fidelity beside packet fidelity (issue 30's acceptance: the 22 rows within 1% of packet).

Each of study 000's 22 Table IV placements (a 10 MiB All-Reduce on the Vela-like lossless fabric, exactly the
study's sweep task `fabricsim.studies.orchestration:sweep_task`) runs at packet and at hybrid fidelity with the
same seeds; the script prints, per row, the mean completion time of each, the relative error of hybrid's mean
(hybrid / packet − 1), the worst single-seed error, the engine seconds of each and the speed-up, then the largest
|error| against the 1% target. It reports; it does not enforce (exit 0).

Usage: python benchmarks/hybrid_table4.py [--seeds 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from fabricsim.studies.orchestration import PRESETS, sweep_task

ROWS = ["4n_1r", "4n_2r", "4n_3r", "4n_4r", "6n_1r", "6n_2r", "6n_3r", "6n_4r", "8n_2r", "8n_3r", "8n_4r",
        "12n_2r", "12n_3r", "12n_4r", "4n_1r_6n_1r", "4n_2r_6n_2r", "4n_3r_6n_3r", "4n_4r_6n_4r",
        "6n_1r_8n_2r", "6n_2r_8n_2r", "6n_3r_8n_3r", "6n_4r_8n_4r"]
"""Table IV's 22 placements (experiments/orchestration/paper.json), in the paper's order."""
TARGET = 0.01


def one(preset: str, seed: int, fidelity: str) -> tuple[float, float]:
    """(completion ms, wall seconds of the task) of one Table IV run, as the study's sweep runs it."""
    payload = {"pattern": "shift-all-reduce", "msg_mib": 10.0, "interfaces": 1, "preset": preset, "fidelity": fidelity}
    t0 = time.perf_counter()
    out = sweep_task(payload, seed)
    return out["completion_time_ms"], time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=3, help="seeds per row, 1..N (default %(default)s)")
    ap.add_argument("--json", help="write every figure to this JSON file")
    a = ap.parse_args()
    assert set(ROWS) <= set(PRESETS), "Table IV's placements are the study's presets"
    rows = []
    print(f"{'placement':14} {'packet ms':>10} {'hybrid ms':>10} {'error %':>8} {'worst seed %':>13} "
          f"{'packet s':>9} {'hybrid s':>9} {'speed-up':>9}")
    for p in ROWS:
        pk = [one(p, s, "packet") for s in range(1, a.seeds + 1)]
        hy = [one(p, s, "hybrid") for s in range(1, a.seeds + 1)]
        mp, mh = statistics.mean(x for x, _ in pk), statistics.mean(x for x, _ in hy)
        worst = max(abs(h / q - 1) for (q, _), (h, _) in zip(pk, hy))
        wp, wh = sum(w for _, w in pk), sum(w for _, w in hy)
        r = {"placement": p, "packet_ms": mp, "hybrid_ms": mh, "error": mh / mp - 1, "worst_seed_error": worst,
             "packet_s": wp, "hybrid_s": wh}
        rows.append(r)
        print(f"{p:14} {mp:10.4f} {mh:10.4f} {r['error'] * 100:+8.3f} {worst * 100:13.3f} {wp:9.2f} {wh:9.2f} "
              f"{wp / wh:8.2f}x", flush=True)
    worst = max(rows, key=lambda r: abs(r["error"]))
    tp, th = sum(r["packet_s"] for r in rows), sum(r["hybrid_s"] for r in rows)
    verdict = "met" if abs(worst["error"]) <= TARGET else "missed"
    print(f"\nlargest |error| of a row's mean: {abs(worst['error']) * 100:.3f} % ({worst['placement']}; target <= "
          f"{TARGET * 100:g} %: {verdict}); all rows: packet {tp:.1f} s, hybrid {th:.1f} s ({tp / th:.2f}x)")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"seeds": a.seeds, "target": TARGET, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
