"""Issue 33's scenario inputs that crashed, as a corpus: each is refused with one line naming the file and the key,
exit 2, before anything of its size is allocated (the memory budget, `crates/fabricsim-core/src/budget.rs`).

Every case runs the command line in a child process whose address space is capped at 3 GiB (RLIMIT_AS), so a case
that allocated before refusing would abort (exit 134) or raise MemoryError instead of printing its line. The budget
is always given (`--memory-limit`, or FABRICSIM_MEMORY_LIMIT for the API), so the results do not depend on the
machine. The estimates' numbers are worked out by hand beside each case with the calibrated per-item costs of
budget.rs: ELEMENT_BYTES = 3,000 per node or link, MESSAGE_BYTES = 800 per message, BIN_BYTES = 24 per throughput
bin, SAMPLE_BYTES = 84 per queue-sample row.
"""

from __future__ import annotations

import json
import re
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from fabricsim.errors import ScenarioError

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "python" / "fabricsim" / "_data" / "examples"
CAP = 3 << 30


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))


def cli(*args: str, entry: bool = False) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of `fabricsim ARGS` (the click CLI, or the console script's native start with
    `entry`), its address space capped."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python")}
    env.pop("FABRICSIM_MEMORY_LIMIT", None)
    code = ("import sys; from fabricsim._entry import main; sys.argv = ['fabricsim', *sys.argv[1:]]; sys.exit(main())"
            if entry else "import sys; from fabricsim.cli import main; sys.exit(main())")
    p = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env,
                       preexec_fn=_capped, timeout=120)
    return p.returncode, p.stdout, p.stderr


def refused(args: list[str], path: Path, line: str, entry: bool = False) -> None:
    """The command exits 2 with exactly one line on stderr: `path: line`."""
    code, out, err = cli(*args, entry=entry)
    assert (code, err) == (2, f"{path}: {line}\n"), (code, out, err)
    assert out == ""


def mutated(tmp_path: Path, example: str, old: str, new: str) -> Path:
    """A shipped example with `old` replaced by `new` (once), written beside the test."""
    text = (EXAMPLES / example).read_text()
    assert old in text, f"{example} has no {old!r}"
    f = tmp_path / example
    f.write_text(text.replace(old, new, 1))
    return f


# link_failure.toml: an all-to-all of 8 hosts, 1 MiB to each other host, every host link 100 Gb/s. Its 56 messages
# carry 56 × 1,048,576 B = 58,720,256 B; at most 8 × 100 Gb/s leave the hosts at once, so the run lasts at least
# 58,720,256 × 8 / 800e9 s = 587.20256 us.
LENGTH = "0.000587203"


@pytest.mark.parametrize("command", ["run", "validate"])
def test_a_throughput_interval_of_1ps(tmp_path, command):
    # 587,202,560 bins of 1 ps (and the one the last picosecond falls in): 587,202,561 × 24 B = 14.09e9 B = 13 GiB.
    f = mutated(tmp_path, "link_failure.toml", 'throughput_interval = "10us"', 'throughput_interval = "1ps"')
    refused([command, str(f), "--memory-limit", "1GiB"], f,
            f"measure.throughput_interval: 587,202,561 throughput bins over at least {LENGTH} s would take about "
            "13 GiB, beyond the memory budget of 1.0 GiB (--memory-limit or FABRICSIM_MEMORY_LIMIT); raise the "
            "interval or set a stop time")


def test_queue_samples_every_1ps(tmp_path):
    # Every switch port is sampled: 8 host links (one switch end each) and 4 leaf–spine links (two) = 16 ports;
    # 587,202,560 samples × 16 = 9,395,240,960 rows × 84 B = 789e9 B = 735 GiB.
    f = mutated(tmp_path, "link_failure.toml", 'throughput_interval = "10us"', 'queue_interval = "1ps"')
    refused(["run", str(f), "--memory-limit", "1GiB"], f,
            f"measure.queue_interval: 9,395,240,960 queue-sample rows (16 ports) over at least {LENGTH} s would take "
            "about 735 GiB, beyond the memory budget of 1.0 GiB (--memory-limit or FABRICSIM_MEMORY_LIMIT); raise the "
            "interval, sample fewer queues or set a stop time")


