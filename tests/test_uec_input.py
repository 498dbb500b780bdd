"""Bad input to the UEC transport (issue 34): one line naming the file and the key, exit 2, through `fabricsim run
FILE` and `fabricsim validate FILE`; the Python API raises `fabricsim.errors.ScenarioError` naming the key; and the
one UEC setting the flow engine does model (`spray = "ecmp"`) runs, to the max-min completion by hand."""

import subprocess
import sys

import pytest

import fabricsim as fs
from fabricsim.cli import main
from fabricsim.errors import ScenarioError

TOPOLOGY = """
[topology]
kind = "leaf_spine"
racks = 2
spines = 2
hosts_per_rack = 2
host_rate = "100Gbps"
fabric_rate = "100Gbps"
"""
MESSAGE = """
[[messages]]
name = "m"
src = "h0"
dst = "h3"
size = 100000
"""
UEC = 'transport = "uec"\n'


def doc(head: str = UEC, uec: str | None = None, topology_extra: str = "", tail: str = "") -> str:
    """A two-rack leaf-spine scenario with one message; `uec` the body of a [uec] table (None: no table)."""
    table = "" if uec is None else f"\n[uec]\n{uec}\n"
    return f"seed = 1\n{head}{TOPOLOGY}{topology_extra}{table}{tail}{MESSAGE}"


# (id, scenario text, the key the line names, the exact line after "FILE: ", or None to check the key only)
CASES = [
    ("trimming_on_input_buffered", doc(topology_extra='switch_model = "input_buffered"\n'), "topology.switch_model",
     "topology.switch_model: UEC trimming needs output_queued or shared_buffer switches; a credit-based "
     "input_buffered switch never fills a queue to trim at (set uec.trimming = false, or change the switch model)"),
    ("reps_with_one_entropy", doc(uec='spray = "reps"\nentropies = 1'), "uec.entropies",
     'uec.entropies: spray = "reps" recycles entropies, so it needs more than one (or use spray = "ecmp", one path '
     "per connection)"),
    ("oblivious_with_one_entropy", doc(uec='spray = "oblivious"\nentropies = 1'), "uec.entropies", None),
    ("mixed_with_one_entropy", doc(uec="entropies = 1"), "uec.entropies",
     'uec.entropies: a bitmap or mixed balancer chooses among entropies, so it needs more than one (or use spray = '
     '"ecmp")'),
    ("spraying_at_flow_fidelity", doc(head=UEC + 'fidelity = "flow"\n'), "uec.spray",
     'uec.spray: packet spraying is not modelled at flow fidelity (a flow follows one route, at its max-min fair '
     'rate); use spray = "ecmp" or fidelity = "packet"'),
    ("reps_at_flow_fidelity", doc(head=UEC + 'fidelity = "flow"\n', uec='spray = "reps"'), "uec.spray", None),
    ("uec_table_without_the_transport", doc(head="", uec='cc = "none"'), "uec",
     'uec: a [uec] table needs transport = "uec" (without it, messages use the message transport)'),
    ("uec_at_hybrid_fidelity", doc(head=UEC + 'fidelity = "hybrid"\n'), "fidelity",
     "fidelity: transport = \"uec\" runs at packet fidelity (hybrid's steady-state jumps do not model its windows); "
     'use fidelity = "packet"'),
    ("retransmit_with_uec", doc(tail='\n[retransmit]\nrto = "100us"\n'), "retransmit", None),
    ("mtu_above_65535", doc(uec="mtu = 70000"), "uec.mtu", "uec.mtu: must be 64 B to 65,535 B, not 70000 B"),
    ("mtu_below_64", doc(uec="mtu = 63"), "uec.mtu", None),
    ("mtu_zero", doc(uec="mtu = 0"), "uec.mtu", None),
    ("header_not_below_mtu", doc(uec="header = 4150"), "uec.header",
     "uec.header: must be > 0 and below the MTU (4150 B), not 4150 B"),
    ("trim_size_below_header", doc(uec="trim_size = 10"), "uec.trim_size", None),
    ("trim_size_above_mtu", doc(uec="trim_size = 5000"), "uec.trim_size", None),
    ("entropies_not_a_power_of_two", doc(uec="entropies = 12"), "uec.entropies",
     "uec.entropies: must be a power of two from 1 to 65536, not 12"),
    ("entropies_above_65536", doc(uec="entropies = 131072"), "uec.entropies", None),
    ("pull_rate_above_one", doc(uec='cc = "rccc"\npull_rate = 1.5'), "uec.pull_rate",
     "uec.pull_rate: 1.5 is not a share of the line rate in (0, 1]"),
    ("pull_rate_zero", doc(uec='cc = "rccc"\npull_rate = 0'), "uec.pull_rate", None),
    ("pull_packets_zero", doc(uec="pull_packets = 0"), "uec.pull_packets", None),
    ("max_window_below_an_mtu", doc(uec="max_window = 4000"), "uec.max_window",
     "uec.max_window: must hold at least one MTU (4150 B), not 4000 B"),
    ("ecn_low_above_ecn_high", doc(uec="ecn_low = 100000\necn_high = 50000"), "uec.ecn_low",
     "uec.ecn_low: 100000 B is above the high threshold 50000 B"),
    ("ack_timer_zero", doc(uec='ack_timer = "0us"'), "uec.ack_timer", None),
    ("rto_above_one_second", doc(uec='rto = "2s"'), "uec.rto", None),
    ("unknown_cc", doc(uec='cc = "dcqcn"'), "uec.cc", None),
    # TOML reads nan and inf; JSON carries neither, so they are named before the engine's reader (found by the fuzzer)
    ("header_infinite", doc(uec="header = -inf"), "uec.header", "uec.header: must be a finite number, got -inf"),
    ("mtu_nan", doc(uec="mtu = nan"), "uec.mtu", "uec.mtu: must be a finite number, got nan"),
    ("entropies_infinite", doc(uec="entropies = inf"), "uec.entropies", None),
    ("pull_rate_infinite", doc(uec='cc = "rccc"\npull_rate = inf'), "uec.pull_rate", None),
    ("unknown_key", doc(uec="window = 3"), "uec.window", "uec.window: unknown key"),
]


