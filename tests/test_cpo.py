"""Co-packaged optics (study 003): the design calculator against the study's figures, best-fit packing by hand,
the half-crossing exchange pattern, and the locality simulation against hand-calculated completion times."""

from __future__ import annotations

import json

import pytest

from fabricsim.cli import main
from fabricsim.cpo import Design, DesignSpec, compare, load
from fabricsim.cpo.locality import pack, read_trace, synthetic_trace
from fabricsim.cpo.locality_sim import exchange, overhead


# --- design calculator ------------------------------------------------------------------------------------------

def test_presets_reproduce_the_study_exactly():
    """Derived from the presets' inputs (48 servers per group × 128 groups, 64-port leaves, 256-port spines; 96 × 64,
    128-port switches; 3:1, dual-homed): baseline 256 leaves with 16 uplinks = 4096 uplinks / 256 = 16 spines;
    MOTION 128 leaves with 32 uplinks = 4096 / 128 = 32 spines; 6144 servers × 2 = 12288 endpoints both; bisection
    4096 × 100G / 2 = 204.8 vs 4096 × 400G / 2 = 819.2 Tb/s. The group sizes themselves are inputs, not checked here."""
    b, m = load("baseline").to_json(), load("motion").to_json()
    assert (b["switches"], b["leaf_switches"], b["spine_switches"]) == (272, 256, 16)
    assert (m["switches"], m["leaf_switches"], m["spine_switches"]) == (160, 128, 32)
    assert b["endpoints"] == m["endpoints"] == 12288 > 12000
    assert (b["bisection_tbps"], m["bisection_tbps"]) == (pytest.approx(204.8), pytest.approx(819.2))
    assert m["bisection_tbps"] / b["bisection_tbps"] == 4.0
    rows = {r["quantity"]: r for r in compare(load("baseline"), load("motion"))}
    assert round(rows["switches"]["change_pct"]) == -41  # 160 / 272 − 1 = −41.2%


def test_the_default_group_size_rule_gives_the_studys_groups():
    """Without the preset's servers_per_group, a leaf takes ⌊radix · 3/4⌋ servers at 3:1: ⌊64 · 0.75⌋ = 48 (6.4 Tb/s
    of 100G ports) and ⌊128 · 0.75⌋ = 96 (51.2 Tb/s of 400G), the study's group sizes."""
    unset = {"servers_per_group": None}
    assert (load("baseline", unset).servers_per_group, load("motion", unset).servers_per_group) == (48, 96)


def test_derived_group_size_and_endpoints_target():
    """A 64-port leaf at 3:1 takes 48 servers and 16 uplinks; 1000 single-homed endpoints need ⌈1000/48⌉ = 21
    leaves, 336 uplinks, ⌈336/256⌉ = 2 spines."""
    d = Design(DesignSpec(spine_tbps=25.6, leaf_tbps=6.4, port_gbps=100, dual_homed=False, endpoints=1000))
    assert (d.servers_per_group, d.leaf_up, d.groups, d.spine_switches, d.switches) == (48, 16, 21, 2, 23)
    assert d.bisection_tbps == pytest.approx(336 * 100 / 2 / 1000)


def test_optics_power_from_pj_per_bit():
    """MOTION: 4096 leaf-spine + 12288 server links, all optical, 2 transceivers each, 400 Gb/s × 2 pJ/bit = 0.8 W."""
    d = load("motion").to_json()
    assert d["optical_ports"] == 2 * (4096 + 12288)
    assert d["optics_power_kw"] == pytest.approx(32768 * 0.8 / 1000)


