"""In-network aggregation (study 002): ATRO's proven optima against closed forms and the study's figures, the plan
evaluator on hand-built plans, the baselines' fabrics and closed-form corner cases, and the CLI."""

from __future__ import annotations

import json

import pytest

from fabricsim.cli import main
from fabricsim.ina import Instance, Plan, aro, atro, evaluate, fabric, paring, solve, spar


def _tiny(segments, links=None, kinds=None):
    """3 workers on common switch s, an aggregator a beside it, the PS on s."""
    kinds = kinds or {"w0": "worker", "w1": "worker", "w2": "worker", "ps": "ps", "s": "cs", "a": "agg"}
    links = links or [("w0", "s"), ("w1", "s"), ("w2", "s"), ("ps", "s"), ("s", "a")]
    ports = {n: (1 if k in ("worker", "ps") else 8) for n, k in kinds.items()}
    return Plan(kinds, ports, links, segments, 100.0)


# --- ATRO: closed forms and the study's numbers ---------------------------------------------------------------

@pytest.mark.parametrize("workers, gbps", [(89, 100.0), (90, 50.0)])
def test_atro_default_threshold(workers, gbps):
    """Load 1 needs every flow reduced into one: n + A − 1 aggregator inputs on A·(η − 1) ports, so
    n ≤ A·(η − 2) + 1 = 89 for A = 4, η = 24; 90 workers (the study's Fig. 3) need load 2: 50 Gb/s."""
    sol = atro(Instance(workers=workers))
    assert sol.throughput_gbps == pytest.approx(gbps)
    assert sol.optimal, "the levels search must prove the optimum"
    assert sol.gap == 0.0
    assert evaluate(sol.plan).feasible


def test_atro_fig4_and_fig5_points():
    """Fig. 4: 100 Gb/s up to 80 workers with 4 aggregators; Fig. 5: 100 Gb/s with 6 aggregators at 90 workers."""
    for inst in (Instance(workers=60), Instance(workers=80), Instance(workers=90, aggregators=6)):
        sol = atro(inst)
        assert (sol.throughput_gbps, sol.optimal) == (100.0, True), inst


def test_atro_small_instance_both_solvers_agree():
    """A = 2, η = 6: load 1 up to 2·4 + 1 = 9 workers, so 9 → 100 Gb/s and 10 → 50 Gb/s, by HiGHS and CP-SAT."""
    for solver in ("highs", "cpsat"):
        for n, gbps in ((9, 100.0), (10, 50.0)):
            sol = atro(Instance(workers=n, switches=4, aggregators=2, ports=6, layers=4), solver=solver)
            assert (sol.throughput_gbps, sol.optimal) == (gbps, True), (solver, n)


def test_atro_without_aggregators_is_one_flow_per_worker_into_the_ps():
    """No aggregator: all n flows end on the PS's single link, so r = b / n."""
    sol = atro(Instance(workers=7, switches=3, aggregators=0, ports=8, layers=3))
    assert sol.throughput_gbps == pytest.approx(100.0 / 7)
    assert sol.optimal


def test_atro_min_load_objective_matches_levels():
    sol = atro(Instance(workers=90, aggregators=2), objective="min-load")
    assert sol.throughput_gbps == pytest.approx(100.0 / 3) and sol.optimal


@pytest.mark.parametrize("levels, gbps", [(100, 50.0), (3, 100.0 / 3), (7, 300.0 / 7)])
def test_atro_quantized_rates(levels, gbps):
    """QSR: rate b·k/N is feasible iff the max load τ ≤ N/k, so the best is b·floor(N/τ)/N with τ = 2."""
    sol = atro(Instance(), rate_levels=levels)
    assert sol.throughput_gbps == pytest.approx(gbps)


def test_atro_plan_respects_ports_layers_and_round_trips(tmp_path):
    sol = atro(Instance())
    plan = sol.plan
    deg: dict[str, int] = {}
    for a, b in plan.links:
        deg[a] = deg.get(a, 0) + 1
        deg[b] = deg.get(b, 0) + 1
    assert max(deg.get(n, 0) for n, k in plan.kinds.items() if k in ("cs", "agg")) <= 24
    assert sum(k == "worker" for k in plan.kinds.values()) == 90
    assert all(p[-1] == "ps" for p in plan.worker_paths().values())
    # layers strictly fall along a whole path to the PS, so it crosses at most L = 5 switches
    assert max(len([n for n in p if plan.kinds[n] in ("cs", "agg")]) for p in plan.worker_paths().values()) <= 5
    f = tmp_path / "plan.json"
    plan.save(f)
    again = evaluate(Plan.from_json(json.loads(f.read_text())))
    assert again.feasible and again.rate_gbps == sol.throughput_gbps


