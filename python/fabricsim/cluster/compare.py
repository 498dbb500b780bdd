"""Policy comparison over seeds (mean slowdown and mean JCT per policy with 95% CIs, and paired differences
against pack and spread on the same job streams), the cluster figures (JCT CDFs, slowdown bars, utilization
and fragmentation over time) and the runs' output files (`write_outputs`)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from ..sweep.stats import ci95
from .policies import POLICIES
from .sim import ClusterConfig, ClusterResult, load_fabric, simulate
from .solo import SoloCache

METRICS = ("mean_slowdown", "mean_jct_s", "p95_jct_s", "mean_wait_s", "utilization", "fragmentation", "mean_racks")
"""The per-run metrics `policy_frame` summarizes (mean and 95% CI half-width over seeds)."""


def run_policies(base: ClusterConfig, policies: Sequence[str] = POLICIES, seeds: Sequence[int] = range(1, 11),
                 progress: Callable[[str, int, int, int], None] | None = None) -> list[ClusterResult]:
    """Every policy x seed of `base` in this process, sharing one fabric and one solo-profile cache (the same
    seed draws the same jobs for every policy). `progress(policy, seed, done, total)` after each job."""
    fabric = load_fabric(base)
    solo = SoloCache(fabric, base.pattern, base.msg_bytes, base.interfaces, base.packet, fidelity=base.fidelity)
    out = []
    for seed in seeds:
        for p in policies:
            cfg = replace(base, policy=p, seed=int(seed))
            cb = (lambda d, n, p=p, s=seed: progress(p, s, d, n)) if progress else None
            out.append(simulate(cfg, fabric=fabric, solo=solo, progress=cb))
    return out


def runs_frame(results: Sequence[ClusterResult]):
    """One row per run: policy, seed and `ClusterResult.metrics()`."""
    import pandas as pd

    return pd.DataFrame([{"policy": r.config.policy, "seed": r.config.seed, **r.metrics()} for r in results])


def policy_frame(runs):
    """One row per policy (in POLICIES order): runs, and for each of METRICS its mean over seeds and the 95% CI
    half-width (Student t; NaN for one seed); with pack (spread) among the runs, `jct_vs_pack_pct`
    (`jct_vs_spread_pct`): the mean over seeds of the paired relative difference of mean JCT, in %, and its CI."""
    import pandas as pd

    rows = []
    order = [p for p in POLICIES if p in set(runs["policy"])] + sorted(set(runs["policy"]) - set(POLICIES))
    by = {p: g.set_index("seed") for p, g in runs.groupby("policy")}
    for p in order:
        g = by[p]
        row = {"policy": p, "runs": len(g)}
        for m in METRICS:
            if m in g:
                mean, _, half, _ = ci95(g[m].tolist())
                row[m] = mean
                row[f"{m}_ci95"] = half
        for ref in ("pack", "spread"):
            if ref in by and ref != p:
                common = g.index.intersection(by[ref].index)
                d = 100.0 * (g.loc[common, "mean_jct_s"] / by[ref].loc[common, "mean_jct_s"] - 1.0)
                mean, _, half, _ = ci95(d.tolist())
                row[f"jct_vs_{ref}_pct"] = mean
                row[f"jct_vs_{ref}_pct_ci95"] = half
        rows.append(row)
    return pd.DataFrame(rows)


def compare_policies(base: ClusterConfig, policies: Sequence[str] = POLICIES, seeds: Sequence[int] = range(1, 11),
                     progress: Callable[[str, int, int, int], None] | None = None):
    """The policy comparison: `policy_frame` of every policy x seed of `base` (default: all policies, seeds 1..10).
    The per-run metrics are in the frame's `attrs["runs"]`."""
    runs = runs_frame(run_policies(base, policies, seeds, progress))
    df = policy_frame(runs)
    df.attrs["runs"] = runs
    return df


def _errors(values: np.ndarray) -> np.ndarray:
    return np.nan_to_num(np.asarray(values, dtype=float), nan=0.0)


