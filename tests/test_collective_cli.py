"""`fabricsim collective` on any fabric: completion times by hand, what --size means per pattern, seeds, the
progress bar, and one-line errors.

The hand calculations use the store-and-forward rule of docs/guide/packet-engine.md's "Model semantics": one message of P
packets over k equal hops completes at (P + k − 1)·ser + k·delay + (k − 1)·latency.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from conftest import TWO_HOSTS
from fabricsim.cli import main

BIN = Path(sys.executable).parent / "fabricsim"
ROOT = Path(__file__).resolve().parents[1]

# Two hosts on one switch: 10 Gb/s links of 1 us, 500 ns switch latency. A 1024-byte packet serializes in
# 1024·8 / 10e9 s = 819.2 ns.
SER_NS, DELAY_NS, LATENCY_NS, HOPS = 819.2, 1000.0, 500.0, 2


def message_ns(size: int) -> float:
    """One message of `size` bytes (1024-byte packets) from h0 to h1, alone on its links."""
    packets = -(-size // 1024)
    return (packets + HOPS - 1) * SER_NS + HOPS * DELAY_NS + (HOPS - 1) * LATENCY_NS


@pytest.fixture
def two_hosts(tmp_path) -> str:
    p = tmp_path / "two.toml"
    p.write_text(TWO_HOSTS)
    return str(p)


def run_json(capsys, *args: str) -> dict:
    assert main(["collective", *args, "--workers", "0", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


S = 65536  # --size 64KiB


@pytest.mark.parametrize("pattern, expected_ns", [
    # All-to-All: S to each other node; h0 -> h1 and h1 -> h0 use opposite directions of full-duplex links.
    ("all-to-all", message_ns(S)),
    # All-Gather: each node's block of S to every other node: the same two messages.
    ("all-gather", message_ns(S)),
    # All-Reduce (All-to-All then All-Gather): S per destination in each part, the second part starting when
    # the first delivered.
    ("shift-all-reduce", 2 * message_ns(S)),
    # Ring all-reduce: S is the whole buffer, 2(N − 1) = 2 steps of S/N = S/2 each.
    ("ring-all-reduce", 2 * message_ns(S // 2)),
    # Reduce-scatter: N − 1 = 1 step of S/2.
    ("reduce-scatter", message_ns(S // 2)),
])
def test_two_node_collectives_by_hand(capsys, two_hosts, pattern, expected_ns):
    out = run_json(capsys, "--fabric", two_hosts, "--nodes", "1,2", "--pattern", pattern, "--size", "64KiB",
                   "--seeds", "3")
    assert out["bytes"] == S and out["seeds"] == [1, 2, 3] and out["runs"] == 3
    ct = out["completion_time_ms"]
    assert ct["mean"] == pytest.approx(expected_ns * 1e-6, rel=1e-12)
    assert ct["ci95"] == pytest.approx(0.0, abs=1e-12)  # one path, no contention: every seed alike
    # Every packet crosses the one switch: 1 switch hop. Messages: 2 (a2a, ag), 4 (all-reduce), 2 x 2 steps
    # (ring) or 2 (reduce-scatter) of S or S/2 bytes.
    packets = {"all-to-all": 2 * 64, "all-gather": 2 * 64, "shift-all-reduce": 4 * 64, "ring-all-reduce": 4 * 32,
               "reduce-scatter": 2 * 32}[pattern]
    assert out["hop_packets"] == {"1": packets, "3": 0}
    assert isinstance(out["hop_packets"]["1"], int)
    # Throughput = delivered payload bits / completion; per interface = over the 2 nodes' one NIC each.
    bits = packets * 1024 * 8
    assert out["throughput_gbps"]["mean"] == pytest.approx(bits / expected_ns, rel=1e-9)
    assert out["throughput_per_interface_gbps"]["mean"] == pytest.approx(bits / expected_ns / 2, rel=1e-9)


def test_text_output_names_the_seeds(capsys, two_hosts):
    assert main(["collective", "--fabric", two_hosts, "--nodes", "h0,h1", "--pattern", "all-to-all",
                 "--size", "64KiB", "--seed", "7", "--seeds", "2", "--workers", "0"]) == 0
    text = capsys.readouterr().out
    assert "over 2 runs, seeds 7..8" in text
    # 55.748 us = 0.055748 ms, shown to 4 significant digits; 128 packets of one switch hop.
    assert "completion 0.05575 ± 0.00000 ms" in text and "1-hop 128" in text
    assert main(["collective", "--fabric", two_hosts, "--nodes", "h0,h1", "--size", "64KiB", "--seed", "4",
                 "--seeds", "1", "--workers", "0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["seeds"] == [4] and out["completion_time_ms"]["ci95"] is None


def test_old_size_options_are_deprecated_aliases_of_size(capsys, two_hosts):
    # --msg-mib and --msg-mb (MiB) still work for one release: the same run as --size, one warning line each.
    a = run_json(capsys, "--fabric", two_hosts, "--nodes", "1,2", "--size", "64KiB", "--seeds", "1")
    for old in ("--msg-mib", "--msg-mb"):
        assert main(["collective", "--fabric", two_hosts, "--nodes", "1,2", old, "0.0625", "--seeds", "1",
                     "--workers", "0", "--json"]) == 0
        cap = capsys.readouterr()
        b = json.loads(cap.out)
        assert a["completion_time_ms"] == b["completion_time_ms"] and b["bytes"] == S
        assert cap.err == f"fabricsim collective: {old} is deprecated; use --size 0.0625MiB\n"
    assert main(["collective", "--nodes", "1,2", "--msg-mb", "1", "--msg-mib", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--size" in err and "not both" in err
    assert main(["collective", "--help"]) == 0
    help_text = capsys.readouterr().out
    assert "--size SIZE" in help_text and "--msg-" not in help_text
    flat = " ".join(help_text.split()).replace("- ", "-")  # click wraps lines after hyphens too
    for words in ("all-to-all: what a node sends to each other node", "ring-all-reduce: a node's whole buffer",
                  "a bare number is bytes"):
        assert words in flat


def test_size_units_are_the_scenario_files(capsys, two_hosts):
    # 64KiB = 65536 B (binary), 64kB = 64000 B (decimal), a bare number is bytes; a bit unit is refused.
    for text, n in (("64KiB", 65536), ("64kB", 64000), ("64000", 64000), ("0.0625MiB", 65536)):
        assert run_json(capsys, "--fabric", two_hosts, "--nodes", "1,2", "--size", text, "--seeds", "1")["bytes"] == n
    assert main(["collective", "--nodes", "1,2", "--size", "1Mb"]) == 2
    assert "bit unit" in capsys.readouterr().err


def test_vela_contention_free_all_to_all(capsys):
    # 4n_1r: servers 1-4 on one leaf (NIC 0), 1 switch hop. In each phase every node sends 1 MiB = 1024 packets
    # to a different node, back to back: the NIC is busy for 3·1024 packets of 81.92 ns (100 Gb/s), and the last
    # one arrives one leaf traversal (1.5 us) and one serialization later (links have no delay).
    out = run_json(capsys, "--fabric", "vela", "--placement", "4n_1r", "--pattern", "all-to-all", "--size", "1MiB",
                   "--seeds", "2")
    ser = 1024 * 8 / 100e9
    assert out["completion_time_ms"]["mean"] == pytest.approx((3 * 1024 * ser + ser + 1.5e-6) * 1e3, rel=1e-12)
    assert out["hop_packets"] == {"1": 12 * 1024, "3": 0} and out["seeds"] == [1, 2]


def test_fabric_file_spread_placement_counts_hops(capsys):
    # spread:8 on 2 racks of 8: h0, h8, h1, h9, ... (4 per rack). Of the 8·7 = 56 messages of 1 MiB (1024
    # packets), 2·4·3 = 24 stay in a rack (1 switch hop) and 32 cross a spine (3 hops).
    out = run_json(capsys, "--fabric", str(ROOT / "examples/leaf_spine_16.toml"), "--placement", "spread:8",
                   "--pattern", "all-to-all", "--size", "1MiB", "--seeds", "2", "--fidelity", "flow")
    assert out["servers"] == [["h0", "h8", "h1", "h9", "h2", "h10", "h3", "h11"]]
    assert out["hop_packets"] == {"1": 24 * 1024, "3": 32 * 1024}


@pytest.mark.parametrize("args, words", [
    (["--fabric", "{two}", "--nodes", "1,2,99"], ["--nodes", "99", "1..2"]),
    (["--nodes", "1,2,99"], ["--nodes", "99", "1..24"]),
    (["--fabric", "{two}", "--placement", "spread:5"], ["--placement", "5 nodes", "2 hosts"]),
    (["--scenario", "{two}", "--fabric", "vela", "--nodes", "1,2"], ["--scenario", "--fabric", "not both"]),
    (["--fabric", "nowhere", "--nodes", "1,2"], ["--fabric", "vela", "fabric file"]),
    (["--nodes", "1,2", "--size", "0"], ["--size", "at least 1 byte"]),
])
def test_bad_input_is_one_line(capsys, two_hosts, args, words):
    assert main(["collective", *[a.replace("{two}", two_hosts) for a in args]]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    for w in words:
        assert w in err


def _run_with_stderr_on_a_terminal(args: list[str]) -> tuple[int, str, str]:
    """Run fabricsim with stderr on a pseudo-terminal (stdout piped); returns (code, stdout, terminal output)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 160, 0, 0))
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "120"}
    env.pop("NO_COLOR", None)
    p = subprocess.Popen([str(BIN), *args], stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    out = p.stdout.read().decode()
    p.stdout.close()
    code = p.wait()
    os.close(master)
    return code, out, b"".join(chunks).decode(errors="replace")


def test_progress_bar_only_on_a_terminal(two_hosts):
    args = ["collective", "--fabric", two_hosts, "--nodes", "1,2", "--size", "64KiB", "--seeds", "3",
            "--workers", "0"]
    code, out, tty = _run_with_stderr_on_a_terminal(args)
    assert code == 0 and "seeds 1..3" in out
    assert "all-reduce on two.toml, seeds" in tty and "3/3" in tty  # the bar: its label, runs done of all
    r = subprocess.run([str(BIN), *args], capture_output=True, text=True)
    assert r.returncode == 0 and r.stderr == "" and "seeds 1..3" in r.stdout
    code, _, tty = _run_with_stderr_on_a_terminal(args[:-4] + ["--seeds", "1", "--workers", "0"])
    assert code == 0 and "1/1" not in tty  # one seed: no bar


def test_a_collective_that_cannot_complete_says_why_and_exits_3(capsys, tmp_path):
    # A third host, and h1's link at 1 Gb/s behind lossy 2-packet queues: whatever reaches h1 at 10 Gb/s
    # overflows the switch's queue to h1, a packet is dropped, and its message (retransmission off) is never
    # delivered.
    f = tmp_path / "lossy.toml"
    f.write_text(TWO_HOSTS.replace('{name = "h1", kind = "host"}', '{name = "h1", kind = "host"}, '
                                   '{name = "h2", kind = "host"}')
                 .replace('{a = "h1", b = "s0", rate = "10Gbps"', '{a = "h1", b = "s0", rate = "1Gbps"')
                 .replace("links = [", 'links = [{a = "h2", b = "s0", rate = "10Gbps", delay = "1us"}, ')
                 + "[queue]\nlimit_packets = 2\n\n[retransmit]\nmax_retries = 0\n")
    args = ["collective", "--fabric", str(f), "--nodes", "h0,h2,h1", "--pattern", "all-to-all",
            "--size", "64KiB", "--seeds", "2", "--workers", "0"]
    assert main([*args, "--json"]) == 3
    cap = capsys.readouterr()
    out = json.loads(cap.out)  # valid JSON: no NaN for the means of runs that never completed
    assert out["complete"] is False and [r["seed"] for r in out["incomplete_runs"]] == [1, 2]
    assert all(r["incomplete_messages"] > 0 for r in out["incomplete_runs"])
    assert out["completion_time_ms"] == {"mean": None, "ci95": None, "n": 0}
    assert cap.err.count("\n") == 1 and cap.err.startswith("fabricsim collective: 2 of 2 runs did not complete")
    assert "gave up after [retransmit] max_retries timeouts without progress" in cap.err
    assert main(args) == 3
    assert "completion n/a ms" in capsys.readouterr().out
