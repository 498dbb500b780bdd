"""`fabricsim nccl-tests` and fabricsim.nccl: NCCL's collectives as nccl-tests measures them (docs/guide/nccl.md).

Notation: n ranks on N servers of G GPUs; B_net a server's NIC bandwidth (rails x rate x nic_efficiency), B_nvl a
GPU's NVLink bandwidth (rate x NCCL's 20/25), both per direction, in bytes/s; S the size.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest

from fabricsim.cli import main
from fabricsim.collectives import read_fabric
from fabricsim.nccl import CALIBRATED, CALIBRATION_RUNS, busbw_factor, nccl_fabric, nccl_tests
from fabricsim.nccl import constants as K
from fabricsim.nccl.flow import ring_busbw_flow, ring_edges
from fabricsim.nccl.model import bandwidths, ring_busbw

BIG = 64 << 30
"""A size at which every latency term is below 0.1% of the time."""


def variant(name: str, servers: int | None = None, nvls: bool | None = None, **topology) -> object:
    """A built-in fabric with `servers` servers, NVLS on or off, or other [topology] values."""
    fab = read_fabric(name)
    topo = dict(fab.doc["topology"], **topology)
    if servers is not None:
        topo["servers_per_su"] = servers
    return replace(fab, doc={**fab.doc, "topology": topo}, nvls=fab.nvls if nvls is None else nvls,
                   name=f"{name}[{servers or ''}{'' if nvls is None else ' nvls=' + str(nvls)}{topology or ''}]")


def peak(fabric, algo: str = "auto", collective: str = "all_reduce", **kw) -> float:
    return nccl_tests(fabric, collective, minbytes=BIG, maxbytes=BIG, algo=algo, **kw).peak_busbw_GBps * 1e9


# ---- closed forms -------------------------------------------------------------------------------------------


def test_busbw_factors_are_nccl_tests():
    """nccl-tests doc/PERFORMANCE.md: all_reduce's busbw is algbw x 2(n-1)/n (a ring all-reduce sends 2(n-1)/n x S
    over every rank's link), all_gather's and reduce_scatter's (n-1)/n, alltoall's (n-1)/n."""
    for n in (2, 16, 64):
        assert busbw_factor("all_reduce", n) == pytest.approx(2 * (n - 1) / n)
        for c in ("all_gather", "reduce_scatter", "alltoall"):
            assert busbw_factor(c, n) == pytest.approx((n - 1) / n)


def test_ring_busbw_is_the_nic_or_nvlink_bound():
    """A ring per rail: every ring edge carries 2(n-1)/n x S/C (all-reduce, C channels); a server's NICs carry one
    edge of each channel out and one in, so B_net bounds busbw; a GPU's NVLink carries G-1 of a channel's G edges
    in a server (the channel enters on one GPU's NIC and leaves on another's), so B_nvl x G/(G-1) bounds it. At
    large sizes busbw is the smaller bound, for every collective that runs the ring."""
    for fab in ("h100_ib_2x8", "a100_roce_2x8", variant("h100_ib_2x8", nvlink_rate="400Gbps")):
        f = nccl_fabric(fab)
        b = bandwidths(f)
        want = min(b.net, b.nvlink * 8 / 7)
        assert ring_busbw(f, b) == pytest.approx(want)
        for c in ("all_reduce", "all_gather", "reduce_scatter"):
            assert peak(fab, "ring", c) == pytest.approx(want, rel=2e-3), (fab, c)
    f = nccl_fabric("h100_ib_2x8")
    assert bandwidths(f, 1.0).net == 8 * 400e9 / 8  # the ideal fabric: 8 x 400 Gb/s = 400 GB/s per server


def test_the_tree_can_beat_the_nic_bound_on_two_servers():
    """NCCL's double binary tree: on 2 servers each server sends S and receives S over its NICs (one half of the
    data up each tree, the other half down), so algbw <= B_net and busbw = 2(n-1)/n x algbw can reach
    2(n-1)/n x B_net, almost twice the ring's B_net; on N > 2 a server is an inner node of one tree and a leaf of
    the other, 2S each way, so busbw <= (n-1)/n x B_net. With NVLink ample (a chain GPU sends S up and S down,
    algbw <= B_nvl/2) and NCCL's 0.92 on the tree, busbw = 0.92 x those."""
    for servers in (2, 4):
        fab = variant("p4de_efa_2x8", servers, nvlink_rate="100Tbps")
        f = nccl_fabric(fab)
        n, b = f.ranks, bandwidths(f)
        bound = b.net if servers == 2 else b.net / 2
        assert peak(fab, "tree") == pytest.approx(K.TREE_ALLREDUCE_BW * 2 * (n - 1) / n * bound, rel=2e-3)
    # p4de: 4 x 100 Gb/s EFA (50 GB/s per instance): auto picks the tree and passes the ring's NIC bound.
    res = nccl_tests("p4de_efa_2x8", minbytes=1 << 30, maxbytes=1 << 30)
    assert res.rows[0]["algo"] == "tree" and res.peak_busbw_GBps > 50 * CALIBRATED["nic_efficiency"]["value"]


