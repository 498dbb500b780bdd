"""The UEC section of the run record (issue 34): the counters (`RunRecord.uec`), the per-connection columns
(`flows.acked_ps`, `flows.retransmits`), the window log (`windows.*`, `RunRecord.windows()`), their Arrow/Parquet
and JSON forms, the summary line of `fabricsim run` and `trace run`, and `run --figure`'s UEC figure.

The run is the 32 -> 1 incast of the uet-htsim comparison (benchmarks/UET_HTSIM.md) scaled down: 8 senders x
512 KiB into p0.e0.h0 on the k = 8 fat tree (100 Gb/s, 1 us links, switch queues of 1 BDP = 178,450 B), seven
senders in other pods (6 links each way) and one in the receiver's pod (p0.e1.h0, 4 links).
"""

from __future__ import annotations

import json
import math
import pickle
from pathlib import Path

import numpy as np
import pytest

from fabricsim import _entry
from fabricsim.cli import main
from fabricsim.engine import run
from fabricsim.errors import ArgumentError
from fabricsim.record import MISSING, PS, FLOW_KINDS
from fabricsim.spec import load_scenario
from fabricsim.units import format_duration

SENDERS = ["p1.e0.h0", "p2.e1.h1", "p3.e2.h2", "p4.e3.h3", "p5.e0.h1", "p6.e1.h2", "p7.e2.h3", "p0.e1.h0"]
DST = "p0.e0.h0"
SIZE = 512 * 1024
MTU, HDR, ACK = 4150, 64, 64
"""uet-htsim's packet sizes, the [uec] defaults: a 4,150 B packet carries 4,086 B of payload; ACKs are 64 B."""
RATE, DELAY = 100e9, 1e-6

SCENARIO = """seed = 1
transport = "uec"

[topology]
kind = "fat_tree3"
k = 8
rate = "100Gbps"
delay = "1us"

[queue]
limit_bytes = 178450
limit_packets = "unlimited"

[uec]
spray = "oblivious"
""" + "".join(f'\n[[messages]]\nname = "s{i}"\nsrc = "{s}"\ndst = "{DST}"\nsize = {SIZE}\n'
              for i, s in enumerate(SENDERS))


def links(src: str, dst: str) -> int:
    """Links between two hosts of the 3-tier fat tree named p{pod}.e{edge}.h{host}: 2 under one edge switch, 4
    in one pod, 6 across pods."""
    (ps, es, _), (pd, ed, _) = src.split("."), dst.split(".")
    return 2 if (ps, es) == (pd, ed) else 4 if ps == pd else 6


@pytest.fixture(scope="module")
def incast(tmp_path_factory):
    path = tmp_path_factory.mktemp("uec") / "incast8.toml"
    path.write_text(SCENARIO)
    sc = load_scenario(path)
    return path, sc, run(sc)


def test_counters_are_conserved(incast):
    """Every packet is accounted for: each connection sends ceil(512 KiB / 4,086 B) = 129 new packets, so
    data_packets = 8 x 129 + retransmits; nothing is dropped (trimming keeps the header), so every trimmed header
    reaches its receiver, which NACKs it (none is a duplicate); every NACK re-sends its packet and the incast
    has no timeout (the issue's acceptance), so retransmits = NACKs. The first windows alone (8 x 63 packets,
    8 x 261,450 B, back to back) overflow the receiver's 178,450 B downlink queue, so there are trims."""
    _, _, rec = incast
    u = rec.uec
    assert set(u) == {"data_packets", "trims", "trimmed_received", "nacks", "acks", "ecn_echoes", "timeouts",
                      "retransmits", "duplicates", "out_of_order", "pulls", "timer_acks"}
    per_conn = math.ceil(SIZE / (MTU - HDR))
    assert per_conn == 129
    assert u["data_packets"] == len(SENDERS) * per_conn + u["retransmits"]
    assert rec.packets["dropped"] == 0
    assert u["trims"] > 0
    assert u["trimmed_received"] == u["trims"]
    assert u["duplicates"] == 0
    assert u["nacks"] == u["trimmed_received"]
    assert u["timeouts"] == 0
    assert u["retransmits"] == u["nacks"] + u["timeouts"]
    assert u["pulls"] == 0  # NSCC: no credit packets


