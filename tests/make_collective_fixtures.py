"""Regenerate crates/fabricsim-core/tests/fixtures/collectives/*.json: the Python collective generators' DAGs,
lowered to the wire form, that the Rust `workload::collectives::expand` must reproduce exactly.

Run from the repository root with the project's interpreter: `.venv/bin/python tests/make_collective_fixtures.py`.
Every case builds a scenario on a small leaf-spine fabric from `fabricsim.collectives.patterns` (the calls the
studies make through `collectives.run`, plus more orders, sizes and rank sets), lowers it with
`Scenario.to_wire()` (names to indices, the same lowering as every run), and stores the Rust spec next to the
lowered rows. A message row is [src, src_nic, dst, dst_nic, size_bytes, deps, sent_deps, barriers]; a barrier
row is [deps, barriers]; packet and header bytes are the same for every message of a case.
"""

from __future__ import annotations

import json
from pathlib import Path

import fabricsim
from fabricsim.collectives.patterns import all_gather, all_reduce, all_to_all, reduce_scatter, ring_all_reduce, split_barriers

OUT = Path(__file__).resolve().parent.parent / "crates/fabricsim-core/tests/fixtures/collectives"
TOPOLOGY = {"kind": "leaf_spine", "racks": 2, "leaves_per_rack": 2, "hosts_per_rack": 4, "nics_per_host": 4,
            "spines": 2, "host_rate": "100Gbps", "fabric_rate": "100Gbps"}
MIB = 1 << 20

# Rank sets: one NIC per host, several NICs of one host, and a 12-rank set whose two-digit phase and rank
# numbers exercise the generators' name-sorted dependency lists ("p10…" sorts before "p2…").
RANKS: dict[str, list[tuple[str, int]]] = {
    "n2": [("h0", 0), ("h5", 2)],
    "n3": [("h1", 0), ("h1", 2), ("h6", 1)],
    "n4": [("h0", 0), ("h1", 0), ("h4", 0), ("h5", 0)],
    "n4_multinic": [("h0", 1), ("h0", 3), ("h2", 1), ("h7", 3)],
    "n6": [("h0", 0), ("h0", 2), ("h3", 1), ("h4", 0), ("h6", 3), ("h7", 2)],
    "n12": [(f"h{h}", nic) for nic in (0, 2) for h in (0, 2, 4, 6, 1, 3)],
}
SMALL = ("n2", "n3", "n4", "n4_multinic", "n6")
ORDERS = (None, "sent", "delivered", "parallel")
AR_ORDERS = ((None, None), ("sent", "sent"), ("delivered", "delivered"), ("parallel", "parallel"), ("sent", "delivered"),
             ("delivered", "parallel"), ("parallel", "sent"), (None, "delivered"), ("delivered", None))


def lower(items: list[dict]) -> dict:
    """The wire RunSpec (dict) of a generator's output on TOPOLOGY."""
    msgs, bars = split_barriers(items)
    return fabricsim.scenario_from_dict({"topology": TOPOLOGY, "messages": msgs, "barriers": bars}).to_wire()


def case(label: str, fn, ranks: str, size: int, packet: int, header: int, spec: dict, **kw) -> dict:
    eps = RANKS[ranks]
    items = fn(eps, size, packet=packet, header=header, tag=f"g0.i{eps[0][1]}.{fn.__name__}", **kw)
    wire = lower(items)
    index = {n["name"]: i for i, n in enumerate(wire["network"]["nodes"])}
    messages = wire["messages"]
    assert all(m["packet_bytes"] == packet and m["header_bytes"] == header and m["start_ps"] == 0 and m["delay_ps"] == 0
               and m["path"] is None for m in messages), label
    spec = {**spec, "ranks": [[index[h], nic] for h, nic in eps], "size_bytes": size, "packet_bytes": packet,
            "header_bytes": header}
    args = ", ".join(f"{k}={v!r}" for k, v in kw.items())
    return {
        "label": label,
        "python": f"{fn.__name__}({ranks}, {size}, packet={packet}, header={header}{', ' if args else ''}{args})",
        "spec": spec,
        "messages": [[m["src"], m["src_nic"], m["dst"], m["dst_nic"], m["size_bytes"], m["deps"], m["sent_deps"], m["barriers"]]
                     for m in messages],
        "barriers": [[b["deps"], b["barriers"]] for b in wire["barriers"]],
    }


def shift_cases(fn, kind: str, ranks: str, orders=ORDERS, barriers=(False, True)) -> list[dict]:
    out = []
    for barrier in barriers:
        for order in orders:
            kw = {"barrier": barrier, **({"order": order} if order else {})}
            spec = {"kind": kind, "algorithm": "shift", "barrier": barrier, **({"order": order} if order else {})}
            packet, header = (1024, 0) if order != "delivered" else (4096, 64)
            out.append(case(f"{kind} shift order={order} barrier={barrier}", fn, ranks, MIB, packet, header, spec, **kw))
    return out


def all_reduce_cases(ranks: str, orders=AR_ORDERS, barriers=(False, True)) -> list[dict]:
    out = []
    for barrier in barriers:
        for order, ag_order in orders:
            kw = {"barrier": barrier, **({"order": order} if order else {}), **({"ag_order": ag_order} if ag_order else {})}
            spec = {"kind": "all_reduce", "algorithm": "shift", **kw}
            out.append(case(f"all_reduce shift order={order} ag_order={ag_order} barrier={barrier}", all_reduce, ranks,
                            10 * MIB + 3, 1024, 0, spec, **kw))
    return out


def ring_cases(fn, kind: str, ranks: str) -> list[dict]:
    n = len(RANKS[ranks])
    # Divisible, not divisible, and smaller than n (every step carries max(1, size // n) = 1 byte).
    return [case(f"{kind} ring size={size}", fn, ranks, size, packet, header, {"kind": kind, "algorithm": "ring"})
            for size, packet, header in ((MIB, 1024, 0), (1_000_003, 9000, 0), (n - 1 if n > 2 else 1, 256, 48))]


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("*.json"):
        old.unlink()
    files: dict[str, list[dict]] = {}
    for r in SMALL:
        files[f"all_to_all_shift_{r}"] = shift_cases(all_to_all, "all_to_all", r)
        files[f"all_gather_shift_{r}"] = shift_cases(all_gather, "all_gather", r)
        files[f"all_reduce_shift_{r}"] = all_reduce_cases(r)
        files[f"all_reduce_ring_{r}"] = ring_cases(ring_all_reduce, "all_reduce", r)
        files[f"reduce_scatter_ring_{r}"] = ring_cases(reduce_scatter, "reduce_scatter", r)
    files["all_to_all_shift_n12"] = shift_cases(all_to_all, "all_to_all", "n12", orders=(None, "delivered"), barriers=(False,))
    files["all_reduce_shift_n12"] = (all_reduce_cases("n12", orders=AR_ORDERS[:4], barriers=(False,))
                                     + all_reduce_cases("n12", orders=(("delivered", "delivered"),), barriers=(True,)))
    files["all_reduce_ring_n12"] = ring_cases(ring_all_reduce, "all_reduce", "n12")[:1]
    total = 0
    for name, cases in files.items():
        lines = ",\n".join(json.dumps(c, separators=(",", ":")) for c in cases)
        (OUT / f"{name}.json").write_text(f'{{"generator":"tests/make_collective_fixtures.py","cases":[\n{lines}\n]}}\n')
        total += sum(len(c["messages"]) for c in cases)
    print(f"{len(files)} files, {sum(len(c) for c in files.values())} cases, {total} messages -> {OUT}")


if __name__ == "__main__":
    main()