def test_nvls_reduces_in_the_switch():
    """NVLink SHARP: a GPU sends its S into the NVSwitch once and gets its 1/G shard back, then multicasts the
    shard and receives S: (1 + 1/G) S each way, so algbw = B_nvl x nvlsEfficiency x G/(G+1); across 2 servers
    (NVLSTree) the NICs carry S each way, algbw <= B_net. busbw = 2(n-1)/n x algbw."""
    f = nccl_fabric("h100_ib_2x8")
    b, n = bandwidths(f), f.ranks
    algbw = min(b.nvlink * K.NVLS_EFFICIENCY * 8 / 9, b.net)
    assert peak("h100_ib_2x8", "nvls") == pytest.approx(2 * (n - 1) / n * algbw, rel=2e-3)
    one = variant("h100_ib_2x8", 1)
    assert peak(one, "nvls") == pytest.approx(2 * 7 / 8 * b.nvlink * K.NVLS_EFFICIENCY * 8 / 9, rel=2e-3)
    with pytest.raises(ValueError, match="nvls = true"):
        nccl_tests("a100_roce_2x8", algo="nvls")


def test_small_sizes_cost_nccls_latency():
    """At 8 bytes the time is NCCL's latency (tuning.cc), a few tens of microseconds, not a bandwidth term."""
    res = nccl_tests("h100_ib_2x8", minbytes=8, maxbytes=8)
    assert 5 < res.rows[0]["time_us"] < 60


def test_sizes_are_nccl_tests_sizes():
    """-b 8 -e 8G -f 2: 8, 16, ..., 8 GiB (31 rows); all_gather moves whole floats per rank (16 ranks x 4 B)."""
    res = nccl_tests("h100_ib_2x8")
    assert [r["size_bytes"] for r in res.rows] == [8 << k for k in range(31)]
    ag = nccl_tests("h100_ib_2x8", "all_gather", minbytes=1000, maxbytes=1000)
    assert ag.rows[0]["size_bytes"] == 960 and ag.rows[0]["count"] == 240


def test_every_collective_gives_the_whole_table():
    """nccl-tests' default sweep -b 8 -e 8G -f 2 is 31 sizes for each of the four collectives (the table's speed is
    a benchmark's business, not a test's)."""
    for c in ("all_reduce", "all_gather", "reduce_scatter", "alltoall"):
        assert len(nccl_tests("h100_ib_2x8", c).rows) == 31


# ---- the flow engine checks the closed form -----------------------------------------------------------------


def test_ring_edges_are_rail_aligned_rings():
    """Each channel's ring visits every GPU once and crosses between servers on one rail (same GPU index)."""
    for nodes in (1, 2, 3, 4, 9):
        edges = ring_edges(nodes, 8)
        assert len(edges) == 8 * nodes * 8
        for c in range(8):
            ring = edges[c * nodes * 8:(c + 1) * nodes * 8]
            assert sorted(a for a, _ in ring) == sorted(z for _, z in ring) == sorted(
                (i, g) for i in range(nodes) for g in range(8))
            assert all(a[1] == z[1] for a, z in ring if a[0] != z[0])