@pytest.mark.parametrize("command", ["run", "validate"])
@pytest.mark.parametrize("text, key, line", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_uec_input_is_one_line_naming_the_key_exit_2(tmp_path, capsys, command, text, key, line):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    code = main([command, str(path)])
    out, err = capsys.readouterr()
    assert code == 2, err
    assert out == ""
    assert err.count("\n") == 1 and err.endswith("\n"), err
    assert err.startswith(f"{path}: {key}:"), err
    assert "Traceback" not in err and "panicked" not in err and "internal error" not in err.lower()
    if line is not None:
        assert err == f"{path}: {line}\n"


def test_through_the_interpreter(tmp_path):
    """Two of them through `python -m fabricsim.cli run`: no traceback, no panic, exit 2, one line."""
    for name, text, key, _ in (CASES[0], CASES[3]):
        path = tmp_path / f"{name}.toml"
        path.write_text(text)
        p = subprocess.run([sys.executable, "-m", "fabricsim.cli", "run", str(path)], capture_output=True, text=True)
        assert (p.returncode, p.stdout, p.stderr.count("\n")) == (2, "", 1), p.stderr
        assert p.stderr.startswith(f"{path}: {key}:") and "Traceback" not in p.stderr


@pytest.mark.parametrize("uec, field, reason", [
    ({"entropies": 12}, "uec.entropies", "must be a power of two from 1 to 65536, not 12"),
    ({"spray": "reps", "entropies": 1}, "uec.entropies", None),
    ({"ecn_low": 5000, "ecn_high": 4000}, "uec.ecn_low", "5000 B is above the high threshold 4000 B"),
    ({"rto": "2s"}, "uec.rto", None),
    ({"mtu": 0}, "uec.mtu", None),
    ({"window": 3}, "uec.window", "unknown key"),
    ({"max_window": float("inf")}, "uec.max_window", "must be a finite number, got inf"),
])
def test_the_python_api_raises_a_scenario_error_naming_the_key(uec, field, reason):
    d = {"transport": "uec", "topology": {"kind": "leaf_spine", "racks": 2, "spines": 2, "hosts_per_rack": 2,
                                          "host_rate": "100Gbps", "fabric_rate": "100Gbps"},
         "uec": uec, "messages": [{"name": "m", "src": "h0", "dst": "h3", "size": 100_000}]}
    with pytest.raises(ScenarioError) as e:
        fs.scenario_from_dict(d)
    assert e.value.field == field
    assert str(e.value).startswith(f"<scenario>: {field}: ")
    if reason is not None:
        assert e.value.reason == reason


INCAST = """
transport = "uec"
fidelity = "flow"

[topology]
kind = "custom"
nodes = [{name = "h0", kind = "host"}, {name = "h1", kind = "host"}, {name = "sw", kind = "switch"},
         {name = "h2", kind = "host"}]
links = [{a = "h0", b = "sw", rate = "100Gbps", delay = "1us"}, {a = "h1", b = "sw", rate = "100Gbps", delay = "1us"},
         {a = "sw", b = "h2", rate = "100Gbps", delay = "1us"}]

[uec]
spray = "ecmp"

[[messages]]
name = "a"
src = "h0"
dst = "h2"
size = 408600

[[messages]]
name = "b"
src = "h1"
dst = "h2"
size = 818200
"""


def test_uec_with_ecmp_runs_at_flow_fidelity_to_the_maxmin_completion(tmp_path):
    """A 2 -> 1 incast at flow fidelity, by hand. UEC's MTU 4,150 B with its 64 B header leaves 4,086 B of payload
    a packet (the message transport's packet_size does not apply).
    - a: 408,600 B = 100 full packets: 100 x 4,150 B = 415,000 B = 3,320,000 bits on the wire.
    - b: 818,200 B = 200 full packets and a last one of 1,000 B: 818,200 + 201 x 64 = 831,064 B = 6,648,512 bits;
      its last packet is 1,064 B on the wire.
    Max-min: sw -> h2 (100 Gb/s) is the shared bottleneck, so each gets 50 Gb/s until a has sent its bits, at
    3,320,000 / 50 Gb/s = 66.4 us; b has then sent 3,320,000 bits too and sends its other 3,328,512 alone at 100 Gb/s,
    by 66.4 + 33.28512 = 99.68512 us. Delivery is the last bit leaving the NIC plus the path: two 1 us links (the
    custom switch has no latency) and the store-and-forward of the last packet at the switch: a's 4,150 B at
    100 Gb/s = 0.332 us, b's 1,064 B = 0.08512 us (tests/test_link_rate.py and crates/fabricsim-flow's model).
    a: 66.4 + 2 + 0.332 = 68.732 us; b: 99.68512 + 2 + 0.08512 = 101.77024 us (the run's completion)."""
    path = tmp_path / "incast.toml"
    path.write_text(INCAST)
    rec = fs.run(fs.load_scenario(path))
    assert rec.fidelity == "flow" and rec.complete
    assert rec.message_completion_s() == pytest.approx([68.732e-6, 101.77024e-6], abs=1e-15)
    assert rec.completion_time_s == pytest.approx(101.77024e-6, abs=1e-15)
    assert main(["validate", str(path)]) == 0


@pytest.mark.parametrize("native", [True, False])
def test_hybrid_fidelity_asked_on_the_command_line_is_refused_too(tmp_path, native):
    """`--fidelity hybrid` overrides the file's fidelity, so the engine refuses UEC at hybrid fidelity itself: one
    line, exit 2, through the native front door (`--json --quiet`) and through click; the API raises."""
    path = tmp_path / "u.toml"
    path.write_text(doc())
    argv = [sys.executable, "-c", "import sys; from fabricsim._entry import main; sys.exit(main())", "run", str(path), "--fidelity", "hybrid"]
    r = subprocess.run(argv + (["--json", "--quiet"] if native else []), capture_output=True, text=True)
    want = (f"{path}: fidelity: transport = \"uec\" runs at packet fidelity (hybrid's steady-state jumps do not model "
            "its windows); use fidelity = \"packet\"")
    assert (r.returncode, r.stdout, r.stderr.strip()) == (2, "", want)
    with pytest.raises(ScenarioError) as e:
        fs.run(fs.load_scenario(path), fidelity="hybrid")
    assert e.value.field == "fidelity"
