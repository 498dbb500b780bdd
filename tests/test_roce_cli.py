"""RoCEv2 on the command line: bad keys are one line naming the file and the key (exit 2), --json carries the
RoCE counters, a PFC deadlock exits 3 naming its cycle with the record kept, --figure, and the RoCE examples."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from fabricsim.cli import main

from test_roce_api import ring, star

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def toml_value(v) -> str:
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return json.dumps(v)


def write(tmp_path: Path, d: dict, name: str = "s.toml") -> Path:
    """`d` as a TOML file: top-level scalars, then tables ([pfc], [topology], ...), then arrays of tables."""
    lines = [f"{k} = {toml_value(v)}" for k, v in d.items() if not isinstance(v, (dict, list))]
    for k, v in d.items():
        if isinstance(v, dict):
            lines += [f"[{k}]"] + [f"{kk} = {toml_value(x)}" for kk, x in v.items()]
    for k, v in d.items():
        if isinstance(v, list):
            for row in v:
                lines += [f"[[{k}]]"] + [f"{kk} = {toml_value(x)}" for kk, x in row.items()]
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    assert tomllib.loads(p.read_text()) == d
    return p


def one_line(capsys) -> tuple[str, str]:
    out, err = capsys.readouterr()
    lines = err.strip("\n").split("\n")
    assert len(lines) == 1, err
    return out, lines[0]


@pytest.mark.parametrize("extra, key, words", [
    ({"ecn": {"kmin": "2MB"}}, "ecn.kmin", "Kmin 2000000 B is above Kmax 400000 B"),
    ({"ecn": {"rate": [{"rate": "100Gbps", "kmin": "5kB", "kmax": "1kB", "pmax": 0.1}]}}, "ecn.rate[0].kmin",
     "Kmin 5000 B is above Kmax 1000 B"),
    ({"pfc": {"alpha": -0.5}, "ecn": {}}, "pfc.alpha", "-0.5 is not a dynamic-threshold factor in (0, 64]"),
    ({}, "rdma.cc", "dcqcn reacts to ECN marks, but the scenario has no [ecn] section"),
    ({"transport": "message", "rdma": {"cc": "none"}}, "rdma", 'an [rdma] table needs transport = "rdma"'),
    ({"fidelity": "flow", "rdma": {"cc": "none"}}, "transport", "runs only in the packet engine"),
    ({"ecn": {}, "rdma": {"cc": "reno"}}, "rdma.cc", "must be 'none', 'dcqcn' or 'hpcc'"),
    ({"ecn": {}, "rdma": {"nack_interval": "-1us"}}, "rdma.nack_interval", "must not be negative"),
])
def test_bad_roce_keys_are_one_line_naming_the_file_and_key_exit_2(tmp_path, capsys, extra, key, words):
    path = write(tmp_path, star("a", **extra))
    for cmd in (["run", str(path), "--json"], ["validate", str(path)]):
        assert main(cmd) == 2
        out, line = one_line(capsys)
        assert out == ""
        assert line.startswith(f"{path}: {key}: ") and words in line, line


def test_fidelity_flow_on_the_command_line_refuses_the_rdma_transport(tmp_path, capsys):
    path = write(tmp_path, star("a", rdma={"cc": "none"}))
    assert main(["run", str(path), "--fidelity", "flow"]) == 2
    assert one_line(capsys)[1].startswith(f"{path}: transport: the RDMA transport")


def test_json_has_the_roce_counters_and_rdma_ack_flows(tmp_path, capsys):
    """One 100-packet message, cc none: one ACK flow ("rdma-ack") with 100 ACKs; nothing queues, so no pause,
    mark or CNP (see test_roce_api for the hand calculation)."""
    path = write(tmp_path, star("a", size=100_000, rdma={"cc": "none"}))
    assert main(["run", str(path), "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    counters = ("pfc_pauses", "pfc_paused_s", "ecn_marks", "cnps", "deadlock")
    assert [rec[k] for k in counters] == [0, 0.0, 0, 0, None]
    assert [(f["name"], f["kind"], f["rx_packets"]) for f in rec["flows"]] == [("a", "message", 100),
                                                                               ("a/ack", "rdma-ack", 100)]
    assert rec["complete"] is True


def test_json_of_a_run_without_roce_has_deadlock_only(capsys):
    assert main(["run", str(EXAMPLES / "leaf_spine_incast.toml"), "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["deadlock"] is None
    assert not {"pfc_pauses", "pfc_paused_s", "ecn_marks", "cnps"} & set(rec)


def test_deadlock_exits_3_naming_the_cycle_with_the_record_and_figure_kept(tmp_path, capsys):
    path = write(tmp_path, ring(watchdog="10us"))
    fig = tmp_path / "ring.png"
    assert main(["run", str(path), "--json", "--figure", str(fig)]) == 3
    out, err = capsys.readouterr()
    rec = json.loads(out)
    cycle = rec["deadlock"].split(" -> ")
    assert cycle[0] == cycle[-1] and sorted(cycle[:-1]) == ["A->B", "B->C", "C->A"]
    assert rec["complete"] is False and rec["incomplete_messages"] == 3 and rec["halted"] is None
    assert rec["pfc_pauses"] > 0 and rec["packets"]["in_flight"] > 0 and rec["packets"]["dropped"] == 0
    assert sum(f["rx_packets"] for f in rec["flows"] if f["kind"] == "message") == rec["packets"]["rx"] - sum(
        f["rx_packets"] for f in rec["flows"] if f["kind"] == "rdma-ack")
    lines = err.strip().splitlines()
    assert lines[0] == f"wrote {fig}"
    assert lines[1] == (f"fabricsim: {path}: deadlock: a cycle of paused ports: {rec['deadlock']}; 3 message(s) "
                        "never delivered (mA, mB, mC)")
    assert len(lines) == 2
    assert fig.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_human_output_has_a_roce_line(tmp_path, capsys):
    path = write(tmp_path, star("ab", ecn={"kmin": 0, "kmax": 0, "pmax": 1.0}, pfc={"buffer": "1MB"},
                                rdma={"cc": "none"}))
    assert main(["run", str(path)]) == 0
    out = capsys.readouterr().out
    roce = [line for line in out.splitlines() if line.startswith("RoCE: ")]
    assert len(roce) == 1 and roce[0].endswith("; no deadlock") and " PFC pauses (" in roce[0]


def test_figure_needs_a_roce_scenario_or_throughput_bins_and_an_image_path(tmp_path, capsys):
    assert main(["run", str(EXAMPLES / "leaf_spine_incast.toml"), "--figure", str(tmp_path / "x.png")]) == 2
    assert "--figure draws the delivered throughput over time: set [measure] throughput_interval" in one_line(capsys)[1]
    assert main(["run", str(EXAMPLES / "roce_incast.toml"), "--figure", str(tmp_path / "x.nope")]) == 2
    assert "has no image suffix" in one_line(capsys)[1]
    assert not list(tmp_path.iterdir())


def test_roce_incast_example(tmp_path, capsys):
    """8 × 10 MB of 1000 B packets: 80,000 data packets and as many ACKs, all delivered (PFC: no loss); every
    mark is at the bottleneck sw->rx and every marked packet's ACK brings a CNP back (one switch: a packet is
    marked at most once)."""
    fig = tmp_path / "incast.png"
    assert main(["run", str(EXAMPLES / "roce_incast.toml"), "--json", "--figure", str(fig)]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["complete"] and rec["packets"]["dropped"] == 0 and rec["packets"]["rx"] == 2 * 80_000
    acks = [f for f in rec["flows"] if f["kind"] == "rdma-ack"]
    assert len(acks) == 8 and all(f["rx_packets"] == 10_000 for f in acks)
    assert rec["ecn_marks"] > 0 and rec["cnps"] == rec["ecn_marks"]
    assert fig.stat().st_size > 10_000


def test_roce_allreduce_example(capsys):
    """A ring all-reduce of 64 MiB over 8 ranks: 2 × 7 steps of one 8 MiB message per rank (112 QPs, each with
    its ACK flow); 8 MiB = 8,389 packets of at most 1000 B, so 112 × 8,389 data packets and as many ACKs."""
    assert main(["run", str(EXAMPLES / "roce_allreduce.toml"), "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)
    msgs = [f for f in rec["flows"] if f["kind"] == "message"]
    acks = [f for f in rec["flows"] if f["kind"] == "rdma-ack"]
    assert len(msgs) == len(acks) == 112
    assert rec["complete"] and rec["packets"]["dropped"] == 0
    assert rec["packets"]["rx"] == 2 * 112 * 8389
    assert rec["deadlock"] is None and {"pfc_pauses", "ecn_marks", "cnps"} <= set(rec)
