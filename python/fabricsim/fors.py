"""Throughput of a synchronized, phased all-to-all on FT(2;M0,M1) under failures: the FORS study's model, in general.

A scheme is a schedule plus a routing: `fors` (FORS Algorithm 1 with the FORS router), `ftree` and `minhop`
(linear shift with OpenSM's destination-based routings) and `ftree-ar` (linear shift with InfiniBand-style
adaptive routing over OpenSM's static routes, in the packet engine). Every phase, every active server sends one message to its phase destination over its
route; a barrier separates the phases (the study's tree barrier), and the next phase starts a fixed
synchronization overhead after it. Phase times come from the flow-level engine (max-min sharing of the links
that flows collide on; `ftree-ar` needs the packet engine's per-packet adaptive choice).

The overhead is calibrated once, on the no-failure case only: linear shift with Ftree is conflict-free, so its
completion time is phases × (transfer + path latency) + (phases − 1) × overhead, and `calibrate` solves the
overhead for a measured per-server throughput (the study's 141 Gb/s and setup are in `studies.fors`). Every
failure case then comes out of the model. A measurement calibrates the network it was made on only: on any other
fat-tree the overhead is an input (`evaluate`'s `overhead_s`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .topology.fattree import FatTree

SCHEMES = ("fors", "ftree", "minhop", "ftree-ar")


def active_servers(ft: FatTree, active: int) -> list[int]:
    """`active` servers spread as evenly as possible over the leaves (the study's DAQ uses 326 of 360 slots and
    does not say which; here every leaf gets ⌊active/M1⌋ and the first active mod M1 leaves one more)."""
    if not 2 <= active <= ft.servers:
        raise ValueError(f"active servers must be in 2..{ft.servers}, not {active}")
    base, extra = divmod(active, ft.m1)
    if base >= ft.m0 and extra:
        raise ValueError(f"{active} servers do not fit below {ft.m1} leaves of {ft.m0}")
    return [leaf * ft.m0 + a for leaf in range(ft.m1) for a in range(base + (leaf < extra))]


def stays_fat_tree(ft: FatTree) -> bool:
    """Whether the failures leave a fat-tree (only whole spines failed): OpenSM keeps Ftree then and falls back
    to Min-Hop otherwise (the study's §3.1)."""
    spines = {sp for _, sp in ft.failed}
    return all(not ft.alive(leaf, sp) for sp in spines for leaf in range(ft.m1))


def default_scheme(ft: FatTree) -> str:
    """The routing OpenSM uses by default with linear shift: `ftree` or `minhop`."""
    return "ftree" if stays_fat_tree(ft) else "minhop"


def scheme_routing(ft: FatTree, scheme: str, stats: dict | None = None):
    """(schedule, routing) of a scheme. For `ftree-ar` the routing is the static one OpenSM would compute (Ftree
    while the topology stays a fat-tree, Min-Hop otherwise, `stays_fat_tree`), which the engine's adaptive
    routing keeps unless another up-port has less queued."""
    from .routing import fors_route, ftree, minhop
    from .schedule import fors_schedule, linear_shift

    if scheme == "fors":
        routing = fors_route(ft, fors_schedule(ft), stats=stats)
        return [[(s, d) for s, d, _ in ph] for ph in routing], routing
    sched = linear_shift(ft.servers)
    if scheme == "ftree-ar":
        return sched, (ftree if stays_fat_tree(ft) else minhop)(ft, sched)
    if scheme == "ftree":
        return sched, ftree(ft, sched)
    if scheme == "minhop":
        return sched, minhop(ft, sched)
    raise ValueError(f"scheme must be one of {', '.join(SCHEMES)}, not '{scheme}'")


def max_flows_per_link(ft: FatTree, routing, active: set[int]) -> int:
    """The most flows any directed leaf–spine link carries in one phase (1 = conflict-free)."""
    worst = 0
    for phase in routing:
        use: dict[tuple[int, int, int], int] = {}
        for s, d, sp in phase:
            if sp < 0 or s not in active or d not in active:
                continue
            for key in ((0, ft.leaf(s), sp), (1, sp, ft.leaf(d))):
                use[key] = use.get(key, 0) + 1
        worst = max(worst, max(use.values(), default=0))
    return worst


def _build(ft: FatTree, schedule, routing, active: set[int], msg_bytes: int, packet_bytes: int, rate_bps: int,
           overhead_ps: int, adaptive: bool):
    """(scenario, workload): FT(2;M0,M1) without its failed links, one message per active pair and phase on its
    route (explicit path), a barrier after every phase, each phase starting `overhead_ps` after the last.
    O(phases × servers) numpy work; one engine call."""
    import numpy as np

    from .spec import scenario_from_dict
    from .workload import Workload

    P, m0, m1 = ft.servers, ft.m0, ft.m1
    leaf0, spine0 = P, P + m1
    nodes = [{"name": f"h{i}", "kind": "host"} for i in range(P)]
    sw: dict[str, Any] = {"kind": "switch"}
    if adaptive:
        sw = {"kind": "switch", "model": "input_buffered", "input_buffer": 128 * 1024}
    nodes += [{"name": f"leaf{l}", **sw} for l in range(m1)] + [{"name": f"spine{s}", **sw} for s in range(m0)]
    links = [{"a": f"h{h}", "b": f"leaf{ft.leaf(h)}", "rate": rate_bps} for h in range(P)]
    links += [{"a": f"leaf{l}", "b": f"spine{s}", "rate": rate_bps} for l in range(m1) for s in range(m0) if ft.alive(l, s)]
    sc = scenario_from_dict({"seed": 1, "topology": {"kind": "custom", "nodes": nodes, "links": links},
                             "routing": {"ecmp": "adaptive" if adaptive else "per_flow"}})
    wl = Workload(sc)
    prev = None
    for p, phase in enumerate(schedule):
        routes = routing[p] if routing is not None else [(s, d, None) for s, d in phase]
        rows = [(s, d, sp) for s, d, sp in routes if s in active and d in active]
        if not rows:
            continue
        src = np.fromiter((s for s, _, _ in rows), dtype=np.uint32, count=len(rows))
        dst = np.fromiter((d for _, d, _ in rows), dtype=np.uint32, count=len(rows))
        paths = None
        if routing is not None:
            paths = [[s, leaf0 + ft.leaf(s), d] if sp < 0 else [s, leaf0 + ft.leaf(s), spine0 + sp, leaf0 + ft.leaf(d), d]
                     for s, d, sp in rows]
        refs = wl.messages(src, dst, msg_bytes, packet_size=packet_bytes, after=prev,
                           delay_ps=overhead_ps if prev is not None else 0, paths=paths)
        prev = wl.barrier(refs)
    return sc, wl


@dataclass
class Evaluation:
    """One scheme on one failure scenario."""

    scheme: str
    f: int
    m: int
    phases: int
    max_flows_per_link: int
    completion_s: float
    throughput_per_server_gbps: float
    total_tbps: float
    active: int
    fidelity: str
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {**{k: v for k, v in self.__dict__.items() if k != "extra"}, **self.extra}


def evaluate(ft: FatTree, scheme: str, *, active: int | None = None, link_gbps: float = 200.0,
             msg_bytes: int = 1 << 20, packet_bytes: int = 4096, overhead_s: float = 0.0,
             fidelity: str | None = None) -> Evaluation:
    """Simulate one synchronized all-to-all (every phase of the scheme) and report per-server throughput
    (bytes each active server sends / completion). `active` servers take part (None = all, see
    `active_servers`); each phase after the first starts `overhead_s` after the previous one's barrier
    (`calibrate` fits it to a measured throughput)."""
    from .engine import run

    stats: dict[str, Any] = {}
    sched, routing = scheme_routing(ft, scheme, stats)
    act = active_servers(ft, ft.servers if active is None else active)
    aset = set(act)
    adaptive = scheme == "ftree-ar"
    fidelity = fidelity or ("packet" if adaptive else "flow")
    sc, wl = _build(ft, sched, routing, aset, msg_bytes, packet_bytes, int(link_gbps * 1e9), round(overhead_s * 1e12), adaptive)
    rec = run(sc, fidelity=fidelity, workload=wl).scalars
    t = rec["completion_ps"] * 1e-12
    per_server = (len(act) - 1) * msg_bytes * 8 / t / 1e9
    worst = max_flows_per_link(ft, routing, aset)
    return Evaluation(scheme, ft.f, ft.m, len(sched), worst, t, per_server, per_server * len(act) / 1e3, len(act),
                      fidelity, {"overhead_s": overhead_s, "msg_bytes": msg_bytes,
                                 **{f"routing_{k}": v for k, v in stats.items()}})


def calibrate(ft0: FatTree, *, target_gbps: float, active: int | None = None, link_gbps: float = 200.0,
              msg_bytes: int = 1 << 20, packet_bytes: int = 4096) -> float:
    """The per-phase synchronization overhead (s) for which linear shift + Ftree without failures gives
    `target_gbps` per server. Closed form from one overhead-free run: T(o) = T(0) + (phases − 1)·o."""
    if ft0.failed:
        raise ValueError("calibrate on the no-failure case only")
    ev = evaluate(ft0, "ftree", active=active, link_gbps=link_gbps, msg_bytes=msg_bytes, packet_bytes=packet_bytes,
                  overhead_s=0.0)
    if ev.max_flows_per_link > 1:
        raise RuntimeError("linear shift + Ftree is not conflict-free here; the closed form does not apply")
    want_t = (ev.active - 1) * msg_bytes * 8 / (target_gbps * 1e9)
    if want_t < ev.completion_s:
        raise ValueError(f"{target_gbps} Gb/s per server exceeds the overhead-free {ev.throughput_per_server_gbps:.1f}")
    return (want_t - ev.completion_s) / (ev.phases - 1)


def phase_multiplier(m0: int, m1: int, f: int) -> float:
    """Fig. 7: I = P_f / P_0, the FORS phase count with bandwidth reduction f over the count without."""
    from .schedule import fors_phases

    return fors_phases(m0, m1, f) / fors_phases(m0, m1, 0)