@pytest.mark.parametrize("args, words", [
    (["design", "baseline", "--servers-per-group", "60"], ["servers_per_group", "64 ports"]),
    (["design", "motion", "--groups", "100"], ["groups", "128 leaves"]),
    (["design", "nope"], ["nope", "preset"]),
    (["design", "baseline", "--port-gbps", "300"], ["leaf_tbps", "300 Gb/s"]),
])
def test_design_bad_input_is_one_line_exit_2(args, words, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and all(w in err[0] for w in words), err


def test_design_motion_endpoints_example(capsys):
    """docs/studies/cpo.md's and --help's example. MOTION groups hold 96 dual-homed servers = 192 endpoints: 8192 endpoints
    need ⌈8192/192⌉ = 43 groups, 86 leaves with 32 uplinks = 2752 uplinks, ⌈2752/128⌉ = 22 spines; optics: 2752
    leaf-spine + 8256 server links, 2 transceivers each, at 400 Gb/s × 1 pJ/bit = 0.4 W and 500 apiece."""
    assert main(["design", "motion", "--endpoints", "8192", "--pj-per-bit", "1", "--cost-per-port", "500",
                 "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert (d["groups"], d["leaf_switches"], d["spine_switches"], d["endpoints"]) == (43, 86, 22, 8256)
    assert d["optical_ports"] == 2 * (2752 + 8256)
    assert d["optics_power_kw"] == pytest.approx(22016 * 0.4 / 1000)
    assert d["optics_cost"] == 22016 * 500
    # A two-level MOTION network stops at 128 leaves = 64 groups = 12,288 endpoints, and says so.
    assert main(["design", "motion", "--endpoints", "20000"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "endpoints: 105 groups need 210 leaves" in err and "at most 64 groups, 12,288 endpoints" in err


def test_design_file_with_unknown_field_names_file_and_field(tmp_path, capsys):
    f = tmp_path / "d.json"
    f.write_text('{"spine_tbps": 25.6, "leaf_tbps": 6.4, "port_gbps": 100, "groupz": 4}')
    assert main(["design", str(f)]) == 2
    err = capsys.readouterr().err
    assert str(f) in err and "groupz" in err


def test_design_cli_json_and_compare(capsys):
    assert main(["design", "motion", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"switches", "leaf_switches", "spine_switches", "bisection_tbps", "servers", "endpoints",
            "servers_per_group"} <= set(out)
    assert main(["design", "--compare", "baseline", "motion", "--json"]) == 0
    rows = {r["quantity"]: r for r in json.loads(capsys.readouterr().out)["comparison"]}
    assert rows["bisection_tbps"]["ratio"] == 4.0


# --- locality packing -------------------------------------------------------------------------------------------

def _two_groups_of_ten() -> Design:
    return Design(DesignSpec(spine_tbps=6.4, leaf_tbps=6.4, port_gbps=100, servers_per_group=10,
                             dual_homed=False, groups=2))


def test_best_fit_packing_by_hand():
    """Groups of 10: 6 → g0 (4 left); 5 → g1 (5 left); 4 → g0, the fuller that fits; 12 > 5 free → rejected."""
    p = pack(_two_groups_of_ten(), [6, 5, 4, 12])
    assert p.spans == [1, 1, 1, None]
    assert p.summary()["rejected"] == 1


def test_large_application_spans_the_fewest_groups():
    p = pack(_two_groups_of_ten(), [3, 15])
    assert p.spans == [1, 2]
    assert pack(_two_groups_of_ten(), [15], large_vms=10).summary()["large_single_group_fraction"] == 0.0


def test_synthetic_trace_is_deterministic_and_fills_to_target():
    a, b = synthetic_trace(7), synthetic_trace(7)
    assert a == b and sum(a) == int(0.9 * 6144)
    assert synthetic_trace(8) != a


def test_read_trace_errors_name_row_and_column(tmp_path):
    f = tmp_path / "t.csv"
    f.write_text("app,vms\na,3\nb,0\n")
    with pytest.raises(ValueError, match=r"row 3, column 2"):
        read_trace(f)
    f.write_text("vms\n5\n7\n")
    assert read_trace(f) == [5, 7]


# --- the exchange and the locality simulation -------------------------------------------------------------------

def test_exchange_pattern_halves_cross_in_every_phase():
    phases = exchange(12)
    pairs = [p for ph in phases for p in ph]
    assert len(phases) == 24 and len(pairs) == 24 * 23 == len(set(pairs))
    for ph in phases:
        assert len({a for a, _ in ph}) == len(ph) == len({b for _, b in ph}), "one send and one receive per VM"
        assert sum((a < 12) != (b < 12) for a, b in ph) == 12, "exactly half of the 24 VMs cross"


@pytest.mark.parametrize("stack", [1.25, 11.75])
def test_locality_simulation_against_hand_calculation(stack):
    """256 B messages, blocking: one switch, each of a VM's 23 messages takes L + 1.5 µs + two serializations of
    256 B at 100 Gb/s (20.48 ns); spread, 12 of them cross two more switches and two more links."""
    r = overhead(256, 256, 70, stack)
    ser = 256 * 8 / 100e3  # µs
    one = 23 * (stack + 1.5 + 2 * ser)
    spread = 11 * (stack + 1.5 + 2 * ser) + 12 * (stack + 4.5 + 4 * ser)
    assert r["single_us"] == pytest.approx(one, rel=1e-6)
    assert r["spread_us"] == pytest.approx(spread, rel=0.005)


def test_locality_overhead_trends():
    """The study's Fig. 2 shape: more overhead for faster stacks and for smaller messages."""
    fast, slow = overhead(256, 256, 70, 1.25), overhead(256, 256, 10, 15.0)
    big = overhead(32768, 4096, 70, 1.25)
    assert fast["increase_pct"] > slow["increase_pct"] > 0
    assert fast["increase_pct"] > big["increase_pct"] > 0


def test_locality_pack_table(capsys, tmp_path):
    """Applications of 60, 40 and 30 VMs. Baseline groups hold 48: the 60 spans 2 groups, the 40 and the 30 fit
    one each. Motion groups hold 96: 60 in group A (36 left), 40 in group B (56 left), 30 in the fullest group that
    fits, A (6 left): all three under one group."""
    t = tmp_path / "apps.csv"
    t.write_text("vms\n60\n40\n30\n")
    assert main(["locality", "pack", "--trace", str(t), "--large-vms", "25"]) == 0
    text = capsys.readouterr().out
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:-1]] for line in text.splitlines()
            if line.startswith("│")}
    assert rows["groups × slots per group"] == ["128 × 48", "64 × 96"]
    assert rows["applications under one group"] == ["66.7%", "100.0%"]
    assert rows["large (≥ 25 VMs) under one group"] == ["66.7% of 3", "100.0% of 3"]
    assert rows["large: mean groups spanned"] == ["1.33", "1.00"]  # (2 + 1 + 1) / 3 and 1
    assert rows["groups spanned: applications"] == ["1: 2, 2: 1", "1: 3"]
    assert rows["slots used"] == [f"{130 / 6144 * 100:.1f}%"] * 2  # 130 VMs of 128·48 = 64·96 = 6144 slots
    assert main(["locality", "pack", "--trace", str(t), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert (doc["applications"], doc["vms"]) == (3, 130)
    assert [d["groups_spanned_histogram"] for d in doc["designs"]] == [{"1": 2, "2": 1}, {"1": 3}]


def test_locality_cli(capsys, tmp_path):
    assert main(["locality", "simulate", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["increase_pct"] > 50
    t = tmp_path / "apps" / "trace.csv"  # --out DIR writes DIR/trace.csv
    assert main(["locality", "trace", "--out", str(t.parent), "--seed", "3"]) == 0
    assert capsys.readouterr().err == f"wrote {len(read_trace(str(t)))} applications ({sum(read_trace(str(t)))} VMs) to {t}\n"
    assert main(["locality", "pack", "--trace", str(t), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    out = doc["designs"]
    assert doc["applications"] == len(read_trace(str(t))) and doc["trace"] == str(t)
    assert [o["design"] for o in out] == ["baseline", "motion"]
    assert out[1]["large_single_group_fraction"] >= out[0]["large_single_group_fraction"]
