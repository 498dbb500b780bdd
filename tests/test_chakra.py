"""Chakra traces lowered onto fabrics: ASTRA-sim's example traces run at both fidelities, closed forms on an ideal
star, the send/recv ring equals the native ring, and malformed traces name the file and the node."""

from pathlib import Path

import numpy as np
import pytest

import fabricsim
from fabricsim import ScenarioError
from fabricsim.chakra import info, load, lower
from fabricsim.chakra.lower import summarize

from conftest import CHAKRA_TRACES

DATA = CHAKRA_TRACES / "astra-sim-examples"
"""ASTRA-sim's example traces; tests that read them are marked `shared` (skipped, with the reason, without them)."""
S = 1 << 20  # every example moves a 1 MiB buffer (comm_size 1048576)
P = 1024  # packet payload; links carry 1 byte per ns, so a packet takes 1024 ns


def star(n: int):
    """n hosts on one non-blocking switch, 8 Gb/s (1 B/ns), no propagation delay or switch latency."""
    return fabricsim.scenario_from_dict({
        "topology": {"kind": "custom", "nodes": [{"name": f"h{i}", "kind": "host"} for i in range(n)]
                     + [{"name": "s", "kind": "switch"}],
                     "links": [{"a": f"h{i}", "b": "s", "rate": "8Gbps"} for i in range(n)]},
    })


def prefix(kind: str, n: int) -> Path:
    return DATA / kind / f"{n}npus_1MB" / kind


def run_trace(pfx, n, fidelity="packet", **kw):
    sc = star(n)
    low = lower(load(pfx), sc, **kw)
    rec = fabricsim.run(sc, workload=low.workload, fidelity=fidelity)
    return low, rec


