"""The incast study's scenario builder, metric definitions (hand-checked) and `fabricsim incast` command."""

import json
import math
import subprocess
import sys

import pytest

from fabricsim.cli import main
from fabricsim.studies.incast import (IncastParams, build_scenario, expected_onoff_packets, incast_metrics, jain_index,
                              run_incast, sampled_peak, window_throughput_mbps)
import numpy as np

from fabricsim.record import FLOW_KINDS, MISSING, SCHEMA, RunRecord

S = 10**12  # ps per second
MS = 10**9


# ---- metric definitions -----------------------------------------------------------------------------------


def test_jain_index_hand_values():
    assert jain_index([1, 1, 1, 1]) == 1.0
    assert jain_index([1, 0, 0, 0]) == 0.25
    assert jain_index([10.0, 20.0]) == pytest.approx(900 / (2 * 500))  # (Σ)² / (n·Σ²) = 0.9
    assert jain_index([]) is None and jain_index([0, 0]) is None


def test_window_throughput_hand_value():
    # 10 packets x 1052 IP bytes over 1.0 .. 3.0 s = 84,160 bits / 2 s = 0.04208 Mb/s.
    assert window_throughput_mbps(10 * 1052, 1 * S, 3 * S) == pytest.approx(0.04208)
    assert window_throughput_mbps(100, None, 3 * S) == 0.0 and window_throughput_mbps(100, 3 * S, 3 * S) == 0.0


