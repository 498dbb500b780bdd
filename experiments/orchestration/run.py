"""Study 000 (Santos et al.): packing vs spreading of collectives on a Vela-like leaf-spine, simulated there with
IBM's Venus. Table IV: All-Reduce (All-to-All then All-Gather) of 10 MiB messages, one interface per node,
22 placements, on the lossless input-buffered fabric (128 KiB per input port, VOQs, credits, 1.5 us switches,
ECMP with a random next hop per message at every stage). A node sends its phase messages back to back
(the next starts when the previous has been handed to its NIC)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from fabricsim.report.figures import grouped_bars
from fabricsim.report.stats import summarize
from fabricsim.sweep import SweepSpec

TITLE = "Study 000: orchestration of collectives (Table IV, All-Reduce)"
HERE = Path(__file__).resolve().parent
CONTENTION_FREE = {"4n_1r", "6n_1r", "4n_4r"}


def reproduce(ctx) -> None:
    paper = json.loads((HERE / "paper.json").read_text())["table4"]
    seeds = 5 if ctx.quick else 30
    base = {"pattern": "all-reduce", "msg_mib": 10.0, "interfaces": 1}
    spec = SweepSpec(name="table4", base=base, task="fabricsim.collectives.run:sweep_task", seeds=seeds,
                     grid={"preset": [r["placement"] for r in paper]})
    df = ctx.sweep(spec, base).frame()
    s = summarize(df, ["preset"], ["completion_time_ms", "throughput_gbps", "throughput_per_interface_gbps",
                                   "packets_1hop_m", "packets_3hop_m"])
    s = s.set_index("preset")
    rows = []
    for r in paper:
        p = r["placement"]
        ours = s.loc[p]
        tol = 0.02 if p in CONTENTION_FREE else 0.15
        ctx.compare(f"t4-{p}-time", f"{p} All-Reduce execution time", r["time_ms"], ours["completion_time_ms_mean"], "ms",
                    rel=tol, source="Table IV", note=f"± {ours['completion_time_ms_ci95']:.2f} over {seeds} seeds")
        for key, col in (("hop1_m", "packets_1hop_m_mean"), ("hop3_m", "packets_3hop_m_mean")):
            want = r[key] or 0.0
            ctx.compare(f"t4-{p}-{key}", f"{p} {key[:4]} packets", want, round(ours[col], 2), "M", abs=0.011,
                        source="Table IV (two significant digits)")
        rows.append({"group": r["group"], "placement": p, "paper_ms": r["time_ms"], "ours_ms": ours["completion_time_ms_mean"],
                     "ours_ci95": ours["completion_time_ms_ci95"], "paper_gbps": r["thr_gbps"], "ours_gbps": ours["throughput_gbps_mean"],
                     "paper_if_gbps": r["thr_if_gbps"], "ours_if_gbps": ours["throughput_per_interface_gbps_mean"],
                     "paper_1hop_m": r["hop1_m"], "ours_1hop_m": ours["packets_1hop_m_mean"],
                     "paper_3hop_m": r["hop3_m"], "ours_3hop_m": ours["packets_3hop_m_mean"]})
    table = pd.DataFrame(rows)
    for group, g in table.groupby("group", sort=False):
        best_paper = g.loc[g["paper_ms"].idxmin(), "placement"]
        best_ours = g.loc[g["ours_ms"].idxmin(), "placement"]
        ctx.compare(f"t4-best-{group}", f"best placement for {group} nodes is {best_paper} (1 = ours agrees)", 1.0,
                    1.0 if best_ours == best_paper else 0.0, source="Table IV", note=f"ours: {best_ours}")
    ctx.table("Table IV: All-Reduce, 10 MiB, one interface per node (paper / fabricsim)", table)
    fig_df = s.reset_index().rename(columns={"preset": "placement"})
    ctx.figure(grouped_bars(fig_df, "placement", "completion_time_ms", title=f"Table IV: All-Reduce execution time ({seeds} seeds, 95% CI)",
                            ylabel="ms", paper={r["placement"]: r["time_ms"] for r in paper}), "table4_time",
               "All-Reduce execution time per placement, mean and 95% CI; diamonds: the paper's Table IV.")
    ctx.note("Open (issue 5): contended placements run longer than Venus's, by up to ~30% for concurrent collectives; "
             "with 1 MiB input buffers several rows meet the paper, which points at how Venus's input buffers and "
             "credits interact with VOQs. 4n_1r_6n_1r (8.89 ms in the paper vs 8.39 for 6n_1r alone) is 8.39 ms here: "
             "the two collectives share no link in this model.")
