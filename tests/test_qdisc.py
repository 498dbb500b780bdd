"""Queue disciplines end to end: FQ-CoDel shares a bottleneck max-min fairly; FIFO shares it by arrival rate."""

import pytest

import fabricsim
from fabricsim import scenario_from_dict

RATES_MBPS = [5, 10, 20, 40, 60, 80, 100, 120]


def bottleneck(qdisc: dict) -> list[float]:
    sc = scenario_from_dict({
        "topology": {"kind": "dumbbell", "senders": 8, "access_delay": "1ms", "bottleneck_delay": "1ms"},
        "ports": [{"node": "leaf", "peer": "spine", "queue": {"limit_packets": 100, "qdisc": qdisc}}],
        "sources": [{"name": f"f{i}", "kind": "cbr", "src": f"sender{i}", "dst": "receiver", "rate": f"{r}Mbps",
                     "packet_size": 1000, "header": 30, "start": f"{0.001 * i}s", "stop": "5s"}
                    for i, r in enumerate(RATES_MBPS)],
    })
    rec = fabricsim.run(sc)
    # Received payload rate over the 1 s .. 5 s window would need per-window counters; the 5 s average
    # is dominated by steady state (queues fill within ~100 ms).
    return [f["rx_packets"] * 1000 * 8 / 5 / 1e6 for f in rec.flows()]


def test_fq_codel_gives_max_min_fair_shares():
    # 100 Mb/s of wire bytes (1030 B per 1000 B payload): payload capacity 97.09 Mb/s. Max-min: flows of
    # 5 and 10 Mb/s get their demand; the other six split the remaining 82.09 Mb/s: 13.68 Mb/s each.
    # Unresponsive CBR flows outrun CoDel's sqrt control law, so FQ-CoDel's packet limit (drop from the
    # fattest flow) does the work: 100 packets keeps the tail after the sources stop to ~8 ms.
    got = bottleneck({"kind": "fq_codel", "limit_packets": 100})
    fair = [5, 10] + [(100 * 1000 / 1030 - 15) / 6] * 6
    for i, (g, f) in enumerate(zip(got, fair)):
        assert g == pytest.approx(f, rel=0.03), f"flow {i}: {g:.2f} Mb/s, max-min fair {f:.2f}: {got}"


def test_fifo_fills_the_link_but_does_not_protect_small_flows():
    # The same load into a 100-packet DropTail FIFO: the link is just as full, but shares follow the CBR
    # arrival phases (see the engine-checks study), so the 5 Mb/s flow no longer gets its demand.
    got = bottleneck({"kind": "fifo", "limit_packets": 100})
    assert sum(got) == pytest.approx(100 * 1000 / 1030, rel=0.01)
    assert got[0] < 0.5 * RATES_MBPS[0], got