CASES = [(k, n) for k in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all") for n in (4, 8)]


@pytest.mark.shared
@pytest.mark.parametrize("fidelity", ["packet", "flow"])
@pytest.mark.parametrize("kind,n", CASES, ids=[f"{k}-{n}" for k, n in CASES])
def test_examples_match_the_closed_forms(kind, n, fidelity):
    # Ring steps carry S/n bytes; each step costs S/(nB) plus the store-and-forward of its last packet at the
    # switch (P/B): all-reduce 2(n−1) steps, all-gather and reduce-scatter n−1. The ring all-to-all (the
    # default, as ASTRA-sim) relays blocks of b = S/n: step k = 1..n−1 sends (n−k)·b to the next rank, so
    # Σ ((n−k)·b + P) = n(n−1)/2 · b + (n−1)·P = (n−1)/2 · S/B + (n−1)·P/B. Every step is link-disjoint on the
    # star and every size a whole number of packets, so all four are exact.
    low, rec = run_trace(prefix(kind, n), n, fidelity)
    step = S // n + P  # ns
    want_ns = {"all_reduce": 2 * (n - 1) * step, "all_gather": (n - 1) * step, "reduce_scatter": (n - 1) * step,
               "all_to_all": n * (n - 1) // 2 * (S // n) + (n - 1) * P}[kind]
    assert rec.completion_time_s * 1e9 == pytest.approx(want_ns, rel=1e-9)
    s = summarize(low, rec)
    assert [r["finish_s"] for r in s["ranks"]] == pytest.approx([rec.completion_time_s] * n)
    assert len(s["collectives"]) == 1 and s["collectives"][0]["bytes"] == S


@pytest.mark.shared
@pytest.mark.parametrize("fidelity", ["packet", "flow"])
@pytest.mark.parametrize("n", [4, 8])
def test_direct_all_to_all_matches_its_closed_form(n, fidelity):
    # Direct all-to-all sends S/n to every other rank at once: (n−1)/n · S/B of serialization on each uplink,
    # plus one packet's store-and-forward at the switch. The NIC interleaves its n−1 messages packet by packet,
    # so the downlinks see bursts: within 1%, not exact.
    _, rec = run_trace(prefix("all_to_all", n), n, fidelity, algorithm="direct")
    assert rec.completion_time_s * 1e9 == pytest.approx((n - 1) * (S // n) + P, rel=0.01)


@pytest.mark.shared
@pytest.mark.parametrize("fidelity", ["packet", "flow"])
def test_send_recv_ring_equals_the_native_ring(fidelity):
    # The send/recv trace is the same ring (14 steps of S/8 to the right neighbour, each waiting for the
    # previous receive) plus 7 COMP nodes of 7 us (the reductions of the reduce-scatter half), each on every
    # rank's critical path: native + 7 × 7 us exactly; the communication alone matches the native ring.
    _, native = run_trace(prefix("all_reduce", 8), 8, fidelity)
    low, custom = run_trace(DATA / "custom_ring_allreduce" / "8npus_1MB" / "custom_allreduce", 8, fidelity)
    assert custom.completion_time_s == pytest.approx(native.completion_time_s + 7 * 7e-6, rel=1e-9)
    busy = summarize(low, custom)["ranks"]
    assert all(r["compute_s"] == pytest.approx(49e-6) for r in busy)


@pytest.mark.shared
def test_info_counts_nodes_and_bytes():
    out = info(load(prefix("all_reduce", 4)))
    assert out["ranks"] == 4 and out["nodes"] == {"COMM_COLL_NODE": 4}
    assert out["collective_bytes"] == {"ALL_REDUCE": 4 * S}


def write_copy(tmp_path, src_prefix, n, edit):
    """Copy a trace through the writer, letting `edit(rank, columns)` change one rank's columns."""
    from fabricsim import _core

    tmp_path.mkdir(exist_ok=True)
    out = tmp_path / "t"
    for r in range(n):
        cols = _core.read_chakra(f"{src_prefix}.{r}.et")
        edit(r, cols)
        _core.write_chakra(f"{out}.{r}.et", cols)
    return out


@pytest.mark.shared
def test_malformed_traces_name_file_and_node(tmp_path):
    ring = DATA / "custom_ring_allreduce" / "8npus_1MB" / "custom_allreduce"

    def missing_dep(r, c):
        if r == 3 and len(c["data_deps"]):
            c["data_deps"] = c["data_deps"].copy()
            c["data_deps"][0] = 999_999

    with pytest.raises(ScenarioError, match=r"t\.3\.et: node \d+: depends on node 999999"):
        lower(load(write_copy(tmp_path / "a", ring, 8, missing_dep)), star(8))

    def drop_recvs(r, c):
        if r == 1:
            c["node_type"] = np.where(c["node_type"] == 6, 4, c["node_type"]).astype(c["node_type"].dtype)

    with pytest.raises(ScenarioError, match=r"without its receive"):
        lower(load(write_copy(tmp_path / "b", ring, 8, drop_recvs)), star(8))

    def gather(r, c):
        c["comm_type"] = np.full_like(c["comm_type"], 3)

    with pytest.raises(ScenarioError, match=r"t\.0\.et: node \d+: comm_type 3 \(GATHER\) is not modelled"):
        lower(load(write_copy(tmp_path / "c", prefix("all_reduce", 4), 4, gather)), star(4))

    with pytest.raises(ScenarioError, match="the trace has 8 ranks; the placement gives 4 endpoints"):
        lower(load(ring), star(4))


@pytest.mark.shared
def test_cycles_and_the_cli(tmp_path, capsys):
    import json

    from fabricsim.cli import main

    ring = DATA / "custom_ring_allreduce" / "8npus_1MB" / "custom_allreduce"

    def cycle(r, c):
        if r == 0:  # node 0 (the first send) now waits for the last node, which depends on it
            c["data_deps"] = np.concatenate([[c["id"][-1]], c["data_deps"]]).astype(np.uint64)
            c["data_dep_start"] = np.concatenate([[0], c["data_dep_start"][1:] + 1]).astype(np.uint32)

    bad = write_copy(tmp_path / "cyc", ring, 8, cycle)
    with pytest.raises(ScenarioError, match=r"node \d+: is on a dependency cycle"):
        lower(load(bad), star(8))
    fabric = tmp_path / "star.toml"
    fabric.write_text('[topology]\nkind = "custom"\nnodes = [' + ", ".join(f'{{name = "h{i}", kind = "host"}}' for i in range(8))
                      + ', {name = "s", kind = "switch"}]\nlinks = [' + ", ".join(f'{{a = "h{i}", b = "s", rate = "8Gbps"}}' for i in range(8)) + "]\n")
    assert main(["trace", "run", str(prefix("all_reduce", 8)), "--fabric", str(fabric), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["completion_time_s"] == pytest.approx(14 * (S // 8 + P) * 1e-9)
    assert {"ranks", "collectives", "events", "wall_s"} <= set(out) and len(out["ranks"]) == 8
    png, trace_json = tmp_path / "ring.png", tmp_path / "ring.json"
    assert main(["trace", "run", str(ring), "--fabric", str(fabric), "--timeline", str(png), "--perfetto", str(trace_json),
                 "--fidelity", "flow", "--json"]) == 0
    capsys.readouterr()
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and json.loads(trace_json.read_text())["traceEvents"]
    assert main(["trace", "info", str(ring), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["nodes"] == {"COMM_SEND_NODE": 112, "COMM_RECV_NODE": 112, "COMP_NODE": 56}
    assert main(["trace", "run", str(bad), "--fabric", str(fabric)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "t.0.et" in err and "dependency cycle" in err


def test_synth_then_run_from_the_cli(tmp_path, capsys):
    import json

    from fabricsim.cli import main

    out = tmp_path / "dptp"  # a folder: DIR/trace.{rank}.et and DIR/trace.comm_groups.json
    assert main(["trace", "synth", "dp-tp", "--out", str(out), "--ranks", "4", "--tp", "2", "--layers", "2",
                 "--hidden", "256", "--seq-len", "64"]) == 0
    assert json.loads((out / "trace.comm_groups.json").read_text()) == {"tp0": [0, 1], "tp1": [2, 3], "dp0": [0, 2], "dp1": [1, 3]}
    assert sorted(p.name for p in out.iterdir()) == ["trace.0.et", "trace.1.et", "trace.2.et", "trace.3.et",
                                                     "trace.comm_groups.json"]
    capsys.readouterr()
    # preset 4n_4r puts the 4 ranks on servers 1, 7, 13, 19: one per rack. `trace run DIR` reads DIR's one trace,
    # its communicators included; so does the full PREFIX, DIR/trace.
    for where in (out, out / "trace"):
        assert main(["trace", "run", str(where), "--fabric", "vela", "--placement", "preset:4n_4r", "--json"]) == 0
        res = json.loads(capsys.readouterr().out)
        assert [r["host"] for r in res["ranks"]] == ["h0", "h6", "h12", "h18"]
        assert {c["group"] for c in res["collectives"]} == {"tp0", "tp1", "dp0", "dp1"}


@pytest.mark.shared
@pytest.mark.parametrize("n", [4, 8])
def test_ring_all_gather_agrees_with_astra_sim(n):
    # ASTRA-sim's own finish time (shared/data/chakra/astra-sim-results.json, analytical backend, Ring_4chunks:
    # 50 GB/s and 500 ns per ring link, 4 chunks one at a time). Its backend reads 1 GB as 2^30 B, so the same
    # fabric in its units has 429.4967296 Gb/s links. All-gather has no reduction (which ASTRA-sim charges to
    # local memory and fabricsim does not), so the two models coincide: (n−1)·S/B + 4·(n−1)·0.5 µs, plus
    # ASTRA-sim's 10 ns endpoint delay per message and our per-packet store-and-forward, both under 0.3%.
    import json
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from astra_sim_compare import GIB, ring_fabric

    peer = json.loads((CHAKRA_TRACES / "astra-sim-results.json").read_text())
    want = next(r["finish_ns"] for r in peer if (r["workload"], r["npus"], r["config"], r["backend"])
                == ("all_gather", n, "Ring_4chunks", "congestion_aware"))
    sc = ring_fabric(n, GIB)
    low = lower(load(prefix("all_gather", n)), sc, chunks=4, chunks_in_flight=1, all_gather_size="block")
    got = fabricsim.run(sc, workload=low.workload).completion_time_s * 1e9
    assert got == pytest.approx(want, rel=0.003)


def test_placements_pack_spread_and_nics():
    from fabricsim.chakra.lower import placement_endpoints

    # examples/leaf_spine_16.toml: 2 racks of 8 hosts, h0..h7 on leaf0 and h8..h15 on leaf1.
    sc = fabricsim.load_scenario(Path(__file__).resolve().parents[1] / "examples" / "leaf_spine_16.toml")
    assert placement_endpoints(sc, 4, "pack") == [("h0", 0), ("h1", 0), ("h2", 0), ("h3", 0)]
    assert placement_endpoints(sc, 4, "spread") == [("h0", 0), ("h8", 0), ("h1", 0), ("h9", 0)]
    assert placement_endpoints(sc, 3, "nics:2") == [("h0", 0), ("h0", 1), ("h1", 0)]
    with pytest.raises(ScenarioError, match="the trace has 17 ranks; the placement gives 16 endpoints"):
        placement_endpoints(sc, 17, "spread")
