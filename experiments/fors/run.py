"""Study 004 (Stein et al., FORS): synchronized all-to-all on the LHCb event-building network FT(2;20,18), 326
active servers, 200 Gb/s, under the study's failure scenarios. Schemes: the default OpenSM routing with linear
shift (Ftree while the topology stays a fat-tree, Min-Hop otherwise), Ftree with adaptive routing (packet
engine), and FORS (its schedule and router). Phase times come from the flow-level engine; one per-phase
synchronization overhead is calibrated on the no-failure case to the study's 141 Gb/s and then held fixed.
Fig. 7 (phase multiplier vs bandwidth reduction) is computed from the schedules."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from fabricsim.fors import default_scheme as fors_default
from fabricsim.report.figures import grouped_bars, lines
from fabricsim.schedule import fors_phases, paper_phases, phase_lower_bound
from fabricsim.studies.fors import SCENARIOS, calibrate, scenario
from fabricsim.sweep import SweepSpec
from fabricsim.topology.fattree import FatTree

TITLE = "Study 004: FORS, fault-adaptive all-to-all on a fat-tree DAQ network (Figs 3, 6, 7)"
HERE = Path(__file__).resolve().parent
TASK = "fabricsim.studies.fors:sweep_task"
SCHEMES = {"default": "default (OpenSM linear shift: Ftree, else Min-Hop)", "fors": "FORS",
           "ftree-ar": "Ftree + adaptive routing (packet engine)"}
"""Legend names of the table's scheme labels."""


def default_scheme(name: str) -> str:
    """Ftree where the topology stays a fat-tree (0F, SW18_19, SW18_19_22_23), Min-Hop elsewhere (§3.1)."""
    return fors_default(scenario(name))