def test_instance_rejects_bad_fields():
    with pytest.raises(ValueError, match="aggregators"):
        Instance(aggregators=21)
    with pytest.raises(ValueError, match="workers"):
        Instance(workers=480)


# --- the evaluator on hand-built plans ---------------------------------------------------------------------------

def test_evaluator_no_aggregation_three_flows_share_the_ps_link():
    ev = evaluate(_tiny([["w0", "s", "ps"], ["w1", "s", "ps"], ["w2", "s", "ps"]]))
    assert ev.feasible and ev.max_load == 3 and ev.rate_gbps == pytest.approx(100 / 3)


def test_evaluator_aggregator_reduces_three_flows_into_one():
    """The s–a link carries 3 flows up (and 3 broadcasts down): load 3; the PS link carries 1."""
    ev = evaluate(_tiny([["w0", "s", "a"], ["w1", "s", "a"], ["w2", "s", "a"], ["a", "s", "ps"]]))
    assert ev.feasible and ev.max_load == 4 and ev.rate_gbps == pytest.approx(25.0)


@pytest.mark.parametrize("segments, why", [
    ([["w0", "s", "ps"], ["w1", "s", "ps"]], "w2"),                              # a worker sends nothing
    ([["w0", "s", "ps"], ["w1", "s", "ps"], ["w2", "s"]], "w2"),                 # a flow ends on a common switch
    ([["w0", "s", "a"], ["w1", "s", "ps"], ["w2", "s", "ps"]], "a"),             # the aggregator emits nothing
    ([["w0", "a", "ps"], ["w1", "s", "ps"], ["w2", "s", "ps"]], "w0"),           # a hop over no link
])
def test_evaluator_rejects_bad_plans(segments, why):
    ev = evaluate(_tiny(segments))
    assert not ev.feasible
    assert any(why in p for p in ev.problems), ev.problems


def test_evaluator_rejects_port_overuse():
    plan = _tiny([["w0", "s", "ps"], ["w1", "s", "ps"], ["w2", "s", "ps"]])
    plan.ports["s"] = 3
    ev = evaluate(plan)
    assert not ev.feasible and any("port" in p for p in ev.problems)


# --- baselines ------------------------------------------------------------------------------------------------

def test_fabrics_as_the_study():
    ls, ft = fabric("leaf-spine"), fabric("fat-tree")
    assert (len(ls.switches), len(ls.hosts), len(ls.links)) == (20, 140, 100)
    assert (len(ft.switches), len(ft.hosts), len(ft.links)) == (20, 96, 32)
    # 6:1 oversubscription: every one of the 8 edge switches has 12 hosts over 2 uplinks (8 × 12 = 96 hosts).
    edges = [i for i, t in enumerate(ft.tor) if t]
    per_edge = [(ft.hosts.count(e), sum(e in link for link in ft.links)) for e in edges]
    assert per_edge == [(12, 2)] * 8, "6:1: 12 hosts over 2 uplinks per edge"


@pytest.mark.parametrize("topology", ["leaf-spine", "fat-tree"])
def test_baselines_without_aggregators_put_every_flow_on_the_ps_link(topology):
    """No INA: the PS's host link carries all 90 flows, r = 100/90 Gb/s; ARO's QSR (N = 100) rounds to 1 Gb/s."""
    fab = fabric(topology)
    assert paring(fab, 90, 0, 1).throughput_gbps == pytest.approx(100 / 90)
    assert spar(fab, 90, 0, 1).throughput_gbps == pytest.approx(100 / 90)
    assert aro(fab, 90, 0, 1, rate_levels=None).throughput_gbps == pytest.approx(100 / 90)
    assert aro(fab, 90, 0, 1).throughput_gbps == pytest.approx(1.0)