@pytest.mark.parametrize("fab", ["h100_ib_2x8", "p4de_efa_2x8", variant("h100_ib_2x8", 3),
                                 variant("h100_ib_2x8", nvlink_rate="400Gbps")],
                         ids=["h100 NIC-bound", "p4de", "3 servers", "NVLink-bound"])
def test_the_flow_engine_finds_the_rings_bandwidth(fab):
    """One message per ring edge, all at once, in the flow engine on the fabric's links (at the model's effective
    rates): the last delivery gives the ring's busbw, which equals the closed form min(B_net, B_nvl x G/(G-1))."""
    f = nccl_fabric(fab)
    b = bandwidths(f)
    assert ring_busbw_flow(fab, b) == pytest.approx(ring_busbw(f, b), rel=0.01)
    res = nccl_tests(fab, algo="ring", fidelity="flow", minbytes=BIG, maxbytes=BIG)
    assert res.ring_busbw_GBps * 1e9 == pytest.approx(ring_busbw(f, b), rel=0.01)


# ---- published runs -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("run", CALIBRATION_RUNS, ids=[r["fabric"] for r in CALIBRATION_RUNS])
def test_calibration_fit_within_15_percent(run):
    """CALIBRATION (not a prediction): nic_efficiency was fitted on these three runs, so agreement is by
    construction; the test holds the fit: each run's peak busbw, as nccl-tests ran it, within 15%."""
    res = nccl_tests(run["fabric"], minbytes=run["minbytes"], maxbytes=run["maxbytes"], algo=run["algo"])
    assert res.peak_busbw_GBps == pytest.approx(run["busbw_GBps"], rel=0.15)


def test_the_calibrated_constant_is_the_fit():
    """CALIBRATION: the stored nic_efficiency is what fit_nic_efficiency finds on the three runs, to 3 digits."""
    from fabricsim.nccl.calibrate import fit_nic_efficiency

    assert round(fit_nic_efficiency(), 3) == CALIBRATED["nic_efficiency"]["value"]
    assert set(CALIBRATED) == {"nic_efficiency"} and len(CALIBRATED["nic_efficiency"]["fitted_on"]) == 3


HELD_OUT = [
    # (label, fabric, algo, -b, -e, measured peak busbw GB/s). Predictions: none of these was used to fit anything.
    ("AWS p5.48xlarge 2 x 8 H100, 32 x 100G EFA (awsome-distributed-training README)", "p5_efa_2x8", "auto", 8,
     16 << 30, 487.09),
    ("nccl-tests #309 first report: 2 x 8 H100, 8 x 400G IB, default algorithm", "h100_ib_2x8", "auto", 8,
     16 << 30, 469.21),
    ("nccl-tests #309 second report: 2 x 8 H100, 8 x 400G IB, default algorithm", "h100_ib_2x8", "auto", 1 << 20,
     8 << 30, 466.73),
    ("nccl-tests #309 first report: 4 x 8 H100, 8 x 400G IB, default algorithm", ("h100_ib_2x8", 4), "auto", 8,
     16 << 30, 365.84),
    ("nccl-tests #309 gj-aion: 8 x 8 H100, 8 x 400G IB, NCCL_MIN_CTAS=24", ("h100_ib_2x8", 8), "auto", 1 << 20,
     8 << 30, 391.37),
]


@pytest.mark.parametrize("label, fab, algo, lo, hi, measured", HELD_OUT, ids=[h[0][:40] for h in HELD_OUT])
def test_held_out_prediction_within_15_percent(label, fab, algo, lo, hi, measured):
    """PREDICTION: published runs not used in the fit, peak busbw within 15%."""
    fabric = variant(*fab) if isinstance(fab, tuple) else fab
    res = nccl_tests(fabric, minbytes=lo, maxbytes=hi, algo=algo)
    assert res.peak_busbw_GBps == pytest.approx(measured, rel=0.15), label


# ---- the command line ---------------------------------------------------------------------------------------


