"""`fabricsim ina`: in-network-aggregation All-Reduce throughput by ATRO or a baseline, or the check of a given plan."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..errors import UserError
from ._common import SEED, deprecated_option, echo_json, seeds_option

FABRICS = ["reconfigurable", "leaf-spine", "fat-tree"]
"""The fabrics `ina --fabric` names."""


def _evaluate_file(path: str, as_json: bool, simulate: bool) -> None:
    from ..ina import Plan, evaluate

    try:
        doc = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise UserError(f"{path}: cannot read the plan ({e})") from None
    docs = [(p.get("seed"), p) for p in doc["plans"]] if isinstance(doc, dict) and "plans" in doc else [(None, doc)]
    out = []
    for seed, d in docs:
        try:
            plan = Plan.from_json(d)
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise UserError(f"{path}: not a plan: missing or malformed field {e}") from None
        ev = evaluate(plan)
        row = {"seed": seed, "feasible": ev.feasible, "throughput_gbps": ev.rate_gbps, "max_load": ev.max_load,
               "links_used": ev.links_used, "active_aggregators": ev.active_aggregators, "problems": ev.problems}
        if simulate and ev.feasible:
            from ..ina.simulate import simulate as sim

            row["simulated_gbps"] = sim(plan).rate_gbps
        out.append(row)
    if as_json:
        echo_json(out[0] if len(out) == 1 else {"plans": out})
    else:
        for r in out:
            head = f"seed {r['seed']}: " if r["seed"] is not None else ""
            if r["feasible"]:
                sim_txt = f", simulated {r['simulated_gbps']:.2f} Gb/s" if "simulated_gbps" in r else ""
                click.echo(f"{head}feasible: {r['throughput_gbps']:.2f} Gb/s per worker (max link load "
                           f"{r['max_load']}, {r['links_used']} links, {r['active_aggregators']} aggregators active)"
                           f"{sim_txt}")
            else:
                click.echo(f"{head}infeasible: " + "; ".join(r["problems"][:5]))
    if not all(r["feasible"] for r in out):
        raise click.exceptions.Exit(1)


@click.command("ina")
@click.option("--scheme", type=click.Choice(["atro", "aro", "paring", "spar"]), default="atro", show_default=True,
              help="atro: joint topology + routing optimum (exact MILP); aro: optimal routing on the fixed fabric "
                   "after random placement; paring: Steiner-tree overlay placement and routing; spar: greedy ToR "
                   "aggregators over shortest paths.")
@click.option("--fabric", type=click.Choice(FABRICS), default=None, metavar="NAME",
              help="A built-in fabric: reconfigurable (patch panel, ATRO only; the default for atro); leaf-spine (10 "
                   "spines, 10 leaves × 14 hosts) or fat-tree (4 cores, 8 aggregation, 8 edges × 12 hosts) for the "
                   "baselines (default leaf-spine).")
@deprecated_option("--topology", lambda v: {"fabric": v}, lambda v: f"--fabric {v}", type=click.Choice(FABRICS))
@click.option("--ina-workers", "ina_workers", type=click.IntRange(min=1), default=90, show_default=True,
              help="INA workers n: the hosts that send reduction flows (one PS besides).")
@deprecated_option("--workers", lambda v: {"ina_workers": v}, lambda v: f"--ina-workers {v}",
                   why="here (everywhere else it counts processes)", type=click.IntRange(min=1))
@click.option("--aggregators", type=click.IntRange(min=0), default=4, show_default=True,
              help="Switches that support INA.")
@click.option("--switches", type=click.IntRange(min=1), default=20, show_default=True,
              help="Switches of the reconfigurable cluster (the fixed fabrics have 20).")
@click.option("--ports", type=click.IntRange(min=2), default=24, show_default=True, help="Ports per switch η.")
@click.option("--link-gbps", type=click.FloatRange(min=0, min_open=True), default=100.0, show_default=True,
              help="Capacity b of every link, Gb/s.")
@click.option("--layers", type=click.IntRange(min=1), default=5, show_default=True,
              help="Layer limit L (loop-freedom): at most L switches on any path to the PS.")
@click.option("--seed", type=SEED, default=1, show_default=True,
              help="The first seed S (of the random placement of the baselines).")
@seeds_option("Random repetitions K of a baseline, seeds S..S+K-1; ATRO runs once (seed S).", default=30)
@click.option("--time-limit-s", type=click.FloatRange(min=0, min_open=True), default=60.0, show_default=True,
              help="Solver time limit per run (ATRO, ARO); a run that hits it reports its gap.")
@click.option("--solver", type=click.Choice(["highs", "cpsat"]), default=None,
              help="MILP solver (default: highs for ATRO, cpsat for ARO).")
@click.option("--objective", type=click.Choice(["levels", "min-load"]), default=None,
              help="levels: prove max link load 1, 2, … infeasible in turn (ATRO default); min-load: one MILP "
                   "minimizing the max load (ARO default).")
@click.option("--rate-levels", type=click.IntRange(min=1), default=None,
              help="The study's quantized sending rates b·k/N with this N (ARO uses N = 100 by default).")
@click.option("--agg-placement", type=click.Choice(["random", "tor", "spine"]), default="random", show_default=True,
              help="Which switches support INA for ARO and PARING (the study does not say; SPAR picks ToRs itself).")
@click.option("--plan", "plan_file", default=None, metavar="FILE.json",
              help="Write the plan (topology links, segments, per-worker paths) here; one per seed for baselines.")
@click.option("--evaluate", "eval_file", default=None, metavar="FILE.json",
              help="Instead of optimizing, check the plan(s) in FILE (from --plan, or hand-written) and report "
                   "their throughput; exit 1 if one is infeasible.")
@click.option("--simulate", is_flag=True,
              help="Also run the plan as pipelined reduce + broadcast flows in the flow engine and report the rate.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def ina(scheme, fabric, ina_workers, aggregators, switches, ports, link_gbps, layers, seed, seeds, time_limit_s, solver,
        objective, rate_levels, agg_placement, plan_file, eval_file, simulate, as_json) -> None:
    """Parameter-server All-Reduce with in-network aggregation (study 002, ATRO).

    Every worker sends one reduction flow; aggregator switches reduce what they receive into one flow; the PS
    multicasts the result back. Throughput is the common per-worker rate r (Gb/s): the link capacity over the
    most flows any link carries (both directions counted).

    \b
    Examples:
      fabricsim ina                                  # ATRO, the study's default instance (50 Gb/s, proven)
      fabricsim ina --scheme aro --fabric fat-tree --seeds 30 --json
      fabricsim ina --ina-workers 80 --plan atro80.json && fabricsim ina --evaluate atro80.json --simulate
    """
    if eval_file:
        _evaluate_file(eval_file, as_json, simulate)
        return
    from ..ina import study

    topology = fabric or ("reconfigurable" if scheme == "atro" else "leaf-spine")
    opts = dict(first_seed=seed, workers=ina_workers, aggregators=aggregators, switches=switches, ports=ports, link_gbps=link_gbps,
                layers=layers, solver=solver, objective=objective, time_limit_s=time_limit_s, rate_levels=rate_levels,
                agg_placement=agg_placement)
    quiet = as_json or scheme == "atro" or seeds == 1
    try:
        if quiet:
            res = study(scheme, topology, seeds, **opts)
        else:
            from rich.progress import Progress

            with Progress(transient=True) as bar:
                task = bar.add_task(f"{scheme} on {topology}", total=seeds)
                res = study(scheme, topology, seeds, progress=lambda d, t: bar.update(task, completed=d), **opts)
    except ValueError as e:
        raise UserError(f"fabricsim ina: {e}") from None
    except RuntimeError as e:
        raise UserError(f"fabricsim ina: {e} (raise --time-limit-s)") from None
    sols = res.pop("_solutions")
    if simulate:
        from ..ina.simulate import simulate as sim

        res["simulated_gbps"] = [sim(s.plan).rate_gbps for s in sols]
    if plan_file:
        plans = [{"seed": s, **x.plan.to_json()} for s, x in zip(res["seeds"], sols)]
        Path(plan_file).write_text(json.dumps(plans[0] if len(plans) == 1 else {"plans": plans}, indent=1))
        click.echo(f"wrote {'the plan' if len(plans) == 1 else f'{len(plans)} plans'} to {plan_file}", err=True)
    if as_json:
        echo_json(res)
        return
    th = res["throughput_per_seed_gbps"]
    proof = ""
    if res["optimal"] is not None:
        proof = ", proven optimal" if res["optimal"] else f", gap ≤ {res['gap'] * 100:.1f}%"
    if scheme == "atro":
        click.echo(f"ATRO: {th[0]:.2f} Gb/s per worker (max link load {res['max_load']}, {res['links_used']} switch "
                   f"links, {res['active_aggregators']} aggregators active{proof}) in {res['solve_time_s']:.2f} s")
    else:
        lo, hi = min(th), max(th)
        click.echo(f"{scheme.upper()} on {topology}: mean {res['throughput_gbps']:.2f} Gb/s per worker over "
                   f"{len(th)} seeds (min {lo:.2f}, max {hi:.2f}{proof}) in {res['solve_time_s']:.2f} s")
    if simulate:
        click.echo("simulated (flow engine): " + ", ".join(f"{x:.2f}" for x in res["simulated_gbps"]) + " Gb/s")