def all_to_all(tmp_path: Path, ranks: int, fidelity: str = "packet") -> Path:
    f = tmp_path / f"a2a{ranks}.toml"
    f.write_text(f'fidelity = "{fidelity}"\n[topology]\nkind = "leaf_spine"\nracks = 1\nhosts_per_rack = {ranks}\n'
                 'spines = 1\nhost_rate = "100Gbps"\nfabric_rate = "400Gbps"\nswitch_model = "input_buffered"\n\n[[collectives]]\nkind = "all_to_all"\n'
                 'ranks = "all"\nsize = "1MiB"\n')
    return f


@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_4096_rank_all_to_all(tmp_path, command):
    # 4,096 × 4,095 = 16,773,120 messages × 800 B = 13.4e9 B = 12 GiB, counted before the collective is expanded
    # (validate took 3.5 GB, then run aborted).
    f = all_to_all(tmp_path, 4096)
    refused([command, str(f), "--memory-limit", "2GiB"], f,
            "collectives[0]: 16,773,120 messages would take about 12 GiB, beyond the memory budget of 2.0 GiB "
            "(--memory-limit or FABRICSIM_MEMORY_LIMIT); give fewer ranks or chunks, or a larger budget")


def test_a_10m_message_flow_run_through_the_native_start(tmp_path):
    # 3,163 × 3,162 = 10,001,406 messages × 800 B = 8.0e9 B = 7.5 GiB. The native start takes `run --json
    # --memory-limit`, declines, and the click CLI says it.
    f = all_to_all(tmp_path, 3163, "flow")
    refused(["run", str(f), "--json", "--memory-limit", "4GiB"], f,
            "collectives[0]: 10,001,406 messages would take about 7.5 GiB, beyond the memory budget of 4.0 GiB "
            "(--memory-limit or FABRICSIM_MEMORY_LIMIT); give fewer ranks or chunks, or a larger budget", entry=True)


def test_a_within_budget_run_still_runs(tmp_path):
    # The same file with 4 ranks: 12 messages; 6 nodes and 5 links (33 kB) + 12 × 800 B, far within 500 MB.
    f = all_to_all(tmp_path, 4)
    code, out, err = cli("run", str(f), "--json", "--memory-limit", "500MB", "-q", entry=True)
    assert code == 0, err
    assert json.loads(out)["complete"] is True


TOO_LARGE = [
    # spines = 2^63 − 1: the count saturates.
    ("spines", '[topology]\nkind = "leaf_spine"\nracks = 2\nhosts_per_rack = 4\nspines = 9223372036854775807\n'
     'host_rate = "1Gbps"\nfabric_rate = "1Gbps"\n',
     "topology: more than 18 quintillion nodes and links (about 1.7e10 GiB before any traffic); fabricsim simulates "
     "at most 20,000,000"),
    # 10^9 routers and 10^9 hosts; 10^9 host links and 3 × 10^9 ring links: 6 × 10^9 × 3,000 B = 16,764 GiB.
    ("torus", '[topology]\nkind = "torus"\ndims = [1000, 1000, 1000]\nrate = "100Gbps"\n',
     "topology: 6,000,000,000 nodes and links (about 16,764 GiB before any traffic); fabricsim simulates at most "
     "20,000,000"),
    # 10^7 senders + 3 nodes, 10^7 + 2 links = 20,000,005 × 3,000 B = 56 GiB.
    ("dumbbell", '[topology]\nkind = "dumbbell"\nsenders = 10000000\n',
     "topology: 20,000,005 nodes and links (about 56 GiB before any traffic); fabricsim simulates at most "
     "20,000,000"),
    # k = 1000: k³/4 = 2.5 × 10^8 hosts + 5k²/4 = 1.25 × 10^6 switches, 3k³/4 = 7.5 × 10^8 links: 2,797 GiB.
    ("fat_tree3", '[topology]\nkind = "fat_tree3"\nk = 1000\nrate = "100Gbps"\n',
     "topology: 1,001,250,000 nodes and links (about 2,797 GiB before any traffic); fabricsim simulates at most "
     "20,000,000"),
    # 10^6 racks of one host: 10^6 hosts + 10^6 leaves + 1 spine; 10^6 host + 10^6 leaf–spine links. Within the
    # 20 million the engine simulates, but 4,000,001 × 3,000 B = 12.0e9 B = 11 GiB passes a 1 GiB budget.
    ("racks", '[topology]\nkind = "leaf_spine"\nracks = 1000000\nhosts_per_rack = 1\nspines = 1\n'
     'host_rate = "1Gbps"\nfabric_rate = "1Gbps"\n',
     "topology: 2,000,001 nodes and 2,000,000 links would take about 11 GiB, beyond the memory budget of 1.0 GiB "
     "(--memory-limit or FABRICSIM_MEMORY_LIMIT); give a smaller fabric or a larger budget"),
]


