"""`fabricsim compare` (issue 33, deliverable 6): the side-by-side table's numbers against the records' own, computed
here by hand from the JSON; the ideal FCT of the RoCE incast by hand; bad input in one line with exit 2."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from fabricsim.cli import main

ROOT = Path(__file__).resolve().parents[1]
ROCE = ROOT / "examples" / "roce_incast.toml"
FABRICSIM = [sys.executable, "-m", "fabricsim.cli"]
IDEAL_S = 10_480_000 * 8 / 100e9 + 2e-6
"""The RoCE incast's ideal FCT by hand: each message is 10,000 packets of 1,000 B payload + 48 B header = 10,480,000
bytes on the wire; alone, it crosses s_i -> sw -> rx at 100 Gb/s (838.4 us) plus two 1 us links (no switch latency
is set): 840.4 us."""


@pytest.fixture(scope="module")
def records(tmp_path_factory) -> dict[str, Path]:
    """dcqcn.json: `run --seeds 2 --json` of the RoCE incast (DCQCN); hpcc.json: `run --json` of it with HPCC."""
    d = tmp_path_factory.mktemp("compare")
    hpcc = d / "hpcc.toml"
    hpcc.write_text(ROCE.read_text().replace('cc = "dcqcn"', 'cc = "hpcc"'))
    out = {}
    for name, args in (("dcqcn", [str(ROCE), "--seeds", "2"]), ("hpcc", [str(hpcc)])):
        p = d / f"{name}.json"
        p.write_text(subprocess.run([*FABRICSIM, "run", *args, "--json", "-q"], capture_output=True, text=True,
                                    check=True).stdout)
        out[name] = p
    return out


def call(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["compare", *args])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def by_hand(path: Path) -> dict:
    """What the table must say, from the JSON alone: FCTs = complete_s - start_s of the message flows, nearest-rank
    percentiles (the ⌈p·n/100⌉-th smallest), slowdown = FCT / IDEAL_S, and the RoCE counters' means."""
    doc = json.loads(path.read_text())
    recs = doc["runs"] if "runs" in doc else [doc]
    fct = sorted(f["complete_s"] - f["start_s"] for r in recs for f in r["flows"] if f["kind"] == "message")
    rank = lambda p: fct[max(1, math.ceil(p * len(fct) / 100)) - 1]  # noqa: E731
    times = [r["completion_time_s"] for r in recs]
    mean = sum(times) / len(times)
    half = None
    if len(times) == 2:  # t(0.975, 1) = 12.706204736174694; s = |a - b|/√2; half = t·s/√2 = t·|a - b|/2
        half = 12.706204736174694 * abs(times[0] - times[1]) / 2
    return {"n": len(recs), "messages": len(fct), "p50": rank(50), "p99": rank(99), "max": fct[-1],
            "slow_p50": rank(50) / IDEAL_S, "slow_p99": rank(99) / IDEAL_S, "mean": mean, "half": half,
            "ecn": sum(r["ecn_marks"] for r in recs) / len(recs), "cnps": sum(r["cnps"] for r in recs) / len(recs),
            "pauses": sum(r["pfc_pauses"] for r in recs) / len(recs),
            "peak": max(q["peak_bytes"] for r in recs for q in r["queues"])}