def test_per_connection_columns(incast):
    """flows.retransmits sums to the counter, and each data flow sent its 129 packets plus its re-sends; the
    reverse flows (kind "uec-ack") carried the ACKs and NACKs, and have no acked time and no re-sends."""
    _, _, rec = incast
    c = rec.columns
    conn = rec.uec_connections()
    ack = np.flatnonzero(c["flows.kind"] == FLOW_KINDS.index("uec-ack"))
    assert len(conn) == len(ack) == len(SENDERS)
    assert int(c["flows.retransmits"].sum()) == rec.uec["retransmits"]
    assert (c["flows.tx_packets"][conn] == 129 + c["flows.retransmits"][conn]).all()
    assert int(c["flows.tx_packets"][ack].sum()) == rec.uec["acks"] + rec.uec["nacks"]
    assert (c["flows.retransmits"][ack] == 0).all() and (c["flows.acked_ps"][ack] == MISSING).all()
    assert rec.values("flows.acked_ps")[int(ack[0])] is None


def test_last_ack_follows_delivery_by_the_ack_path(incast):
    """acked >= complete + the last ACK's one-way trip: L links x (1 us + 64 B at 100 Gb/s = 5.12 ns), i.e.
    6,030,720 ps across pods and 4,020,480 ps in the pod; an ACK that met no control packet ahead of it takes
    exactly that (the control class has strict priority)."""
    _, _, rec = incast
    c = rec.columns
    conn = rec.uec_connections()
    ack_path = np.array([links(s, DST) * (round(DELAY / PS) + round(ACK * 8 / RATE / PS)) for s in SENDERS])
    assert ack_path.tolist() == [6_030_720] * 7 + [4_020_480]
    excess = c["flows.acked_ps"][conn].astype(np.int64) - c["flows.complete_ps"][conn].astype(np.int64) - ack_path
    assert (excess >= 0).all()
    assert excess.min() == 0
    fct = rec.uec_fct_s()
    assert np.allclose(fct, (c["flows.acked_ps"][conn] - c["flows.start_ps"][conn]) * PS)


def test_window_log_starts_at_the_maximum_window(incast):
    """NSCC starts every connection at its maximum window, 1.5 x BDP (uet-htsim's initNscc). UET_HTSIM.md's
    "RTT and BDP" over the scenario's longest connection path (6 links): rtt = 2 x 6 x 1 us + 6 x (4,150 + 64) B
    x 8 / 100 Gb/s = 12 us + 2.02272 us = 14.02272 us; BDP = rtt x 100 Gb/s / 8 = 175,284 B; maximum window
    = 262,926 B. The window never leaves [one MTU, maximum]."""
    _, _, rec = incast
    hops = max(links(s, DST) for s in SENDERS)
    rtt_ps = 2 * hops * round(DELAY / PS) + hops * round((MTU + ACK) * 8 / RATE / PS)
    assert rtt_ps == 14_022_720
    bdp = int(rtt_ps * PS * RATE / 8)
    assert bdp == 175_284
    maxwnd = int(1.5 * bdp)
    assert maxwnd == 262_926
    c = rec.columns
    t, flow, b = c["windows.t_ps"], c["windows.flow"], c["windows.bytes"]
    conn = rec.uec_connections()
    assert set(np.unique(flow).tolist()) == set(conn.tolist())
    first = np.array([np.flatnonzero(flow == f)[0] for f in conn])
    assert (t[first] == c["flows.start_ps"][conn]).all()
    assert (b[first] == maxwnd).all()
    assert b.min() >= MTU and b.max() <= maxwnd
    for f in conn:  # each connection's rows in time order
        assert (np.diff(t[flow == f].astype(np.int64)) >= 0).all()