@pytest.mark.parametrize("name,text,line", TOO_LARGE, ids=[c[0] for c in TOO_LARGE])
@pytest.mark.parametrize("command", ["validate", "run", "topology"])
def test_a_fabric_too_large(tmp_path, name, text, line, command):
    f = tmp_path / f"{name}.toml"
    f.write_text(text)
    refused([command, str(f), "--memory-limit", "1GiB"], f, line)


@pytest.mark.parametrize("old,new,line", [
    ("seed = 1", "seed = 18446744073709551616", "seed: 18446744073709551616 is too large (at most 9223372036854775807)"),
    ("seed = 1", "seed = 9223372036854775808", "seed: 9223372036854775808 is too large (at most 9223372036854775807)"),
    ("limit_packets = 100 ", "limit_packets = -18446744073709551616 ",
     "queue.limit_packets: -18446744073709551616 is too small (at least -9223372036854775808)"),
    ('size = "1MiB"', "size = 99999999999999999999999",
     "messages[0].size: 99999999999999999999999 is too large (at most 9223372036854775807)"),
])
def test_an_integer_too_big_for_64_bits(tmp_path, old, new, line):
    f = mutated(tmp_path, "leaf_spine_incast.toml", old, new)
    refused(["validate", str(f)], f, line)
    refused(["run", str(f), "--json"], f, line, entry=True)


GRAPH_NODES = [{"id": "h0", "kind": "host"}, {"id": "h1", "kind": "host"}, {"id": "s", "kind": "switch"}]


@pytest.mark.parametrize("edges_key", ["edges", "links"])
@pytest.mark.parametrize("end", ["source", "target"])
def test_a_node_link_edge_whose_end_is_a_list(tmp_path, edges_key, end):
    edge = {"source": "h0", "target": "s", "rate": "100Gbps"}
    edge[end] = [edge[end]]
    g = tmp_path / "g.json"
    g.write_text(json.dumps({"directed": False, "multigraph": False, "graph": {}, "nodes": GRAPH_NODES,
                             edges_key: [{"source": "h1", "target": "s", "rate": "100Gbps"}, edge]}))
    f = tmp_path / "s.toml"
    f.write_text('[topology]\nkind = "graph"\nfile = "g.json"\n')
    code, out, err = cli("validate", str(f))
    assert (code, err) == (2, f"{g}: {edges_key}[1]: an edge's source and target are node ids (strings or integers)\n")


def test_a_graphml_edge_without_a_source(tmp_path):
    g = tmp_path / "g.graphml"
    g.write_text('<?xml version="1.0" encoding="UTF-8"?>\n<graphml xmlns="http://graphml.graphdrawing.org/xmlns">\n'
                 '<key id="k" for="node" attr.name="kind" attr.type="string"/>\n'
                 '<key id="r" for="edge" attr.name="rate" attr.type="string"/>\n<graph edgedefault="undirected">\n'
                 '<node id="h0"><data key="k">host</data></node><node id="s"><data key="k">switch</data></node>\n'
                 '<edge target="s"><data key="r">100Gbps</data></edge>\n</graph></graphml>\n')
    f = tmp_path / "s.toml"
    f.write_text('[topology]\nkind = "graph"\nfile = "g.graphml"\n')
    code, out, err = cli("validate", str(f))
    assert (code, err) == (2, f"{g}: edge ('', 's'): node '' does not exist\n")


@pytest.mark.parametrize("value", ["lots", "0", "-1GB"])
def test_a_malformed_memory_limit(tmp_path, value):
    code, out, err = cli("validate", str(EXAMPLES / "leaf_spine_16.toml"), "--memory-limit", value)
    assert code == 2 and len(err.splitlines()) == 1 and "'--memory-limit'" in err, err