@pytest.mark.parametrize("topology", ["leaf-spine", "fat-tree"])
def test_atro_beats_every_baseline(topology):
    best = atro(Instance()).throughput_gbps
    for seed in (1, 2, 3):
        a = solve("aro", topology, seed)
        assert a.optimal, "CP-SAT proves ARO's instances"
        assert a.extra["exact_rate_gbps"] == pytest.approx(100.0 / a.extra["max_load"])
        for sol in (a, solve("paring", topology, seed), solve("spar", topology, seed)):
            assert evaluate(sol.plan).feasible
            assert sol.throughput_gbps <= best + 1e-9, (sol.scheme, seed)


def test_baselines_are_deterministic_per_seed():
    a, b = solve("spar", "fat-tree", 7), solve("spar", "fat-tree", 7)
    assert a.plan.to_json() == b.plan.to_json()


def test_solve_rejects_mismatched_topology():
    with pytest.raises(ValueError, match="topology"):
        solve("atro", "fat-tree")
    with pytest.raises(ValueError, match="topology"):
        solve("aro", "reconfigurable")


# --- CLI ------------------------------------------------------------------------------------------------------

def test_cli_json_and_plan(tmp_path, capsys):
    plan = tmp_path / "p.json"
    assert main(["ina", "--json", "--plan", str(plan)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["throughput_gbps"], out["optimal"], out["gap"]) == (50.0, True, 0.0)
    doc = json.loads(plan.read_text())
    assert {"links", "paths", "segments"} <= set(doc) and len(doc["paths"]) == 90
    assert main(["ina", "--evaluate", str(plan), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["throughput_gbps"] == 50.0


def test_cli_ina_workers_and_the_deprecated_workers(tmp_path, capsys):
    """Load 1 (the full 100 Gb/s) needs every flow reduced into one: n + A − 1 aggregator inputs on A·(η − 1)
    ports, so n ≤ A·(η − 2) + 1 = 89 with A = 4, η = 24; 90 workers need load 2 (50 Gb/s)."""
    plan = tmp_path / "p.json"
    assert main(["ina", "--ina-workers", "89", "--json", "--plan", str(plan)]) == 0
    cap = capsys.readouterr()
    assert json.loads(cap.out)["throughput_gbps"] == 100.0 and cap.err == f"wrote the plan to {plan}\n"
    assert len(json.loads(plan.read_text())["paths"]) == 89
    assert main(["ina", "--workers", "90", "--json"]) == 0  # the old name still works, with a warning
    cap = capsys.readouterr()
    assert json.loads(cap.out)["throughput_gbps"] == 50.0
    assert cap.err == ("fabricsim ina: --workers is deprecated here (everywhere else it counts processes); use "
                       "--ina-workers 90\n")
    assert main(["ina", "--ina-workers", "80", "--workers", "80"]) == 2
    assert capsys.readouterr().err == "fabricsim ina: give --ina-workers or its old name --workers, not both\n"
    assert main(["ina", "--help"]) == 0
    help_text = capsys.readouterr().out
    assert "--ina-workers" in help_text and "--workers " not in help_text


def test_cli_baseline_seeds(capsys):
    assert main(["ina", "--scheme", "spar", "--fabric", "fat-tree", "--seeds", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["seeds"] == [1, 2, 3] and len(out["throughput_per_seed_gbps"]) == 3
    assert out["throughput_gbps"] == pytest.approx(sum(out["throughput_per_seed_gbps"]) / 3)
    # --seed S: seeds S..S+K-1, each run as the same seed does in a longer range.
    assert main(["ina", "--scheme", "spar", "--fabric", "fat-tree", "--seed", "2", "--seeds", "2", "--json"]) == 0
    two = json.loads(capsys.readouterr().out)
    assert two["seeds"] == [2, 3] and two["throughput_per_seed_gbps"] == out["throughput_per_seed_gbps"][1:]


def test_cli_bad_input_is_one_line_exit_2(tmp_path, capsys):
    assert main(["ina", "--scheme", "atro", "--fabric", "leaf-spine"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "topology" in err[0]
    bad = tmp_path / "bad.json"
    bad.write_text('{"kinds": {}}')
    assert main(["ina", "--evaluate", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(bad) in err[0]


def test_cli_evaluate_infeasible_plan_exits_1(tmp_path, capsys):
    f = tmp_path / "p.json"
    _tiny([["w0", "s", "ps"], ["w1", "s", "ps"]]).save(f)
    assert main(["ina", "--evaluate", str(f)]) == 1
    assert "infeasible" in capsys.readouterr().out