def test_windows_frame_arrow_parquet_and_round_trips(incast, tmp_path):
    """windows() names each row's connection and converts units; the windows table exports to Arrow and Parquet
    with its units; the counters survive pickling and the --json object."""
    import pyarrow.parquet as pq

    _, _, rec = incast
    w = rec.windows()
    c = rec.columns
    assert list(w.columns) == ["t_s", "flow", "bytes"]
    assert len(w) == len(c["windows.t_ps"]) > 0
    assert np.array_equal(w["t_s"].to_numpy(), c["windows.t_ps"] * PS)
    assert w["flow"].tolist() == [f"s{int(f)}" for f in c["windows.flow"]]  # message i is flow row i here
    table = rec.to_arrow("windows")
    assert table.num_rows == len(w) and table.schema.field("bytes").metadata[b"unit"] == b"bytes"
    rec.to_parquet(tmp_path / "w.parquet", "windows")
    assert pq.read_table(tmp_path / "w.parquet").equals(table)
    assert pickle.loads(pickle.dumps(rec)).uec == rec.uec
    d = rec.to_json_dict(flows=True)
    assert d["uec"] == rec.uec
    rows = [f for f in d["flows"] if f["kind"] == "message"]
    assert [f["acked_s"] for f in rows] == (c["flows.acked_ps"][rec.uec_connections()] * PS).tolist()


def test_records_without_uec_have_none():
    """A message-transport run: no counters, an empty window log, no connections."""
    from conftest import TWO_HOSTS
    from fabricsim.spec import scenario_from_dict
    import tomllib

    doc = tomllib.loads(TWO_HOSTS + '\n[[messages]]\nname = "m"\nsrc = "h0"\ndst = "h1"\nsize = 4096\n')
    rec = run(scenario_from_dict(doc, "two.toml"))
    assert rec.uec == {} and not rec.has_uec
    assert len(rec.windows()) == 0 and list(rec.windows().columns) == ["t_s", "flow", "bytes"]
    assert len(rec.uec_connections()) == 0 and len(rec.uec_fct_s()) == 0
    from fabricsim.report.uec import uec_axes

    with pytest.raises(ArgumentError, match="no UEC section"):
        uec_axes(rec)


def test_run_prints_the_uec_line_after_the_roce_line(incast, capsys):
    """The summary's last two lines: RoCE's, then UEC's with the counters and the FCT (acked - start) mean and
    p99, nearest rank: the largest of 8."""
    path, _, rec = incast
    assert main(["run", str(path)]) == 0
    lines = capsys.readouterr().out.rstrip("\n").split("\n")
    assert lines[-2].startswith("RoCE: ")
    u = rec.uec
    c = rec.columns
    conn = rec.uec_connections()
    fct_ps = (c["flows.acked_ps"][conn] - c["flows.start_ps"][conn]).astype(np.float64)
    assert lines[-1] == (f"UEC: {u['trims']:,} packets trimmed, {u['nacks']:,} NACKs, {u['retransmits']:,} re-sent, "
                         f"0 timeouts, {u['ecn_echoes']:,} ECN echoes; FCT (sender's last ACK) mean "
                         f"{format_duration(fct_ps.mean())}, p99 {format_duration(fct_ps.max())}")


def test_trace_run_prints_the_uec_line(tmp_path, capsys):
    """`trace run` on a UEC fabric ends its summary with the same line (a 4-rank data-parallel trace on the k = 4
    fat tree)."""
    fab = tmp_path / "fab.toml"
    fab.write_text('seed = 1\ntransport = "uec"\n\n[topology]\nkind = "fat_tree3"\nk = 4\nrate = "100Gbps"\n'
                   'delay = "1us"\n')
    assert main(["trace", "synth", "dp", "--ranks", "4", "--layers", "2", "--hidden", "1024", "--out",
                 str(tmp_path / "tr")]) == 0
    capsys.readouterr()
    assert main(["trace", "run", str(tmp_path / "tr"), "--fabric", str(fab)]) == 0
    lines = capsys.readouterr().out.rstrip("\n").split("\n")
    assert lines[-2].startswith("RoCE: ")
    assert lines[-1].startswith("UEC: 0 packets trimmed, 0 NACKs, 0 re-sent, 0 timeouts, 0 ECN echoes; FCT "
                                "(sender's last ACK) mean ")


