"""Study 003 (co-packaged optics): the baseline vs MOTION network design numbers, job locality under best-fit
packing (synthetic trace), and Fig. 2, the completion-time cost of spreading a 24-VM all-to-all over two
first-level switches, on the lossless packet engine."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from fabricsim.cpo import compare, load  # noqa: E402
from fabricsim.cpo.locality import pack, synthetic_trace  # noqa: E402
from fabricsim.cpo.locality_sim import MSG_SIZES, PKT_SIZES, STACKS, overhead  # noqa: E402
from fabricsim.report.figures import WIDTH_IN, annotate_cells  # noqa: E402
from fabricsim.sweep import SweepSpec  # noqa: E402

TITLE = "Study 003: co-packaged optics, network design and the locality all-to-all (Fig. 2)"
HERE = Path(__file__).resolve().parent
TASK = "fabricsim.cpo.locality_sim:sweep_task"


def reproduce(ctx) -> None:
    paper = json.loads((HERE / "paper.json").read_text())
    design_numbers(ctx, paper)
    locality(ctx, paper)
    fig2(ctx, paper)


def design_numbers(ctx, paper: dict) -> None:
    d = {"baseline": load("baseline"), "motion": load("motion")}
    ctx.setting("design calculator (closed form), the baseline and MOTION presets")
    js = {k: v.to_json() for k, v in d.items()}
    # Rows with "role": "input" echo a preset setting (or a ratio of settings): shown as inputs, not scored.
    for p in paper["design"]:
        role = p.get("role", "result")
        ctx.compare(f"design-{p['id']}", f"{p['design']}: {p['key']}", p["value"], js[p["design"]][p["key"]],
                    abs=0, source=p["where"], role=role,
                    note="preset input (fabricsim.cpo.PRESETS)" if role == "input" else "")
    rows = {r["quantity"]: r for r in compare(d["baseline"], d["motion"])}
    for p in paper["ratios"]:
        r = rows[p["key"]]
        role = p.get("role", "result")
        pct = p["kind"] == "change_pct"  # a change in %, its tolerance in percentage points
        ctx.compare(f"design-{p['id']}", f"MOTION vs baseline: {p['key']} ({'change' if pct else 'ratio'})",
                    p["value"], r[p["kind"]], "%" if pct else "", abs=p["abs"], source=p["where"], role=role,
                    note=f"{r['baseline']:g} → {r['motion']:g}" + (", ratio of preset inputs" if role == "input" else ""))
    e = paper["endpoints_min"]
    for k in d:
        ctx.compare(f"design-endpoints-{k}", f"{k}: more than 12K endpoints (1 = holds)", 1.0,
                    float(js[k]["endpoints"] > e["value"]), source=e["where"], note=f"{js[k]['endpoints']} endpoints")
    ctx.table("Network design: baseline vs MOTION (`fabricsim design --compare baseline motion`)",
              pd.DataFrame(compare(d["baseline"], d["motion"])))
    ctx.note("Design conventions: a leaf has servers_per_group down ports and ⌈down/3⌉ up ports (48 + 16 of 64; "
             "96 + 32 of 128); spines = all up ports / spine radix (4096/256 = 16; 4096/128 = 32), so every leaf "
             "reaches every spine once; bisection = half the leaf-spine capacity (204.8 vs 819.2 Tb/s); endpoints "
             "= 2 per dual-homed server (12,288 in both). MOTION optics at < 2 pJ/bit (Table 1): "
             f"{js['motion'].get('optics_power_kw', 0):.1f} kW for {js['motion']['optical_ports']} co-packaged ports.")
    own = {k: load(k, {"servers_per_group": None}).servers_per_group for k in d}
    ctx.note("Inputs: the servers per group (48, 96) and the group counts (128, 64) are the study's settings, given "
             "to the calculator by the presets, and the server bandwidth ratio is that of the 400G and 100G ports "
             "(both dual-homed); these rows are listed as inputs and not scored. With servers_per_group unset, the "
             "calculator's own rule (the most servers a leaf takes at 3:1, ⌊radix·3/4⌋) gives "
             f"{own['baseline']} and {own['motion']}.")


def locality(ctx, paper: dict) -> None:
    seeds = [1, 2, 3] if ctx.quick else list(range(1, 11))
    rows, hist = [], []
    for s in seeds:
        sizes = synthetic_trace(s)
        for name in ("baseline", "motion"):
            r = pack(load(name), sizes).summary()
            rows.append({"seed": s, "design": name, "applications": r["applications"], "large": r["large_applications"],
                         "single_all": r["single_group_fraction"], "single_large": r["large_single_group_fraction"],
                         "mean_groups_large": r["large_mean_groups"]})
            for k, v in r["large_groups_spanned_histogram"].items():
                hist.append({"seed": s, "design": name, "groups": int(k), "apps": v})
    df = pd.DataFrame(rows)
    ctx.setting(f"best-fit packing, {len(seeds)} synthetic traces (seeds {seeds[0]}-{seeds[-1]}), both designs")
    mean = df.groupby("design")[["single_all", "single_large", "mean_groups_large"]].mean()
    c = paper["locality_claims"]
    ms, bs = float(mean.loc["motion", "single_large"]), float(mean.loc["baseline", "single_large"])
    ctx.compare("locality-motion-large-single", "MOTION: more than half of the large applications (≥ 24 VMs) under "
                "one first-level group, synthetic trace (1 = holds)", 1.0, float(ms > c["motion_large_single_min"]),
                source=c["where"] + "; > 50%", note=f"ours {ms * 100:.1f}%, on our synthetic trace")
    ctx.compare("locality-baseline-large-single", "baseline: fewer than 5% of the large applications under one "
                "first-level group, synthetic trace (1 = holds)", 1.0, float(bs < c["baseline_large_single_max"]),
                source=c["where"] + "; < 5%", note=f"ours {bs * 100:.1f}%, on our synthetic trace")
    ctx.table(f"Locality: best-fit packing of synthetic traces (seeds {seeds[0]}…{seeds[-1]}), per seed", df)
    ctx.note("Locality: the production trace behind the study's > 50% (MOTION) and < 5% (baseline) is not public. "
             "Our synthetic trace (`fabricsim locality trace`): 70% small applications (1–16 VMs, uniform), 30% "
             "large (17–256 VMs, log-uniform), one VM per server, filled to 90% of the 6,144 servers, placed in "
             "arrival order with best fit. Large = ≥ 24 VMs (the Fig. 2 job). MOTION's 96-server groups hold "
             f"{mean.loc['motion', 'single_large'] * 100:.0f}% of them whole, against "
             f"{mean.loc['baseline', 'single_large'] * 100:.0f}% for the baseline's 48: the direction of the study's "
             "claim, but the baseline's share depends entirely on how many large jobs sit between 24 and 48 VMs, "
             "which only the real trace can tell.")
    h = pd.DataFrame(hist).groupby(["design", "groups"])["apps"].sum().unstack("design").fillna(0)
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 4.0), layout="constrained")
    w = 0.4
    for i, name in enumerate(("baseline", "motion")):
        share = h[name] / h[name].sum() * 100
        ax.bar(np.array(h.index) + (i - 0.5) * w, share, w, label=f"{name} ({'MOTION, 96' if name == 'motion' else 48}"
               " servers per group), ours")
    # The study's claims are bounds on the one-group share: MOTION above 50%, the baseline below 5%.
    ax.scatter([1 + 0.5 * w], [c["motion_large_single_min"] * 100], marker="^", s=90, color="black", zorder=5,
               label=f"paper: MOTION > {c['motion_large_single_min'] * 100:.0f}% in one group")
    ax.scatter([1 - 0.5 * w], [c["baseline_large_single_max"] * 100], marker="v", s=90, color="black", zorder=5,
               label=f"paper: baseline < {c['baseline_large_single_max'] * 100:.0f}% in one group")
    ax.set_xticks(h.index)
    ax.set_xlabel("first-level groups spanned")
    ax.set_ylabel("large applications (%)")
    ax.set_title("Locality: groups spanned by applications of ≥ 24 VMs")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize="small")
    ctx.figure(fig, "locality_groups", "Distribution of first-level groups spanned by the large applications of the "
               "synthetic traces, best-fit packing on each design; triangles: the study's bounds on the share held "
               "by one group (from a production trace).")


def _bytes(n: int) -> str:
    """A power-of-two size as a tick label: 256, 512, 1K, 2K, … (bytes)."""
    return f"{n // 1024}K" if n >= 1024 else str(n)


def fig2(ctx, paper: dict) -> None:
    cells = [{"vnic_gbps": v, "stack_us": s} for v, pair in STACKS.items() for s in pair]
    msgs = MSG_SIZES
    pkts = PKT_SIZES
    spec = SweepSpec(name="fig2", base={"leaves": 2}, task=TASK, seeds=1 if ctx.quick else 3,
                     grid={"msg_bytes": msgs, "packet_bytes": pkts}, points=cells)
    df = ctx.sweep(spec, {"leaves": 2}).frame()
    ctx.setting(f"packet, {spec.seeds} seed{'' if spec.seeds == 1 else 's'}, {len(cells)} VNIC/stack pairs × "
                f"{len(msgs)} message × {len(pkts)} packet sizes, 1 vs 2 switches")
    g = df.groupby(["vnic_gbps", "stack_us", "msg_bytes", "packet_bytes"])["increase_pct"].mean().reset_index()
    fig, axes = plt.subplots(2, 3, figsize=(WIDTH_IN * 1.2, 8.2), layout="constrained")
    order = [(v, s) for v, pair in sorted(STACKS.items(), reverse=True) for s in pair]
    stated = {p["vnic_gbps"]: p["value"] for p in paper["fig2_max_increase_pct"]}
    vmax = max(g["increase_pct"].max(), *stated.values())
    for ax, (v, s) in zip(axes.T.flat, order):
        sub = g[(g["vnic_gbps"] == v) & (g["stack_us"] == s)].pivot(index="packet_bytes", columns="msg_bytes",
                                                                      values="increase_pct")
        vals = sub.to_numpy()
        im = ax.imshow(vals, origin="lower", aspect="auto", cmap="viridis", vmin=0, vmax=vmax)
        ax.set_xticks(range(len(sub.columns)), [_bytes(c) for c in sub.columns], fontsize=9)
        ax.set_yticks(range(len(sub.index)), [_bytes(i) for i in sub.index], fontsize=9)
        annotate_cells(ax, im, vals, fontsize=11)
        i, j = np.unravel_index(np.nanargmax(vals), vals.shape)
        ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="red", linewidth=2.2))
        title = f"VNIC {v:g} Gb/s, stack {s:g} µs\nours max {np.nanmax(vals):.0f}%"
        ax.set_title(title + (f" · paper: up to {stated[v]:g}%" if v in stated else ""), fontsize=11)
        ax.set_xlabel("message size (B)")
        ax.set_ylabel("packet size (B)")
    cbar = fig.colorbar(im, ax=axes, label="completion-time increase, 2 switches vs 1 (%)")
    for val in stated.values():
        cbar.ax.axhline(val, color="red", linewidth=2)
    marks = cbar.ax.secondary_yaxis("left")
    marks.set_yticks(list(stated.values()), [f"paper {val:g}%" for val in stated.values()], fontsize=9, color="red")
    ctx.figure(fig, "fig2_heatmaps", "Fig. 2: completion-time increase (%) of the 24-VM all-to-all spread under two "
               "first-level switches vs one, per message and packet size, VNIC speed and stack latency. Red box: "
               "each panel's largest increase; panel titles and red marks on the colour bar: the study's stated "
               "maximum for each pair of stacks (§3).")
    for p in paper["fig2_max_increase_pct"]:
        sub = g[g["vnic_gbps"] == p["vnic_gbps"]]
        m = float(sub["increase_pct"].max())
        ctx.compare(f"fig2-max-{p['stack']}", f"Fig. 2: largest increase, stacks {p['stack']} (VNIC {p['vnic_gbps']} Gb/s)",
                    p["value"], m, "%", abs=5, source=p["where"])
    # trends: overhead falls as the stack slows and as messages grow
    by_stack = g.groupby("stack_us")["increase_pct"].max().sort_index()
    ctx.compare("fig2-trend-stack", "largest increase falls as the stack latency grows (1 = holds)", 1.0,
                float(all(np.diff(by_stack.to_numpy()) < 0)), source="§3: the faster the network stack, the higher the overhead",
                note=", ".join(f"{s:g} µs: {v:.1f}%" for s, v in by_stack.items()))
    small, large = g[g["msg_bytes"] == min(msgs)], g[g["msg_bytes"] == max(msgs)]
    shrink = small.groupby("stack_us")["increase_pct"].mean() > large.groupby("stack_us")["increase_pct"].mean()
    ctx.compare("fig2-trend-size", "smallest messages suffer more than the largest, every stack (1 = holds)", 1.0,
                float(shrink.all()), source="§3: smaller message sizes are affected most")
    ctx.table("Fig. 2: completion-time increase (%) by VNIC, stack, message and packet size (mean over seeds)", g)
    closed = 12 * 2 * 1.5 / (23 * (1.25 + 1.5 + 2 * 256 * 8 / 100e3))
    alt3 = overhead(256, 256, 70, 1.25, leaves=3)["increase_pct"]
    alt_d = overhead(256, 256, 70, 1.25, fabric_delay_us=0.3)["increase_pct"]
    ctx.note("Fig. 2, the 1.25 µs stack: our largest increase (256 B messages) follows a hand calculation. Under one "
             "switch each of a VM's 23 blocking messages costs L + 1.5 µs + two 256 B serializations at 100 Gb/s; "
             "spread, 12 of them cross the spine and pay two more switches (+3 µs each), so the increase is "
             f"12·2·1.5 / (23·(1.25 + 1.54)) = {closed * 100:.1f}%, below the study's 68%. The same formula gives "
             "23% at 5.25 µs and 12% at 11.75 µs, both on the study's figures, so the structure agrees and the "
             "1.25 µs gap is a fixed per-crossing cost the study does not state: 0.3 µs of propagation on each "
             f"leaf-spine link (about 60 m of fibre; `--fabric-delay-us 0.3`) gives {alt_d:.1f}%, and spreading over "
             f"3 switches instead of 2 gives {alt3:.1f}%. We keep the stated setting (no link delay, 2 switches).")