def fake_record() -> RunRecord:
    """Two data flows and one TCP ACK flow (excluded from delays and throughput, counted in the totals)."""
    flows = {
        "name": ["a", "b", "a/ack"], "kind": ["tcp", "tcp", "tcp-ack"],
        "src": ["sender0", "sender1", "receiver"], "dst": ["receiver", "receiver", "sender0"],
        "tx_packets": [10, 10, 5], "rx_packets": [8, 2, 5], "lost_packets": [2, 8, 0],
        "tx_bytes": [10 * 1054, 10 * 1054, 5 * 54], "rx_bytes": [8 * 1054, 2 * 1054, 5 * 54],
        "rx_payload_bytes": [8 * 1000, 2 * 1000, 0],
        "first_tx_ps": [1 * S, 3 * S // 2, S // 2], "last_tx_ps": [2 * S, 2 * S, 4 * S],
        "first_rx_ps": [S + 10 * MS, 2 * S, S], "last_rx_ps": [2 * S, 3 * S, 4 * S],
        "delay_sum_ps": [8 * 10 * MS, 2 * 20 * MS, 5 * 9 * MS], "max_delay_ps": [10 * MS, 20 * MS, 9 * MS],
        "complete_ps": [None] * 3, "start_ps": [None] * 3,
    }
    queues = {"node": ["sender0", "leaf"], "port": [0, 1], "tx_packets": [10, 10], "tx_bytes": [0, 0],
              "drops": [0, 10], "peak_packets": [3, 150], "peak_bytes": [0, 0]}
    samples = {"t_ps": [100 * MS, 100 * MS, 150 * MS, 200 * MS], "port": [1, 0, 1, 1], "packets": [120, 1, 180, 90],
               "bytes": [0, 0, 0, 0]}
    names = {"node_names": ["sender0", "sender1", "receiver", "leaf"], "flow_names": flows["name"],
             "queue_names": ["sender0->leaf", "leaf->spine"], "flow_kinds": FLOW_KINDS}
    tables = {"flows": flows, "queues": queues, "samples": samples}
    columns = {}
    for f in SCHEMA:  # each stored column of the schema, labels as codes and None as MISSING
        if f.source == "stored" and not f.when:
            v = tables.get(f.table, {}).get(f.column, [])
            v = [names[f.labels].index(x) if isinstance(x, str) else x for x in v] if f.labels else v
            columns[f.name] = np.asarray([MISSING if x is None else x for x in v], dtype=f.dtype)
    return RunRecord({"fidelity": "packet", "seed": 1, "end_ps": 5 * S, "completion_ps": None, "events": 0,
                      "packets": {"tx": 25, "rx": 15, "dropped": 10, "in_flight": 0}, "hops": [], "wall_s": 0.0,
                      **{k: list(v) for k, v in names.items() if k != "flow_kinds"}}, columns)


def test_metrics_by_hand():
    p = IncastParams(transport="tcp", duration_s=10, sample_ms=50)
    m = incast_metrics(fake_record(), p)
    # Data flows only: (8 + 2) packets x (1054 − 2 PPP) B x 8 over min first_tx 1.0 s .. max last_rx 3.0 s.
    assert m["throughput_mbps"] == pytest.approx(10 * 1052 * 8 / 2.0 / 1e6)
    assert m["offered_load_mbps"] == pytest.approx(20 * 1052 * 8 / 2.0 / 1e6)
    assert m["window_s"] == pytest.approx(2.0)
    assert m["flow_mean_delays_ms"] == pytest.approx([10.0, 20.0])
    assert m["mean_delay_ms"] == pytest.approx((80 + 40) / 10)  # packet-weighted: 12 ms
    assert m["flow_delay_avg_ms"] == pytest.approx(15.0)
    assert (m["min_flow_delay_ms"], m["max_flow_delay_ms"]) == pytest.approx((10.0, 20.0))
    assert m["delay_spread_ms"] == pytest.approx(10.0)
    assert m["jain_fairness_delay"] == pytest.approx(0.9)
    # Totals over every flow, ACKs included; lost = TX − RX.
    assert (m["tx_packets"], m["rx_packets"], m["lost_packets"]) == (25, 15, 10)
    assert m["loss_pct"] == pytest.approx(40.0)
    assert (m["data_tx_packets"], m["data_rx_packets"]) == (20, 10)
    # Discipline peak = port peak 150 − 100-packet device queue.
    assert (m["peak_queue_pkts"], m["peak_port_pkts"], m["bottleneck_drops"]) == (50, 150, 10)
    qs = m["queue_samples"]
    assert qs["t_s"] == pytest.approx([0.1, 0.15, 0.2]) and qs["packets"] == [120, 180, 90]
    assert qs["qdisc_packets"] == [20, 80, 0] and m["sampled_peak_queue_pkts"] == 80
    assert sampled_peak(m, 100) == 20  # only the 0.1 s and 0.2 s samples


# ---- scenario -----------------------------------------------------------------------------------------------


def test_udp_scenario_matches_the_study_setup():
    sc = build_scenario(IncastParams(rate_mbps=200, qdisc="fq_codel", sample_ms=1))
    assert sc.topology.kind == "dumbbell" and sc.topology.senders == 8
    assert (sc.topology.bottleneck_rate, sc.topology.bottleneck_delay) == (100_000_000, 5 * MS)
    assert (sc.topology.access_rate, sc.topology.access_delay) == (1_000_000_000, 2 * MS)
    assert sc.stop == 60 * S and len(sc.sources) == 8 and not sc.tcp
    for s in sc.sources:
        assert (s.kind, s.rate, s.packet_size, s.header) == ("onoff", 200_000_000, 1024, 30)
        assert (s.on, s.off, s.start, s.stop) == (100 * MS, 100 * MS, 1 * S, 59 * S)
    (port,) = sc.ports
    assert (port.node, port.peer, port.queue.limit_packets) == ("leaf", "spine", 100)
    q = port.queue.qdisc
    assert (q.kind, q.limit_packets, q.target, q.interval, q.quantum, q.flows) == ("fq_codel", 100, 5 * MS, 100 * MS, 1514, 1024)
    assert sc.queue.limit_packets == 100 and sc.queue.qdisc.kind == "fq_codel" and sc.queue.qdisc.limit_packets == 10240
    assert sc.measure.queue_interval == 1 * MS and sc.measure.queues == ["leaf->spine"]


def test_tcp_scenario_staggers_starts_and_other_qdisc_none():
    sc = build_scenario(IncastParams(transport="tcp", qdisc="codel", other_qdisc="none", device_queue_pkts=50))
    assert [t.start for t in sc.tcp] == [S + i * S // 2 for i in range(8)]
    assert all(t.stop == 59 * S and t.cc == "cubic" for t in sc.tcp) and not sc.sources
    assert sc.queue.qdisc is None
    assert sc.ports[0].queue.limit_packets == 50 and sc.ports[0].queue.qdisc.kind == "codel"
    assert sc.ports[0].queue.qdisc.limit_packets == 100 and sc.measure.queue_interval is None


def test_params_reject_impossible_times():
    with pytest.raises(ValueError, match="start_s"):
        IncastParams(start_s=5, duration_s=2)
    with pytest.raises(ValueError, match="app_stop_s"):
        IncastParams(app_stop_s=70)
    with pytest.raises(ValueError, match="last TCP flow"):
        IncastParams(transport="tcp", duration_s=3)
    assert IncastParams(duration_s=2).stop_s == 2.0  # too short to keep the last second idle
    assert IncastParams(duration_s=10).stop_s == 9.0


# ---- closed form: S2 over 5 s -------------------------------------------------------------------------------


def test_s2_five_seconds_matches_ns3_onoff_closed_form():
    # Apps run 1 s .. 4 s. OnOff starts off: on-periods 1.1–1.2, 1.3–1.4, …, 3.9–4.0 = 15 periods. Each sends
    # 0.1 s x 30 Mb/s = 3,000,000 bits; the unfinished packet's bits carry over, so a sender sends
    # floor(15 x 3e6 / 8192) = floor(5493.16) = 5493 packets, the first 8192 / 30e6 s = 273.0667 us into 1.1 s.
    periods = len([k for k in range(100) if 1.1 + 0.2 * k < 4.0])
    assert periods == 15
    per_sender = math.floor(periods * 3_000_000 / 8192)
    assert per_sender == 5493 == expected_onoff_packets(30e6, 1024, 0.1, 0.1, 1.0, 4.0)
    rec, m = run_incast(IncastParams(rate_mbps=30, duration_s=5))
    c = {k: rec.values(f"flows.{k}") for k in ("tx_packets", "first_tx_ps")}
    assert c["tx_packets"] == [per_sender] * 8
    assert m["tx_packets"] == 8 * per_sender == 43_944
    assert all(abs(t - (1_100_000_000_000 + 273_066_667)) <= 1 for t in c["first_tx_ps"])
    assert m["rx_packets"] + m["lost_packets"] == m["tx_packets"] and rec.packets["in_flight"] == 0
    # The bottleneck's discipline fills to its 100-packet limit above the full 100-packet device queue.
    assert (m["peak_queue_pkts"], m["peak_port_pkts"]) == (100, 200)
    # An empty path: 1054 B at 1 Gb/s + 2 ms, at 100 Mb/s + 5 ms, at 1 Gb/s + 2 ms = 9.101184 ms; a full
    # 200-packet buffer adds at most 200 x 84.32 us = 16.864 ms.
    assert 9.101184 <= m["min_flow_delay_ms"] <= m["max_flow_delay_ms"] <= 9.101184 + 16.864 + 0.085


# ---- CLI ----------------------------------------------------------------------------------------------------

METRIC_KEYS = {"throughput_mbps", "mean_delay_ms", "max_flow_delay_ms", "loss_pct", "peak_queue_pkts", "tx_packets",
               "rx_packets", "lost_packets", "jain_fairness_delay", "delay_spread_ms", "flow_mean_delays_ms"}


def test_cli_json_short_run_has_run_record_and_metrics(capsys):
    code = main(["incast", "--duration-s", "2", "--rate-mbps", "50", "--on-ms", "50", "--off-ms", "50",
                 "--queue-pkts", "20", "--device-queue-pkts", "10", "--qdisc", "codel", "--sample-ms", "10",
                 "--seed", "3", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    d = json.loads(out)
    assert METRIC_KEYS | {"queue_samples", "flows", "packets", "queues", "seed", "params"} <= set(d)
    assert d["params"]["rate_mbps"] == 50 and d["params"]["queue_pkts"] == 20 and d["params"]["qdisc"] == "codel"
    assert d["seed"] == 3 and len(d["flow_mean_delays_ms"]) == 8
    assert d["tx_packets"] == d["packets"]["tx"] and d["peak_queue_pkts"] <= 20
    assert len(d["queue_samples"]["t_s"]) == 200


def test_cli_human_output_and_no_samples_key(capsys):
    assert main(["incast", "--duration-s", "2", "--senders", "2"]) == 0
    out = capsys.readouterr().out
    assert "throughput (Mb/s)" in out and "burst1" in out and "Jain" in out
    assert main(["incast", "--duration-s", "2", "--senders", "2", "--json"]) == 0
    assert "queue_samples" not in json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("args", [
    ["--rate-mbps", "0"], ["--rate-mbps", "x"], ["--senders", "0"], ["--qdisc", "red"], ["--transport", "quic"],
    ["--queue-pkts", "-1"], ["--sample-ms", "0"], ["--start-s", "5", "--duration-s", "2"],
    ["--app-stop-s", "90"], ["--transport", "tcp", "--duration-s", "3"], ["--bogus"],
])
def test_cli_bad_values_exit_2_one_line(args, capsys):
    assert main(["incast", *args]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_cli_entry_point_subprocess():
    p = subprocess.run([sys.executable, "-m", "fabricsim.cli", "incast", "--duration-s", "1.5", "--json"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert METRIC_KEYS <= set(json.loads(p.stdout))


@pytest.mark.slow
def test_study_quick_mode_matches_ns3_counts(tmp_path, capsys):
    """`fabricsim reproduce incast --quick`: 10 s runs; S2 and S3 agree with ns-3 3.44's 10 s runs to the packet."""
    import json as _json
    import shutil
    from pathlib import Path

    exp = tmp_path / "experiments"
    src = Path(__file__).parents[1] / "experiments" / "incast"
    shutil.copytree(src, exp / "incast", ignore=shutil.ignore_patterns("outputs"))
    out = tmp_path / "out"
    assert main(["reproduce", "incast", "--quick", "--experiments", str(exp), "--out", str(out), "--quiet"]) == 0
    rep = _json.loads((out / "incast" / "report.json").read_text())
    by_id = {c["id"]: c for c in rep["comparisons"]}
    for s in ("S2", "S3"):
        for k in ("tx_packets", "rx_packets", "throughput_mbps", "loss_pct", "mean_delay_ms"):
            assert by_id[f"{s}-ns3-{k}"]["passed"], by_id[f"{s}-ns3-{k}"]
    assert len(rep["figures"]) == 6 and len(rep["tables"]) == 2
    assert not any(k.startswith("S1-paper") for k in by_id)  # S1 is compared with ns-3 only
