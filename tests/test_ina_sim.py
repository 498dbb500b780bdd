"""The flow-level simulation of in-network-aggregation plans reaches the evaluator's claimed rate."""

import pytest

from fabricsim.ina.atro import Instance, atro
from fabricsim.ina.model import Plan, evaluate
from fabricsim.ina.simulate import simulate


@pytest.fixture(scope="module")
def atro_plan():
    sol = atro(Instance())
    assert sol.throughput_gbps == pytest.approx(50.0)
    return sol.plan


def _plan(kinds, links, segments):
    ports = {n: (1 if k in ("worker", "ps") else 8) for n, k in kinds.items()}
    plan = Plan(kinds=kinds, ports=ports, links=links, segments=segments, link_gbps=100.0)
    assert evaluate(plan).feasible, evaluate(plan).problems
    return plan


def _star_no_agg():
    """3 workers on one common switch, straight to the PS: the switch–PS link carries 3 segments."""
    kinds = {"w0": "worker", "w1": "worker", "w2": "worker", "cs0": "cs", "ps": "ps"}
    links = [("w0", "cs0"), ("w1", "cs0"), ("w2", "cs0"), ("cs0", "ps")]
    return _plan(kinds, links, [[w, "cs0", "ps"] for w in ("w0", "w1", "w2")])


def _star_agg():
    """3 workers on one aggregator that reduces them into a single flow to the PS: every link carries 1."""
    kinds = {"w0": "worker", "w1": "worker", "w2": "worker", "agg0": "agg", "ps": "ps"}
    links = [("w0", "agg0"), ("w1", "agg0"), ("w2", "agg0"), ("agg0", "ps")]
    return _plan(kinds, links, [[w, "agg0"] for w in ("w0", "w1", "w2")] + [["agg0", "ps"]])


def _pass_through():
    """w2's flow passes through agg0 untouched on its way to the PS next to agg0's output: load 2 there."""
    kinds = {"w0": "worker", "w1": "worker", "w2": "worker", "cs0": "cs", "agg0": "agg", "ps": "ps"}
    links = [("w0", "agg0"), ("w1", "agg0"), ("w2", "cs0"), ("cs0", "agg0"), ("agg0", "ps")]
    segs = [["w0", "agg0"], ["w1", "agg0"], ["w2", "cs0", "agg0", "ps"], ["agg0", "ps"]]
    return _plan(kinds, links, segs)


def _two_way():
    """The cs0–cs1 link carries w0's flow up to agg1 one way and agg0's output down to the PS the other:
    load 2 as the evaluator counts it, but only 1 per direction without the broadcast. Other links carry 1."""
    kinds = {"w0": "worker", "w1": "worker", "cs0": "cs", "cs1": "cs", "agg0": "agg", "agg1": "agg",
             "ps": "ps"}
    links = [("w0", "cs0"), ("cs0", "cs1"), ("cs1", "agg1"), ("agg1", "agg0"), ("w1", "agg0"),
             ("cs1", "agg0"), ("cs0", "ps")]
    segs = [["w0", "cs0", "cs1", "agg1"], ["agg1", "agg0"], ["w1", "agg0"], ["agg0", "cs1", "cs0", "ps"]]
    return _plan(kinds, links, segs)


@pytest.mark.parametrize("broadcast", [False, True])
def test_atro_default_plan_reaches_claim(atro_plan, broadcast):
    r = simulate(atro_plan, broadcast=broadcast)
    assert r.claimed_gbps == pytest.approx(50.0)
    assert r.rate_gbps == pytest.approx(50.0, rel=0.02)
    assert r.reduce_gbps == pytest.approx(50.0, rel=0.02)
    if broadcast:
        assert r.broadcast_gbps == pytest.approx(50.0, rel=0.02)
    assert r.bidirectional_links == []  # ATRO's layers route every link one way only
    assert r.messages == len(atro_plan.segments) * r.chunks * (2 if broadcast else 1)
    assert r.overall_gbps <= r.rate_gbps * 1.001  # the pipeline fill only costs


@pytest.mark.parametrize("make, closed_form",
                         [(_star_no_agg, 100 / 3), (_star_agg, 100.0), (_pass_through, 50.0)])
@pytest.mark.parametrize("broadcast", [False, True])
def test_hand_plans_match_closed_form(make, closed_form, broadcast):
    plan = make()
    assert evaluate(plan).rate_gbps == pytest.approx(closed_form)
    r = simulate(plan, chunks=32, broadcast=broadcast)
    assert r.claimed_gbps == pytest.approx(closed_form)
    assert r.rate_gbps == pytest.approx(closed_form, rel=0.02)


def test_two_way_link_needs_the_broadcast_to_reach_the_evaluators_load():
    plan = _two_way()
    assert evaluate(plan).rate_gbps == pytest.approx(50.0)
    red = simulate(plan, chunks=32, broadcast=False)
    assert red.bidirectional_links == [("cs0", "cs1")]
    assert red.rate_gbps == pytest.approx(100.0, rel=0.02)  # one segment per direction
    full = simulate(plan, chunks=32, broadcast=True)
    assert full.rate_gbps == pytest.approx(50.0, rel=0.02)  # reductions + broadcasts: 2 per direction


def test_completion_times_are_ordered_and_counted(atro_plan):
    r = simulate(atro_plan, chunks=8, chunk_bytes=1 << 16)
    assert len(r.reduce_done_s) == len(r.broadcast_done_s) == 8
    assert r.reduce_done_s == sorted(r.reduce_done_s)
    assert r.broadcast_done_s == sorted(r.broadcast_done_s)
    # a chunk goes up to the PS before it comes back down
    assert all(b > a for a, b in zip(r.reduce_done_s, r.broadcast_done_s))
    assert r.completion_s == pytest.approx(r.broadcast_done_s[-1])


def test_infeasible_plan_and_bad_arguments_are_rejected():
    plan = _star_no_agg()
    with pytest.raises(ValueError, match="chunks"):
        simulate(plan, chunks=1)
    broken = Plan(kinds=plan.kinds, ports=plan.ports, links=plan.links, segments=plan.segments[:2])
    with pytest.raises(ValueError, match="infeasible"):
        simulate(broken)
