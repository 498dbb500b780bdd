"""Study 002 (ATRO): in-network-aggregation All-Reduce throughput of ATRO (joint topology + routing, exact MILP)
against ARO, PARING and SPAR on the fixed Leaf-Spine and Fat-Tree (Figs 3, 4, 5), the solve times, the
sensitivity of the baselines to where the aggregators are, and ATRO's plan simulated in the flow engine."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
from scipy.stats import t as student_t  # noqa: E402

from fabricsim.ina import Instance, atro  # noqa: E402
from fabricsim.ina.simulate import simulate  # noqa: E402
from fabricsim.report.figures import PAPER_STYLE, WIDTH_IN, lines  # noqa: E402
from fabricsim.sweep import SweepSpec  # noqa: E402

TITLE = "Study 002: ATRO, joint topology and routing for in-network-aggregation All-Reduce (Figs 3, 4, 5)"
HERE = Path(__file__).resolve().parent
TASK = "fabricsim.ina:sweep_task"
WEIGHT = 2
"""This study's rough share of a quick run's time against 1 for a light study: `reproduce all` starts it early."""
BASELINES = ("aro", "paring", "spar")
FIXED = ("leaf-spine", "fat-tree")


def _sweep(ctx, name: str, base: dict, seeds: int, grid: dict, points: list[dict]) -> pd.DataFrame:
    spec = SweepSpec(name=name, base=base, task=TASK, seeds=seeds, grid=grid, points=points)
    df = ctx.sweep(spec, base).frame()
    for k, v in base.items():  # a run shared with another sweep lists only that sweep's parameters
        df[k] = df[k].fillna(v).astype(type(v)) if k in df else v
    return df


def _runs(ctx, name: str, seeds: int, grid: dict) -> pd.DataFrame:
    """ATRO once per grid point, every baseline on both fabrics with `seeds` repetitions."""
    base = {"workers": 90, "aggregators": 4}
    a = _sweep(ctx, f"{name}_atro", base, 1, grid, [{"scheme": "atro", "topology": "reconfigurable"}])
    b = _sweep(ctx, f"{name}_baselines", base, seeds, grid,
               [{"scheme": s, "topology": t} for s in BASELINES for t in FIXED])
    df = pd.concat([a, b], ignore_index=True)
    df["label"] = [("ATRO" if s == "atro" else f"{s.upper()} {t}") for s, t in zip(df["scheme"], df["topology"])]
    return df


def reproduce(ctx) -> None:
    paper = json.loads((HERE / "paper.json").read_text())
    seeds = 5 if ctx.quick else 30
    # Figs 4-5 score only ATRO's points and the placement table scores nothing: their baselines (the curves
    # beside ATRO's, 420 and 60 runs at 5 seeds) take fewer repetitions in the quick setting.
    curves = 1 if ctx.quick else seeds
    table_seeds = 2 if ctx.quick else seeds
    ctx.note(f"Baselines: {seeds} random repetitions each in Fig. 3 ({'quick mode; the study uses 30' if ctx.quick else 'as the study'}"
             + (f"; {curves} in the unscored baseline curves of Figs 4-5 and {table_seeds} in the placement table"
                if ctx.quick else "") + "). "
             "ATRO is deterministic and runs once. Throughput: the common per-worker rate r, Gb/s. Readings of what "
             "the study leaves open are in fabricsim/ina/baselines.py; the main one: which 4 switches support INA "
             "for ARO and PARING is not stated, we draw them at random among all 20 (see the sensitivity table).")
    fig3(ctx, paper, seeds)
    fig4(ctx, paper, curves)
    fig5(ctx, paper, curves)
    placement(ctx, table_seeds)
    crosscheck(ctx)


def fig3(ctx, paper: dict, seeds: int) -> None:
    df = _runs(ctx, "fig3", seeds, {})
    ctx.setting("ATRO: exact MILP (HiGHS), 1 run; the default instance (90 workers, 4 aggregators)")
    at = float(df[df["scheme"] == "atro"]["throughput_gbps"].iloc[0])
    at_row = df[df["scheme"] == "atro"].iloc[0]
    ctx.compare("fig3-atro", "ATRO throughput, default instance (90 workers, 4 aggregators)", paper["fig3_atro_gbps"]["value"],
                at, "Gb/s", rel=0.0, source=paper["fig3_atro_gbps"]["where"],
                note=f"proven optimal: {bool(at_row['optimal'])}, solved in {at_row['solve_time_s']:.2f} s")
    rows = []
    ctx.setting(f"{seeds} random repetitions of each baseline against ATRO's 1 exact run; the default instance")
    for p in paper["fig3_improvement"]:
        sub = df[(df["scheme"] == p["scheme"]) & (df["topology"] == p["topology"])]["throughput_gbps"]
        mean = float(sub.mean())
        rows.append({"scheme": p["scheme"], "topology": p["topology"], "paper_gbps": 50.0 / p["factor"], "ours_gbps": mean,
                     "ours_min": float(sub.min()), "ours_max": float(sub.max()), "paper_factor": p["factor"],
                     "ours_factor": at / mean, "atro_ge_every_seed": bool((sub <= at + 1e-9).all())})
        ctx.compare(f"fig3-{p['scheme']}-{p['topology']}", f"{p['scheme'].upper()} on {p['topology']}: mean throughput "
                    f"(paper: 50 Gb/s / {p['factor']})", 50.0 / p["factor"], mean, "Gb/s", rel=0.25,
                    source=paper["fig3_where"], note=f"ATRO / mean = {at / mean:.2f}× (paper {p['factor']}×)")
        ctx.compare(f"fig3-ge-{p['scheme']}-{p['topology']}", f"ATRO ≥ {p['scheme'].upper()} on {p['topology']} on "
                    f"every seed (1 = holds)", 1.0, float(rows[-1]["atro_ge_every_seed"]), source="Fig. 3")
    aro = df[df["scheme"] == "aro"]
    ctx.compare("fig3-aro-proven", "ARO runs proven optimal (fraction)", 1.0, float(aro["optimal"].astype(bool).mean()),
                source="exact MILP, CP-SAT", reference="optimizer", note=f"slowest ARO solve {aro['solve_time_s'].max():.2f} s")
    ctx.table("Fig. 3: mean throughput per scheme and fabric (Gb/s), the study's (50 / improvement factor) beside ours",
              pd.DataFrame(rows))
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 4.2), layout="constrained")
    labels = [f"{s.upper()}\n{t}" for s in BASELINES for t in FIXED]
    data = [df[(df["scheme"] == s) & (df["topology"] == t)]["throughput_gbps"].to_numpy() for s in BASELINES for t in FIXED]
    parts = ax.violinplot(data, showmeans=True)
    parts["cmeans"].set_color("red")
    ax.axhline(at, color="tab:green", lw=2, label=f"ATRO (reconfigurable) {at:g} Gb/s")
    papers = {(p["scheme"], p["topology"]): 50.0 / p["factor"] for p in paper["fig3_improvement"]}
    ax.scatter(range(1, len(labels) + 1), [papers[(s, t)] for s in BASELINES for t in FIXED],
               label="study's mean (50 Gb/s / its improvement factor)", **PAPER_STYLE)
    ax.set_xticks(range(1, len(labels) + 1), labels)
    ax.set_ylabel("throughput per worker (Gb/s)")
    ax.set_title("Fig. 3: in-network All-Reduce throughput, 90 workers, 4 aggregators")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize="small")
    ctx.figure(fig, "fig3_violins", f"Throughput of the baselines over {seeds} seeds (violins, red: mean) against "
               "ATRO's proven optimum (green line); diamonds: the study's means (50 Gb/s over its improvement factors).")


def _summary(df: pd.DataFrame, x: str) -> pd.DataFrame:
    g = df.groupby(["label", x], sort=False)["throughput_gbps"]
    out = g.agg(["mean", "std", "count"]).reset_index()
    out["throughput_gbps_mean"] = out["mean"]
    # Student t half-width, as report.stats.ci95 (1.96 would draw 5-seed bands too narrow).
    t = [student_t.ppf(0.975, n - 1) if n > 1 else 0.0 for n in out["count"]]
    out["throughput_gbps_ci95"] = t * out["std"].fillna(0) / out["count"].pow(0.5)
    return out


def _versus(ctx, paper: dict, seeds: int, fig: str, x: str, values: list[int], rel: float) -> pd.DataFrame:
    """One of Figs 4/5: every scheme against `x`; ATRO's proven optimum beside the study's stated points."""
    df = _runs(ctx, fig, seeds, {x: values})
    at = df[df["scheme"] == "atro"].set_index(x)
    fixed = "4 aggregators" if x == "workers" else "90 workers"
    ctx.setting(f"ATRO: exact MILP (HiGHS), 1 run per point; {len(values)} numbers of {x} ({fixed})")
    for p in paper[f"{fig}_atro_gbps"]:
        r = at.loc[p[x]]
        ctx.compare(f"{fig}-atro-{p[x]}", f"ATRO, {p[x]} {x}, {fixed}", p["gbps"], float(r["throughput_gbps"]), "Gb/s",
                    rel=rel, source=p.get("where", paper.get(f"{fig}_where", "")),
                    note=f"proven optimal: {bool(r['optimal'])}, {r['solve_time_s']:.2f} s")
    s = _summary(df, x)
    ctx.table(f"Fig. {fig[-1]}: mean throughput (Gb/s) against the number of {x}", s[["label", x, "mean", "std", "count"]])
    ctx.figure(lines(s, x, "throughput_gbps", "label", title=f"Fig. {fig[-1]}: throughput vs {x} ({fixed})",
                     xlabel=f"number of {x}", ylabel="throughput per worker (Gb/s)",
                     paper={p[x]: p["gbps"] for p in paper[f"{fig}_atro_gbps"]}, paper_label="paper: ATRO (§IV-B)"),
               f"{fig}_{x}", f"Mean throughput against the number of {x}, 95% CI shaded; ATRO proven optimal at every "
               "point; diamonds: the ATRO values the study states.")
    return at


def fig4(ctx, paper: dict, seeds: int) -> None:
    at = _versus(ctx, paper, seeds, "fig4", "workers", [60, 65, 70, 75, 80, 85, 90], 0.0)
    ctx.note("Fig. 4: with A aggregators and η ports, a single-load (100 Gb/s) plan exists exactly up to "
             "A·(η − 2) + 1 workers (n + A − 1 aggregator inputs on A·(η − 1) ports): 89 for A = 4, η = 24. So 85 "
             f"workers still get 100 Gb/s (ours: {float(at.loc[85]['throughput_gbps']):g}); the study's text only "
             "places the drop 'beyond 80'. Every ATRO point here is proven optimal by the MILP.")


def fig5(ctx, paper: dict, seeds: int) -> None:
    at = _versus(ctx, paper, seeds, "fig5", "aggregators", [2, 3, 4, 5, 6, 7, 8], 0.05)
    ctx.note("Fig. 5 vs Fig. 3: the study states both 50 Gb/s (Fig. 3, §IV-B1) and 'about 33 Gb/s' (§IV-B3) for the "
             "same instance, 90 workers and 4 aggregators. The MILP proves 50 Gb/s optimal (load 1 is infeasible, "
             "load 2 feasible, and the evaluator accepts the plan); 33.3 Gb/s is what 2 aggregators reach (ours: "
             f"{float(at.loc[2]['throughput_gbps']):.1f}), so the text most likely reads its figure one step off.")
    ctx.table("ATRO solve times (s), HiGHS, one thread (the study: 2–330 s with Gurobi)",
              at.reset_index()[["workers", "aggregators", "throughput_gbps", "optimal", "solve_time_s"]])


def placement(ctx, seeds: int) -> None:
    """Where the 4 INA switches sit changes ARO and PARING a lot; the study does not say."""
    base = {"workers": 90, "aggregators": 4}
    df = _sweep(ctx, "placement", base, seeds, {"agg_placement": ["random", "spine", "tor"]},
                [{"scheme": s, "topology": t} for s in ("aro", "paring") for t in FIXED])
    s = df.groupby(["scheme", "topology", "agg_placement"])["throughput_gbps"].mean().unstack("agg_placement").reset_index()
    ctx.table("Sensitivity: mean throughput (Gb/s) of ARO and PARING by which switches support INA "
              "(random among all 20, spines/cores+aggregation only, ToRs only)", s)
    ctx.note("The study's Leaf-Spine means (ARO 13.3, PARING 7.1 Gb/s) fall inside the range this unstated choice "
             "spans: PARING with ToR aggregators gives 100/14 = 7.1 Gb/s (the PS's leaf uplinks carry the 14 "
             "flows), ARO with spine aggregators about 10 Gb/s, with random aggregators about 20 Gb/s, because some "
             "draws put an aggregator next to the PS.")


def crosscheck(ctx) -> None:
    sol = atro(Instance())
    sim = simulate(sol.plan)
    ctx.setting("flow engine, 1 run of ATRO's default plan (deterministic)")
    ctx.compare("crosscheck-flow", "ATRO default plan simulated as pipelined reduce + broadcast flows (flow engine)",
                sol.throughput_gbps, sim.rate_gbps, "Gb/s", rel=0.02, source="the optimizer's claimed rate", reference="optimizer",
                note=f"{sim.messages} messages, simulated {sim.completion_s * 1e3:.3f} ms")
