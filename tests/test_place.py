"""The placement advisor (`fabricsim.place`): Table III's single-rack cases, a busy rack, background jobs, closed forms."""

from __future__ import annotations

import math

import pytest

from fabricsim.errors import ScenarioError
from fabricsim.advisor.api import place
from fabricsim.advisor.fabric import named_fabric, read_busy
from fabricsim.advisor.score import JobSpec, Scorer
from fabricsim.advisor.search import assign_nics, candidates
from fabricsim.studies.orchestration import PRESETS

MIB = 1 << 20
# A contention-free all-to-all of N nodes, S bytes to each other node, on 100 Gb/s NICs: a NIC sends (N-1)·S
# back to back, so the run lasts (N-1)·S·8/100e9 plus one pipeline latency (a few us: 1.5 us per switch and the
# last packets' store-and-forward), well under 0.5% of these runs.
A2A_BOUND_MS = {n: (n - 1) * 10 * MIB * 8 / 100e9 * 1e3 for n in (4, 6)}
TABLE3 = ["4n_1_1_1_1", "4n_2_1_1", "4n_2_2", "4n_3_1", "4n_4",
          "6n_1_1_1_1_1", "6n_1_1_1_2", "6n_1_1_2_2", "6n_2_2_2", "6n_3_3", "6n_4_1_1", "6n_4_2"]


def _busy_all_but(tmp_path, keep: set[int]) -> str:
    p = tmp_path / "busy.csv"
    p.write_text("server\n" + "".join(f"{s}\n" for s in range(1, 25) if s not in keep))
    return str(p)


@pytest.mark.parametrize("case", TABLE3)
def test_table3_single_rack_picks_no_spine_crossing(tmp_path, case):
    # Only the case's own servers are free. A node on a server takes NIC 0, then 2 (both on the rack's first
    # leaf), then 1, 3 (the second leaf): at most two nodes per server keep every NIC on one leaf, so no message
    # crosses a spine and the all-to-all runs at the NIC bound. That is possible when the free servers number at
    # least ceil(N/2); then the advisor must find it (whatever the case itself does, e.g. 4n_3_1 has 3 nodes on
    # one server and crosses), else it must be no slower than the case's own placement.
    servers = PRESETS[case][0]
    n, free_servers = len(servers), set(servers)
    res = place(n, pattern="all-to-all", busy=_busy_all_but(tmp_path, free_servers), confirm=False, max_evals=60)
    best = res.placements[0]
    assert set(best.servers) <= free_servers
    fab = named_fabric("vela")
    leaves = {fab.nic_switch[(fab.host_index[h], k)] for node in best.endpoints for h, k in node}
    if len(free_servers) >= math.ceil(n / 2):
        assert len(leaves) == 1, (case, best.servers, leaves)
        assert best.completion_ms == pytest.approx(A2A_BOUND_MS[n], rel=0.005)
    else:
        sc = Scorer(fab, JobSpec(pattern="all-to-all"))
        own = sc.evaluate(assign_nics(fab, [s - 1 for s in servers], fab.all_free(), 1), [1, 2, 3]).mean_ms
        assert best.completion_ms <= own * (1 + 1e-9)


def test_a_busy_rack_is_avoided(tmp_path):
    # Rack 1 (servers 1-6) fully occupied: the first-fit candidate would start there; every pick must avoid it.
    busy = tmp_path / "busy.csv"
    busy.write_text("server\n1\n2\n3\n4\n5\n6\n")
    res = place(4, busy=str(busy), per_server=1, confirm=False, max_evals=40)
    for p in res.placements:
        assert not set(p.servers) & {1, 2, 3, 4, 5, 6}
    # The four nodes then fit in one other rack: the All-Reduce (All-to-All then All-Gather, 2(N-1) messages of
    # 10 MiB per NIC) runs at the NIC bound 2·3·10 MiB·8 / 100 Gb/s = 5.033 ms plus the pipeline latency.
    assert res.placements[0].racks == 1
    assert 5.033 < res.placements[0].completion_ms < 5.033 * 1.005