def test_json_numbers_are_the_records_own(capsys, records):
    code, out, err = call(capsys, str(records["dcqcn"]), str(records["hpcc"]), "--fabric", str(ROCE), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert [s["label"] for s in doc["runs"]] == ["dcqcn", "hpcc"]
    for s, name in zip(doc["runs"], ("dcqcn", "hpcc")):
        h = by_hand(records[name])
        assert (s["runs"], s["messages"], s["completed"]) == (h["n"], h["messages"], h["messages"]) == (
            (2, 16, 16) if name == "dcqcn" else (1, 8, 8))
        assert (s["fct_s"]["p50"], s["fct_s"]["p99"], s["fct_s"]["max"]) == (h["p50"], h["p99"], h["max"])
        assert math.isclose(s["slowdown"]["p50"], h["slow_p50"], rel_tol=1e-12)
        assert math.isclose(s["slowdown"]["p99"], h["slow_p99"], rel_tol=1e-12)
        assert s["slowdown"]["p50"] > 1, "nobody beats the ideal"
        ct = s["completion_time_s"]
        assert math.isclose(ct["mean"], h["mean"], rel_tol=1e-12)
        assert (ct["ci95"] is None) == (h["half"] is None)
        if h["half"] is not None:
            assert math.isclose(ct["ci95"], h["half"], rel_tol=1e-9)
        assert (s["ecn_marks"], s["cnps"], s["pfc_pauses"], s["peak_queue_bytes"]) == (
            h["ecn"], h["cnps"], h["pauses"], h["peak"])
    assert doc["runs"][0]["ecn_marks"] > 0 and doc["runs"][1]["ecn_marks"] == 0, "DCQCN marks; HPCC uses INT"


def test_the_table_shows_the_same_numbers(capsys, records):
    from fabricsim.units import format_duration

    code, out, _ = call(capsys, str(records["dcqcn"]), str(records["hpcc"]), "--fabric", str(ROCE))
    assert code == 0
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:-1]]
            for line in out.splitlines() if line.startswith("│")}
    a, b = by_hand(records["dcqcn"]), by_hand(records["hpcc"])
    assert rows["runs (seeds)"] == ["2 (1, 2)", "1 (1)"]
    assert rows["messages completed"] == ["16 of 16", "8 of 8"]
    assert rows["FCT p99"] == [format_duration(a["p99"] * 1e12), format_duration(b["p99"] * 1e12)]
    assert rows["slowdown p50"] == [f"{a['slow_p50']:.3f}", f"{b['slow_p50']:.3f}"]
    assert rows["ECN marks"] == [f"{a['ecn']:,.0f}", "0"]
    assert rows["completion time (mean, 95% CI)"][0] == (f"{format_duration(a['mean'] * 1e12)} ± "
                                                         f"{format_duration(a['half'] * 1e12)}")
    # without --fabric: no slowdown, and a line saying what gives it
    code, out, _ = call(capsys, str(records["hpcc"]))
    assert code == 0 and "slowdown: give --fabric" in out
    assert [ln for ln in out.splitlines() if ln.startswith("│ slowdown p50")][0].split("│")[2].strip() == "–"


def test_figure_and_page(capsys, records, tmp_path):
    png, page = tmp_path / "cmp.png", tmp_path / "cmp.html"
    code, _, err = call(capsys, str(records["dcqcn"]), str(records["hpcc"]), "--fabric", str(ROCE),
                        "--figure", str(png), "--html", str(page))
    assert code == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = page.read_text()
    assert "<b id='n-files'>2</b> files, <b id='n-runs'>3</b> runs, 24 messages" in text
    assert "data:image/png;base64," in text and "id='js-errors'" in text


def test_bad_input_is_one_line_and_exit_2(capsys, records, tmp_path):
    notjson = tmp_path / "x.json"
    notjson.write_text("{oops")
    summary = tmp_path / "sweep.json"
    summary.write_text(json.dumps({"sweep": "s", "points": []}))
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xff\xfe\x00\x01")
    cases = [
        ([str(tmp_path / "missing.json")], f"fabricsim compare: {tmp_path / 'missing.json'}: no such file"),
        ([str(notjson)], f"fabricsim compare: {notjson}: not JSON"),
        ([str(summary)], f"fabricsim compare: {summary}: not a run record"),
        ([str(binary)], f"fabricsim compare: {binary}: cannot read it"),
        ([str(tmp_path)], f"fabricsim compare: {tmp_path}: is a folder"),
        ([], "fabricsim compare: give one or more run records"),
        ([str(records["hpcc"]), "--fabric", "vela"], "fabricsim compare: --fabric: has no node 's0'"),
        ([str(records["hpcc"]), "--figure", str(tmp_path / "no" / "f.png")], "fabricsim compare: --figure: cannot write"),
        ([str(records["hpcc"]), "--html", str(tmp_path / "no" / "f.html")], "fabricsim compare: --html: cannot write"),
    ]
    for args, start in cases:
        code, out, err = call(capsys, *args)
        assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith(start), (args, err)


