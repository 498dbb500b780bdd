"""Regenerate ns3_reference.json: the study's four scenarios run in real ns-3 3.44 (benchmarks/ns3_incast.py).

Run from the repository root with the venv's Python (needs the `ns3` package, e.g. after `make validate`):
    .venv/bin/python experiments/incast/make_ns3_reference.py [--durations 10 60]
Every parameter is passed explicitly so that ns-3 and fabricsim run the same scenario (fabricsim.studies.incast's
defaults): TCP flows start at 1.0 s + i·0.5 s, applications stop 1 s before the end of the run, the
bottleneck discipline (FIFO, CoDel or FQ-CoDel) is limited to 100 packets above the 100-packet device queue.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SCENARIOS = {"S1": dict(transport="tcp"), "S2": dict(udp_rate_mbps=30.0), "S3": dict(udp_rate_mbps=200.0),
             "S4": dict(udp_rate_mbps=200.0, qdisc="fq_codel")}
ZOOM = (1.0, 1.6)
"""Window of the 1 ms queue samples kept for the queue-depth figure."""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--durations", type=float, nargs="+", default=[10.0, 60.0])
    ap.add_argument("--out", default=str(HERE / "ns3_reference.json"))
    args = ap.parse_args(argv)
    spec = importlib.util.spec_from_file_location("ns3_incast", ROOT / "benchmarks" / "ns3_incast.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    from ns import ns  # noqa: F401  (fail early and clearly if ns-3 is missing)

    out = {"ns3_version": "3.44", "generated_by": "experiments/incast/make_ns3_reference.py", "runs": {}}
    for dur in args.durations:
        key = f"{dur:g}"
        out["runs"][key] = {}
        for name, kw in SCENARIOS.items():
            t0 = time.perf_counter()
            extra = dict(queue_pkts=100, device_queue_pkts=100, app_start_s=1.0, tcp_start_s=1.0, tcp_stagger_s=0.5,
                         app_stop_s=dur - 1.0, sample_ms=1.0, seed=1)
            if kw.get("qdisc") == "fq_codel":
                extra["fq_codel_limit_pkts"] = 100
            r = mod.run_scenario(name, duration_s=dur, **kw, **extra)
            r.pop("flows", None)
            qs = r.pop("queue_samples", None)
            if qs:
                keep = [i for i, t in enumerate(qs["t_s"]) if ZOOM[0] <= t <= ZOOM[1]]
                r["queue_samples_zoom"] = {k: [v[i] for i in keep] for k, v in qs.items()}
                r["sampled_peak_100ms_pkts"] = max(
                    (q for t, q in zip(qs["t_s"], qs["qdisc_pkts"]) if round(t * 1000) % 100 == 0), default=None)
            out["runs"][key][name] = r
            print(f"{name} {dur:g} s: {time.perf_counter() - t0:.1f} s wall; tx {r['tx_packets']:,} rx {r['rx_packets']:,}",
                  file=sys.stderr, flush=True)
            Path(args.out).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