def test_a_rack_loaded_by_a_background_job_is_avoided(tmp_path):
    # A background All-to-All over racks 1 and 2 (NIC 0 of servers 1-6 and 7-12) keeps their leaf uplinks busy.
    # Eight nodes, one per server, do not fit in one rack; placed in racks 3 and 4 they share no link with the
    # background job, so the advisor must not use racks 1 and 2.
    busy = tmp_path / "busy.csv"
    busy.write_text("server,job,pattern\n" + "".join(f"{s},bg,all-to-all\n" for s in range(1, 13)))
    res = place(8, busy=str(busy), per_server=1, confirm=False, max_evals=120)
    best = res.placements[0]
    assert all(s > 12 for s in best.servers), best.servers
    assert "background" in res.why


def test_background_job_slows_a_job_that_shares_its_links(tmp_path):
    # The same 4-node job on servers 1, 2, 7, 8 alone and beside an All-to-All on 3, 4, 9, 10 (NIC 0 of each):
    # both cross the spines between racks 1 and 2, so beside the background the job can only be slower.
    fab = named_fabric("vela")
    busy = tmp_path / "busy.csv"
    busy.write_text("server,job,pattern\n3,bg,all-to-all\n4,bg,\n9,bg,\n10,bg,\n")
    free, bg = read_busy(fab, str(busy))
    assert bg[0].pattern == "all-to-all" and bg[0].msg_bytes == 10 * MIB and len(bg[0].nodes) == 4
    nodes = assign_nics(fab, [0, 1, 6, 7], free, 1)
    alone = Scorer(fab, JobSpec()).evaluate(nodes, [1, 2, 3]).mean_ms
    beside = Scorer(fab, JobSpec(), bg).evaluate(nodes, [1, 2, 3]).mean_ms
    assert beside > alone * 1.05


def test_candidates_include_presets_pack_spread_and_chic():
    # Host indices (server id - 1). A placement found by several families keeps its first label (presets first).
    fab = named_fabric("vela")
    cands = dict((h, lab) for lab, h in candidates(fab, 4, fab.all_free(), 1, 4))
    assert cands[(0, 1, 2, 3)] == "preset 4n_1r"          # = pack (first fit) = chic rack
    assert cands[(0, 6, 12, 18)] == "preset 4n_4r"        # = spread 4
    assert cands[(0, 0, 0, 0)] == "preset 4n_4"           # = chic server: 4 NICs hold 4 nodes, the tightest level
    # Without presets the families show under their own names.
    labels = {lab for lab, _ in candidates(fab, 4, fab.all_free(), 1, 4, presets=False)}
    assert {"chic server", "chic rack", "spread 2", "spread 4", "pack x2"} <= labels


def test_same_inputs_same_ranking():
    a = place(6, per_server=1, confirm=False, max_evals=50).to_dict()
    b = place(6, per_server=1, confirm=False, max_evals=50).to_dict()
    a.pop("wall_s"), b.pop("wall_s")
    assert a == b


def test_bad_inputs_name_the_option(tmp_path):
    with pytest.raises(ScenarioError, match="--fabric.*unknown fabric 'nope'"):
        place(4, fabric="nope")
    with pytest.raises(ScenarioError, match="--nodes.*25 nodes .* do not fit"):
        place(25, per_server=1, confirm=False)
    bad = tmp_path / "busy.csv"
    bad.write_text("server\n1\n99\n")
    with pytest.raises(ScenarioError, match=r"busy.csv: row 3: server: '99' does not exist \(servers are 1..24"):
        place(4, busy=str(bad))
    bad.write_text("server,nic\n1,7\n")
    with pytest.raises(ScenarioError, match="row 2: nic: server 1 has NICs 0..3, not 7"):
        place(4, busy=str(bad))
    bad.write_text("server,job\n1,solo\n")
    with pytest.raises(ScenarioError, match="background job 'solo' has one node"):
        place(4, busy=str(bad))