def test_a_sweep_store_gives_a_column_per_point(capsys, tmp_path):
    """A sweep of the RoCE incast over rdma.cc = dcqcn, hpcc (seeds 1, 2): one column per point, its numbers the
    stored metrics' (completion mean over the two seeds, the CI by hand, ECN marks' mean), and no FCT."""
    import sqlite3
    from contextlib import closing

    sweep = tmp_path / "cc.toml"
    sweep.write_text(f'name = "cc"\nbase = {json.dumps(str(ROCE))}\nseeds = 2\n[grid]\n"rdma.cc" = ["dcqcn", "hpcc"]\n')
    assert main(["sweep", str(sweep), "--store", str(tmp_path / "st"), "--workers", "0", "--json"]) == 0
    capsys.readouterr()
    code, out, err = call(capsys, str(tmp_path / "st"), "--json")
    assert code == 0, err
    cols = json.loads(out)["runs"]
    assert [c["label"] for c in cols] == ["cc[rdma.cc = dcqcn]", "cc[rdma.cc = hpcc]"]
    with closing(sqlite3.connect(tmp_path / "st" / "results.sqlite")) as con:
        stored = con.execute("SELECT params, seed, metrics FROM runs ORDER BY rowid").fetchall()
    for c, cc in zip(cols, ("dcqcn", "hpcc")):
        ms = [json.loads(m) for p, _, m in stored if json.loads(p)["rdma.cc"] == cc]
        a, b = (m["completion_time_s"] for m in ms)
        assert c["runs"] == 2 and c["seeds"] == [1, 2] and c["fct_s"] is None and c["messages"] is None
        assert math.isclose(c["completion_time_s"]["mean"], (a + b) / 2, rel_tol=1e-12)
        assert math.isclose(c["completion_time_s"]["ci95"], 12.706204736174694 * abs(a - b) / 2, rel_tol=1e-9)
        assert c["ecn_marks"] == sum(m["ecn_marks"] for m in ms) / 2
        assert c["peak_queue_bytes"] == max(m["peak_queue_bytes"] for m in ms)
    # beside a run record, in one table
    rec = tmp_path / "one.json"
    assert main(["run", str(ROCE), "--json", "-q"]) == 0
    rec.write_text(capsys.readouterr().out)
    code, out, _ = call(capsys, str(rec), str(tmp_path / "st" / "results.sqlite"), "--json")
    assert code == 0 and [c["label"] for c in json.loads(out)["runs"]] == ["one", *[c["label"] for c in cols]]
    code, out, _ = call(capsys, str(rec), str(tmp_path / "st"))
    assert code == 0 and "messages completed" in out


def test_more_columns_than_shown_are_counted(capsys, tmp_path):
    """A store of 14 points (the testing echo task): the table shows MAX_COLUMNS = 12 and says 2 more; --json has 14."""
    from fabricsim.report.compare import MAX_COLUMNS

    sweep = tmp_path / "many.toml"
    sweep.write_text('name = "many"\ntask = "fabricsim.sweep.testing:echo"\nbase = {}\n[grid]\nx = '
                     f"{list(range(14))}\n")
    assert main(["sweep", str(sweep), "--store", str(tmp_path / "st"), "--workers", "0", "--json"]) == 0
    capsys.readouterr()
    code, out, _ = call(capsys, str(tmp_path / "st"))
    assert code == 0 and MAX_COLUMNS == 12
    assert "... 2 more columns not shown (of 14; --json has every one)" in out.splitlines()
    code, out, _ = call(capsys, str(tmp_path / "st"), "--json")
    assert len(json.loads(out)["runs"]) == 14


def test_uec_runs_add_their_counters(capsys, tmp_path, records):
    """Two runs of the UEC all-to-all example, without and with the receiver's ACK timer (`[uec] ack_timer`): the
    table adds a UEC row per counter, each the run's own `uec` number from its JSON (a dash for the RoCE run),
    and the ACK timer's run shows no timeout (the guide's finding: the example's timeouts are waits for an ACK,
    which a 2 us coalescing timer sends)."""
    ex = ROOT / "examples" / "uec_alltoall.toml"
    timer = tmp_path / "timer.toml"
    text = ex.read_text()
    head, rest = text.split("\n[uec]", 1)
    timer.write_text(head + "\n[uec]" + rest.split("\n", 1)[0] + '\nack_timer = "2us"\n' + rest.split("\n", 1)[1])
    out = {}
    for name, src in (("plain", ex), ("timer", timer)):
        p = tmp_path / f"{name}.json"
        p.write_text(subprocess.run([*FABRICSIM, "run", str(src), "--json", "-q"], capture_output=True, text=True,
                                    check=True).stdout)
        out[name] = json.loads(p.read_text())["uec"]
    code, txt, _ = call(capsys, str(tmp_path / "plain.json"), str(tmp_path / "timer.json"), str(records["hpcc"]))
    assert code == 0
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:-1]]
            for line in txt.splitlines() if line.startswith("│")}
    assert rows["UEC timeouts"] == [f"{out['plain']['timeouts']:,}", "0", "–"]
    assert out["plain"]["timeouts"] > 0
    assert rows["UEC packets trimmed"][:2] == [f"{out['plain']['trims']:,}", f"{out['timer']['trims']:,}"]