def test_figure_is_a_png_and_its_parts_are_right(incast, tmp_path, capsys):
    """run --figure on a UEC run writes the UEC figure (a PNG). Its parts: the k = 8 fat tree has 32 edge x 4
    + 32 aggregation x 4 = 256 upward switch ports, found alike from the scenario's network and from the record
    alone; at time 0 every connection's window is the maximum, 262,926 B; 16 of 32 connections are drawn, the
    first and last among them."""
    from fabricsim.report.uec import drawn_connections, imbalance, upward_ports, window_grid

    path, sc, rec = incast
    png = tmp_path / "uec.png"
    assert main(["run", str(path), "--figure", str(png)]) == 0
    assert f"wrote {png}" in capsys.readouterr().err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    up, lo, hi = upward_ports(rec, sc.topology.network())
    assert len(up) == 256
    assert sorted(set(zip(lo.tolist(), hi.tolist()))) == [(1, 2), (2, 3)]
    assert all(np.array_equal(a, b) for a, b in zip(upward_ports(rec), (up, lo, hi)))
    names = [rec.scalars["queue_names"][p] for p in up[lo == 1]]
    assert all(".e" in n.split("->")[0] and ".a" in n.split("->")[1] for n in names)
    rows, w = window_grid(rec, np.array([0.0, rec.end_time_s + 1e-9]))
    assert np.array_equal(rows, rec.uec_connections())
    assert (w[:, 0] == 262_926).all() and np.isnan(w[:, 1]).all()  # all finished before the end + 1 ns
    picked = drawn_connections(32)
    assert len(picked) == 16 and picked[0] == 0 and picked[-1] == 31
    assert drawn_connections(5).tolist() == [0, 1, 2, 3, 4]
    assert imbalance(np.array([1.0, 3.0])) == 1.5


def test_native_json_equals_the_python_path(incast, capsys):
    """`fabricsim run --json --quiet` answered by the Rust front door prints the Python path's object (wall_s
    aside), UEC counters and columns included."""
    path, _, _ = incast
    got = _entry._native(["run", str(path), "--json", "--quiet"])
    assert got is not None, "the native front door declined a UEC scenario"
    code, out, err = got
    assert code == 0 and err == ""
    assert main(["run", str(path), "--json"]) == 0
    py = json.loads(capsys.readouterr().out)
    native = json.loads(out)
    assert "uec" in native and native["flows"][0]["acked_s"] is not None
    native.pop("wall_s")
    py.pop("wall_s")
    assert native == py


def test_a_sweep_stores_the_uec_metrics(incast):
    """`standard_metrics` (what a sweep stores per run) adds a UEC run's counters and the p99 of its connections'
    FCTs to their last ACK: with 8 connections the nearest-rank p99 is the 8th of 8, the last ACK of all (every
    connection started at 0). A run of another transport gets none of these columns."""
    from fabricsim.sweep.tasks import UEC_METRICS, standard_metrics

    _, _, rec = incast
    m = standard_metrics(rec)
    assert set(UEC_METRICS) <= set(m)
    c = rec.columns
    last_ack = c["flows.acked_ps"][c["flows.kind"] == 2].max() * 1e-12
    assert m["uec_fct_p99_s"] == pytest.approx(last_ack, abs=1e-15)
    assert (m["uec_trims"], m["uec_nacks"], m["uec_timeouts"]) == (rec.uec["trims"], rec.uec["nacks"], 0)
    assert m["uec_retransmits"] == m["uec_nacks"]  # every trimmed packet re-sent once, none timed out
    plain = run(load_scenario(Path(__file__).resolve().parents[1] / "examples" / "leaf_spine_incast.toml"))
    assert not set(UEC_METRICS) & set(standard_metrics(plain))