def test_the_api_reads_the_budget_from_the_environment(tmp_path, monkeypatch):
    import fabricsim
    from fabricsim import _core

    f = all_to_all(tmp_path, 4096)
    monkeypatch.setenv("FABRICSIM_MEMORY_LIMIT", "2GiB")
    assert _core.memory_budget() == (2 << 30, "env")
    with pytest.raises(ScenarioError) as e:
        fabricsim.load_scenario(f)
    assert (e.value.field, e.value.reason.split(" would")[0]) == ("collectives[0]", "16,773,120 messages")
    monkeypatch.setenv("FABRICSIM_MEMORY_LIMIT", "much")
    with pytest.raises(ScenarioError) as e:
        fabricsim.load_scenario(EXAMPLES / "leaf_spine_16.toml")
    # Said where the budget is first needed (the fabric), naming the variable.
    assert e.value.reason.startswith('FABRICSIM_MEMORY_LIMIT: "much" is not a memory size'), e.value.reason


def test_the_estimate_item_by_item():
    # link_failure.toml through the engine's estimate: 8 hosts + 2 leaves + 2 spines = 12 nodes, 8 + 4 = 12 links
    # (24 × 3,000 B); 56 messages × 800 B; 587,202,560 / 10,000,000 ps + 1 = 59 bins × 24 B.
    from fabricsim import _core
    from fabricsim.engine import _columns, _header

    sc = __import__("fabricsim").load_scenario(EXAMPLES / "link_failure.toml")
    items, length_ps = _core.memory_estimate(_header(sc, None, "packet"), _columns(sc, None))
    assert length_ps == 587_202_560
    assert [(k, b) for k, _, b in items] == [("topology", 72_000), ("messages", 44_800),
                                             ("measure.throughput_interval", 1_416)]


def test_a_run_longer_than_estimated_stops_when_its_bins_pass_the_budget(tmp_path):
    # One 1 MB message over a dumbbell (1 Gb/s access links, a 100 Mb/s bottleneck, 2 + 5 + 2 ms of delay): the
    # estimate's lower bound is 1e6 × 8 bits over both host links at once (2 Gb/s) = 4 ms, 4,001 bins of 1 us
    # (96,024 B); with the fabric (4 nodes + 3 links = 21,000 B) and the message (800 B), 117,824 B. A budget of
    # 117,824 + 10,000 × 24 = 357,824 B leaves 10,000 bins, 10 ms; the first packet arrives after 9 ms of delay
    # and the message takes 80 ms through the bottleneck, so the run stops just past 10 ms, said in one line.
    f = tmp_path / "slow.toml"
    f.write_text('[topology]\nkind = "dumbbell"\nsenders = 1\nswitch_model = "input_buffered"\n'
                 '[measure]\nthroughput_interval = "1us"\n'
                 '[[messages]]\nname = "m"\nsrc = "sender0"\ndst = "receiver"\nsize = "1MB"\n')
    code, out, err = cli("run", str(f), "--memory-limit", "357824")
    assert code == 2 and len(err.splitlines()) == 1, err
    assert re.fullmatch(
        rf"{re.escape(str(f))}: measure\.throughput_interval: the run passed t = 0\.010\d* s, more than 10,000 "
        r"throughput bins \(about 240 kB\), what is left of the memory budget of 358 kB \(--memory-limit or "
        r"FABRICSIM_MEMORY_LIMIT\): raise the interval or set a stop time\n", err), err
    # With room for 100,000 bins (100 ms) the whole run fits and completes.
    code, out, err = cli("run", str(f), "--memory-limit", str(117_824 + 100_000 * 24), "--json", "-q")
    assert code == 0 and json.loads(out)["complete"], err


def test_an_in_process_memory_limit_is_restored_after_the_command(tmp_path, monkeypatch, capsys):
    """`fabricsim.cli.main([... --memory-limit 1MB])` run in a notebook or a test sets FABRICSIM_MEMORY_LIMIT for
    that command only: afterwards the variable is as it was (unset here), so the next call has the machine's
    budget again."""
    import os

    from fabricsim.cli import main

    monkeypatch.delenv("FABRICSIM_MEMORY_LIMIT", raising=False)
    src = tmp_path / "tiny.toml"
    src.write_text('[topology]\nkind = "dumbbell"\nsenders = 2\n[[messages]]\nsrc = "s0"\ndst = "r"\nsize = "1KB"\n')
    main(["validate", str(src), "--memory-limit", "1MB"])
    capsys.readouterr()
    assert "FABRICSIM_MEMORY_LIMIT" not in os.environ