def reproduce(ctx) -> None:
    paper = json.loads((HERE / "paper.json").read_text())
    msg = 1 << 20
    overhead = calibrate(FatTree(20, 18), msg_bytes=msg)
    ctx.note(f"Calibration (0F, linear shift + Ftree, conflict-free): a per-phase synchronization overhead of "
             f"{overhead * 1e6:.2f} us after each barrier (1 MiB messages, 200 Gb/s: {msg * 8 / 200e9 * 1e6:.2f} us "
             "transfer) gives the study's 141 Gb/s per server; it is held fixed for every other case. The 0F default "
             "rows (141 Gb/s, 45.9 Tb/s) are therefore fits, listed as calibrated and not scored.")
    base = {"m0": 20, "m1": 18, "active": 326, "link_gbps": 200.0, "msg_bytes": msg, "overhead_s": overhead}
    points = [{"scenario": s, "scheme": sch} for s in SCENARIOS for sch in ("fors", default_scheme(s))]
    spec = SweepSpec(name="fig6", base=base, task=TASK, seeds=1, grid={}, points=points)
    df = ctx.sweep(spec, base).frame()
    ar_scen = ["0F", "1F_SW0", "3F_SW0"] if ctx.quick else SCENARIOS
    ar_msg = 64 * 1024 if ctx.quick else 256 * 1024
    ar_over = calibrate(FatTree(20, 18), msg_bytes=ar_msg)
    ar_base = {**base, "msg_bytes": ar_msg, "overhead_s": ar_over}
    ar = ctx.sweep(SweepSpec(name="fig3_ar", base=ar_base, task=TASK, seeds=1, grid={"scenario": ar_scen},
                             points=[{"scheme": "ftree-ar"}]), ar_base).frame()
    ctx.note(f"Ftree-AR runs in the packet engine: every packet keeps OpenSM's static up-port (Ftree, or Min-Hop "
             f"once the topology is no longer a fat-tree) unless another up-port has less queued, on lossless "
             f"input-buffered switches, with {ar_msg // 1024} KiB messages, its overhead calibrated the same way "
             f"({ar_over * 1e6:.2f} us); {'three scenarios in quick mode' if ctx.quick else 'every scenario'}.")
    flow_setting = (f"flow engine, 1 run per scenario and scheme (deterministic), {msg // 1024} KiB messages, "
                    f"{len(SCENARIOS)} scenarios")
    ar_setting = (f"packet, 1 run per scenario (seed 1), {ar_msg // 1024} KiB messages, {len(ar_scen)} scenarios "
                  f"({', '.join(ar_scen)})")

    def setting_of(*schemes: str) -> str:
        """The setting behind numbers of these schemes: the flow engine's, and Ftree-AR's packet runs if involved."""
        parts = [flow_setting] if any(s != "ftree-ar" for s in schemes) else []
        return "; ".join(parts + ([f"Ftree-AR: {ar_setting}"] if "ftree-ar" in schemes else []))

    rows = []
    for _, r in pd.concat([df, ar]).iterrows():
        label = r["scheme"] if r["scheme"] in ("fors", "ftree-ar") else "default"
        rows.append({"scenario": r["scenario"], "scheme": label, "routing": r["scheme"], "f": r["f"], "m": r["m"],
                     "phases": r["phases"], "max_flows_per_link": r["max_flows_per_link"],
                     "gbps": r["throughput_per_server_gbps"], "tbps": r["total_tbps"]})
    table = pd.DataFrame(rows)
    val = {(r["scheme"], r["scenario"]): r["gbps"] for r in rows}
    # The default scheme without failures (linear shift + Ftree on 0F) is the calibration case: its per-server
    # throughput is 141 Gb/s by construction and its total is 141 × 326 servers, so both rows are fits, shown as
    # "calibrated" (checking that the fit reaches its target) and not scored.
    def calibrated(p: dict) -> bool:
        return (p["scheme"], p["scenario"]) == ("default", "0F")

    fit_note = f"calibration target: the overhead ({overhead * 1e6:.2f} us per phase) is fitted to give 141 Gb/s here"
    for p in paper["per_server_gbps"]:
        ours, cal = val.get((p["scheme"], p["scenario"])), calibrated(p)
        ctx.compare(f"gbps-{p['scheme']}-{p['scenario']}", f"{p['scheme']} per-server throughput, {p['scenario']}"
                    + (" (calibrated)" if cal else ""), p["gbps"], ours, "Gb/s", rel=0.01 if cal else 0.10,
                    source=p["where"], role="calibrated" if cal else "result", note=fit_note if cal else "",
                    setting=setting_of(p["scheme"]))
    for p in paper["total_tbps"]:
        ours = table[(table["scheme"] == p["scheme"]) & (table["scenario"] == p["scenario"])]["tbps"]
        cal = calibrated(p)
        ctx.compare(f"tbps-{p['scheme']}-{p['scenario']}", f"{p['scheme']} total throughput, {p['scenario']}"
                    + (" (calibrated)" if cal else ""), p["tbps"], float(ours.iloc[0]) if len(ours) else None, "Tb/s",
                    rel=0.01 if cal else 0.10, source="§3.2, §6.1", role="calibrated" if cal else "result",
                    note="141 Gb/s (calibrated) × 326 servers" if cal else "", setting=setting_of(p["scheme"]))
    for c in paper["claims"]:
        a, b = val.get(tuple(c["a"])), val.get(tuple(c["b"]))
        if a is None or b is None:
            continue
        ok = abs(a - b) <= 0.02 * max(a, b) if c["kind"] == "equal" else a > b
        ctx.compare(f"claim-{c['id']}", c["text"] + " (1 = holds)", 1.0, float(ok), source="study text",
                    note=f"{a:.1f} vs {b:.1f} Gb/s", setting=setting_of(c["a"][0], c["b"][0]))
    for s in SCENARIOS:
        others = [v for (sch, sc), v in val.items() if sc == s and sch != "fors"]
        if (("fors", s) in val) and others:
            ctx.compare(f"order-{s}", f"{s}: FORS ≥ every other scheme (1 = holds)", 1.0,
                        float(val[("fors", s)] >= max(others) - 1e-6), source="Fig. 6, §6.1",
                        note=", ".join(f"{sch} {v:.1f}" for (sch, sc), v in sorted(val.items()) if sc == s),
                        setting=setting_of(*(sch for (sch, sc) in val if sc == s)))
    for s in SCENARIOS:
        ft = table[(table["scenario"] == s) & (table["scheme"] == "fors")]
        if len(ft):
            ctx.compare(f"fors-conflict-free-{s}", f"FORS on {s}: at most one flow per link and phase", 1.0,
                        float(ft["max_flows_per_link"].iloc[0]), source="§5 (congestion-free routing)",
                        setting=f"FORS's schedules and routes, {len(SCENARIOS)} scenarios (exact, no simulation)")
    ctx.table("Figs 3 and 6: throughput per server (Gb/s) by scenario and scheme", table)
    # schemes in SCHEMES order (not the sweep's finishing order), so each keeps its colour from run to run
    fig = (table.rename(columns={"gbps": "gbps_mean"}).assign(gbps_ci95=0.0)
           .sort_values("scheme", key=lambda c: c.map(list(SCHEMES).index), kind="stable"))
    ctx.figure(grouped_bars(fig, "scenario", "gbps", "scheme", title="Figs 3 and 6: per-server throughput, FT(2;20,18)",
                            xlabel="failure scenario", ylabel="throughput per server (Gb/s)",
                            paper={(p["scenario"], p["scheme"]): p["gbps"] for p in paper["per_server_gbps"]},
                            paper_label="paper (§3.2, §6.1)", group_label=lambda k: SCHEMES.get(k, k), legend_below=True),
               "fig6_throughput", "Per-server throughput of the synchronized all-to-all per failure scenario and scheme; "
               "diamonds: the numbers the study states.")
    fig7(ctx)


