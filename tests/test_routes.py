"""Routing properties on random small instances (hypothesis), read from the engine's own switch-hop counts.

A single-packet message crosses exactly the switches of its route, so the record's hop histogram is the route's
length: a loop, or a detour, would show as more switches than the closed form below allows.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from fabricsim import scenario_from_dict
from fabricsim.engine import run


def switch_hops(topology: dict, src: str, dst: str) -> int:
    sc = scenario_from_dict({"topology": topology, "messages": [{"name": "m", "src": src, "dst": dst, "size": 1000}]},
                            "x.toml")
    rec = run(sc)
    assert rec.complete and len(rec.hops) == 1
    return next(iter(rec.hops))


@settings(max_examples=30, deadline=None)
@given(st.sampled_from([2, 4, 6]), st.data())
def test_fat_tree3_routes_are_up_down_and_minimal(k, data):
    # Same edge switch: 1 switch; same pod: edge, aggregation, edge (3); else up to a core and down (5).
    half = k // 2
    pick = st.tuples(st.integers(0, k - 1), st.integers(0, half - 1), st.integers(0, half - 1))
    (p, e, i), (q, f, j) = data.draw(pick), data.draw(pick)
    if (p, e, i) == (q, f, j):
        return
    want = 1 if (p, e) == (q, f) else 3 if p == q else 5
    assert switch_hops({"kind": "fat_tree3", "k": k, "rate": "10Gbps"}, f"p{p}.e{e}.h{i}", f"p{q}.e{f}.h{j}") == want


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(2, 5), min_size=2, max_size=3), st.data())
def test_torus_dimension_order_takes_the_shorter_way_around(dims, data):
    # Routers crossed = the source's router + the ring distance min(|d|, k - |d|) in every dimension.
    a = [data.draw(st.integers(0, k - 1)) for k in dims]
    b = [data.draw(st.integers(0, k - 1)) for k in dims]
    if a == b:
        return
    want = 1 + sum(min(abs(x - y), k - abs(x - y)) for x, y, k in zip(a, b, dims))
    name = lambda c: "r" + ".".join(map(str, c)) + ".h0"  # noqa: E731
    assert switch_hops({"kind": "torus", "dims": dims, "rate": "10Gbps"}, name(a), name(b)) == want


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 2), st.integers(2, 4), st.integers(1, 2), st.data())
def test_dragonfly_minimal_routes_take_at_most_one_global_link(p, a, h, data):
    # Full dragonfly (g = a·h + 1): same router 1, same group 2 (one local link), else local, global, local: at
    # most 4 routers, exactly 2 when the source router holds the global link to the destination's router.
    g = a * h + 1
    pick = st.tuples(st.integers(0, g - 1), st.integers(0, a - 1), st.integers(0, p - 1))
    (g1, r1, i1), (g2, r2, i2) = data.draw(pick), data.draw(pick)
    if (g1, r1, i1) == (g2, r2, i2):
        return
    n = switch_hops({"kind": "dragonfly", "p": p, "a": a, "h": h, "rate": "10Gbps"},
                    f"g{g1}.r{r1}.h{i1}", f"g{g2}.r{r2}.h{i2}")
    if (g1, r1) == (g2, r2):
        assert n == 1
    elif g1 == g2:
        assert n == 2
    else:
        assert 2 <= n <= 4


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 10**6))
def test_valiant_routes_are_loop_free_and_at_most_two_minimal_routes(seed):
    # Valiant: minimal to a router of a third group, then minimal on; loops cut. Each minimal leg crosses at
    # most 4 routers and the two share the intermediate router: at most 7, and never fewer than minimal (2).
    sc = scenario_from_dict({"seed": seed, "topology": {"kind": "dragonfly", "p": 1, "a": 3, "h": 1,
                                                        "rate": "10Gbps", "routing": "valiant"},
                             "messages": [{"name": "m", "src": "g0.r0.h0", "dst": "g2.r1.h0", "size": 1000}]}, "x.toml")
    rec = run(sc)
    n = next(iter(rec.hops))
    assert rec.complete and 2 <= n <= 7