def draw_comparison(frame, path: str | Path | None = None, title: str | None = None):
    """The policy comparison figure: mean slowdown (left) and mean JCT (right) per policy, bars with 95% CI.
    Writes `path` and returns it, or returns the matplotlib Figure when `path` is None."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
    x = np.arange(len(frame))
    for ax, m, label in ((axes[0], "mean_slowdown", "mean slowdown (x solo)"), (axes[1], "mean_jct_s", "mean JCT (s)")):
        ax.bar(x, frame[m], yerr=_errors(frame[f"{m}_ci95"]), capsize=4, color="#4c72b0")
        ax.set_xticks(x, frame["policy"], rotation=0)
        ax.set_ylabel(label)
        ax.grid(axis="y", alpha=0.3)
    axes[0].axhline(1.0, color="k", lw=0.8, ls=":")
    runs = int(frame["runs"].max()) if len(frame) else 0
    fig.suptitle(title or f"placement policies: mean and 95% CI over {runs} seeds")
    fig.tight_layout()
    return _save(fig, path)


def draw_slowdown(frame, path: str | Path | None = None):
    """Mean slowdown per policy with its 95% CI (one panel)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 3.4))
    x = np.arange(len(frame))
    ax.bar(x, frame["mean_slowdown"], yerr=_errors(frame["mean_slowdown_ci95"]), capsize=4, color="#4c72b0")
    ax.set_xticks(x, frame["policy"])
    ax.axhline(1.0, color="k", lw=0.8, ls=":")
    ax.set_ylabel("mean slowdown (x solo)")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    return _save(fig, path)


def draw_jct_cdf(jobs, path: str | Path | None = None):
    """The empirical CDF of job completion times per policy (all seeds' jobs pooled), log time axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for p in [p for p in POLICIES if p in set(jobs["policy"])]:
        v = np.sort(jobs.loc[jobs["policy"] == p, "jct_s"].to_numpy())
        ax.step(v, np.arange(1, len(v) + 1) / len(v), where="post", label=p)
    ax.set_xscale("log")
    ax.set_xlabel("job completion time (s)")
    ax.set_ylabel("fraction of jobs")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return _save(fig, path)


def draw_timeline(timeline, path: str | Path | None = None, seed: int | None = None):
    """Utilization and fragmentation over time per policy (one seed: the first unless `seed`), as steps."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    seed = int(timeline["seed"].min()) if seed is None and "seed" in timeline else seed
    tl = timeline[timeline["seed"] == seed] if "seed" in timeline else timeline
    fig, axes = plt.subplots(2, 1, figsize=(7, 4.6), sharex=True)
    for p in [p for p in POLICIES if "policy" not in tl or p in set(tl["policy"])]:
        g = tl[tl["policy"] == p] if "policy" in tl else tl
        axes[0].step(g["t_s"], g["utilization"], where="post", label=p, lw=1)
        axes[1].step(g["t_s"], g["fragmentation"], where="post", label=p, lw=1)
        if "policy" not in tl:
            break
    axes[0].set_ylabel("utilization")
    axes[1].set_ylabel("fragmentation")
    axes[1].set_xlabel("time (s)" + (f", seed {seed}" if seed is not None else ""))
    for ax in axes:
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8, ncol=5, loc="lower center")
    fig.tight_layout()
    return _save(fig, path)


def write_outputs(results: Sequence[ClusterResult], out: str | Path) -> list[Path]:
    """Write the runs' per-job records (jobs.parquet and jobs.csv), timelines (timeline.csv), metrics
    (runs.csv) and figures (jct_cdf.png, slowdown.png, timeline.png) to the folder `out`. Returns the paths."""
    import pandas as pd

    d = Path(out)
    d.mkdir(parents=True, exist_ok=True)
    jobs = pd.concat([r.jobs for r in results], ignore_index=True)
    tl = pd.concat([r.timeline.assign(policy=r.config.policy, seed=r.config.seed) for r in results], ignore_index=True)
    runs = pd.DataFrame([{"policy": r.config.policy, "seed": r.config.seed, **r.metrics()} for r in results])
    paths = [d / "jobs.parquet", d / "jobs.csv", d / "timeline.csv", d / "runs.csv"]
    jobs.to_parquet(paths[0], index=False)
    jobs.to_csv(paths[1], index=False)
    tl.to_csv(paths[2], index=False)
    runs.to_csv(paths[3], index=False)
    paths.append(draw_jct_cdf(jobs, d / "jct_cdf.png"))
    paths.append(draw_slowdown(policy_frame(runs), d / "slowdown.png"))
    paths.append(draw_timeline(tl, d / "timeline.png"))
    return paths


def _save(fig, path):
    import matplotlib.pyplot as plt

    if path is None:
        return fig
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return Path(path)