def fig7(ctx) -> None:
    """Phase multiplier I = P_f / P_0 for the study's five fat-trees: the study's formula and our schedules."""
    rows = []
    for m0, m1 in ((8, 16), (16, 16), (20, 18), (16, 32), (32, 32)):
        p0 = fors_phases(m0, m1, 0)
        for f in range(0, m0):
            rows.append({"topology": f"FT(2;{m0},{m1})", "f": f,
                         "I_formula": paper_phases(m0, m1, f) / paper_phases(m0, m1, 0),
                         "I_mean": fors_phases(m0, m1, f) / p0, "phases": fors_phases(m0, m1, f),
                         "P_f": paper_phases(m0, m1, f), "lower_bound": phase_lower_bound(m0, m1, f),
                         "proof_condition": bool(f * (m1 - 1) >= m0 - f)})
    df = pd.DataFrame(rows)
    ctx.setting("FORS's schedules for the study's 5 fat-trees, every f (exact, no simulation)")
    for topo, g in df.groupby("topology", sort=False):
        m0, m1 = (int(x) for x in topo[len("FT(2;"):-1].split(","))
        holds = g[(g["f"] > m0 // m1) & g["proof_condition"]]
        equal = int((holds["phases"] == holds["P_f"]).sum())
        ctx.compare(f"fig7-phases-{topo}", f"{topo}: our FORS schedules use exactly P_f phases wherever f > ⌊M0/M1⌋ "
                    f"and f·(M1−1) ≥ M0 − f ({len(holds)} values of f)", float(len(holds)), float(equal),
                    source="§4, Appendix A (P_f optimal)")
        other = g[~g.index.isin(holds.index)]
        ctx.note(f"{topo}, f outside the proof's range: " + ", ".join(
            f"f={r.f}: {r.phases} phases (bound {r.lower_bound})" for r in other.itertuples()))
    ctx.table("Fig. 7: phase multiplier; I_formula = P_f/P_0 by the study's formula (P_0 = P − M0 counts inter-leaf "
              "phases only), I_mean = our schedules' phases over our no-failure count (P − 1)", df)
    fig = lines(df.assign(I_ci95=0.0), "f", "I", "topology", title="Fig. 7: phase multiplier vs bandwidth reduction",
                xlabel="bandwidth reduction f", ylabel="I = P_f / P_0", group_label="{}, our FORS schedules")
    ax = fig.axes[0]
    for line, (topo, g) in zip(list(ax.lines), df.groupby("topology", sort=False)):
        ax.plot(g["f"], g["I_formula"], linestyle="--", linewidth=1.2, color=line.get_color(),
                label=f"{topo}, study's formula")
    ax.legend(fontsize="small", ncols=2)
    ctx.figure(fig, "fig7_multiplier", "Phase multiplier of our FORS schedules (solid, markers) against the bandwidth "
               "reduction f; dashed: the study's formula P_f / P_0 for the same fat-tree.")