def test_the_table_is_nccl_tests(capsys):
    assert main(["nccl-tests", "--fabric", "h100_ib_2x8", "-b", "1K", "-e", "1M", "-f", "4", "--algo", "ring"]) == 0
    out = capsys.readouterr().out.splitlines()
    head = [ln for ln in out if ln.startswith("#")]
    rows = [ln.split() for ln in out if not ln.startswith("#")]
    assert "size" in head[4] and "busbw" in head[4] and "algo/proto" in head[4] and "(us)" in head[5]
    assert [int(r[0]) for r in rows] == [1024, 4096, 16384, 65536, 262144, 1048576]
    assert all(len(r) == 9 and r[2:5] == ["float", "sum", "-1"] and r[8].startswith("ring/") for r in rows)
    assert all(float(r[7]) == pytest.approx(float(r[6]) * 1.875, abs=0.02) for r in rows)
    assert any(ln.startswith("# calibrated: nic_efficiency = ") for ln in out)


def test_json_has_rows_and_the_calibrated_constants(capsys):
    assert main(["nccl-tests", "--fabric", "p4de_efa_2x8", "-b", "8", "-e", "8G", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["rows"]) == 31
    assert set(doc["rows"][0]) >= {"size_bytes", "time_us", "algbw_GBps", "busbw_GBps", "algo", "proto"}
    assert doc["calibrated"]["nic_efficiency"]["value"] == CALIBRATED["nic_efficiency"]["value"]
    assert doc["peak_busbw_GBps"] == max(r["busbw_GBps"] for r in doc["rows"])
    r = doc["rows"][-1]
    assert r["algbw_GBps"] == pytest.approx(r["size_bytes"] / r["time_us"] / 1e3)


@pytest.mark.parametrize("text, n", [("8", 8), ("1K", 1024), ("8G", 8 << 30), ("8GiB", 8 << 30), ("10MB", 10**7),
                                     ("64m", 64 << 20)])
def test_sizes_read_as_nccl_tests_reads_them(capsys, text, n):
    assert main(["nccl-tests", "--fabric", "h100_ib_2x8", "-b", text, "-e", text, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rows"][0]["size_bytes"] == n // 4 * 4


@pytest.mark.parametrize("args, says", [
    (["-b", "1G", "-e", "1K"], "-b/--minbytes"),
    (["-b", "1Q"], "'--minbytes'"),
    (["-e", "0"], "'--maxbytes'"),
    (["-f", "1"], "'--stepfactor'"),
    (["--collective", "all_gather", "--algo", "tree"], "--algo tree"),
    (["--fabric", "a100_roce_2x8", "--algo", "nvls"], "--algo nvls"),
    (["--collective", "alltoall", "--algo", "ring"], "--algo ring"),
    (["--fabric", "vela"], "topology.kind"),
    (["--fabric", "missing.toml"], "missing.toml"),
    (["--collective", "broadcast"], "'--collective'"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, args, says):
    argv = ["nccl-tests", *([] if "--fabric" in args else ["--fabric", "h100_ib_2x8"]), *args]
    assert main(argv) == 2
    cap = capsys.readouterr()
    assert cap.out == "" and cap.err.count("\n") == 1 and says in cap.err, cap.err
    assert main(["nccl-tests"]) == 2 and "--fabric: required" in capsys.readouterr().err


def test_help_says_units_and_calibration(capsys):
    assert main(["nccl-tests", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for words in ("powers of 1024", "GB/s", "(us)", "calibrated", "nic_efficiency", "2(n-1)/n", "NCCL_ALGO"):
        assert words in text, words


def test_no_nan_anywhere():
    for fab in ("h100_ib_2x8", "a100_roce_2x8", "p4de_efa_2x8", "p5_efa_2x8", variant("h100_ib_2x8", 1)):
        for c in ("all_reduce", "all_gather", "reduce_scatter", "alltoall"):
            for r in nccl_tests(fab, c).rows:
                assert all(math.isfinite(r[k]) for k in ("time_us", "algbw_GBps", "busbw_GBps"))
