"""fabricsim beside SimAI (aliyun/SimAI's analytical backend, SimAI_analytical) on SimAI's own AICB workloads: the
iteration time and its breakdown in both tools on the same fabric and bandwidth model, every difference worked out
by a hand calculation, and the wall time of both whole processes side by side (issue 32, deliverable 4).

The workloads are the files SimAI ran for benchmarks/data/simai/*.json (benchmarks/SIMAI.md says how they were
generated): AICB's GPT-13B (TP8 PP2 DP16), GPT-175B (TP8 PP8 DP16), Llama-65B (TP8 PP4 DP16), Mixtral-8x7B (TP2
PP2 EP8 DP128) and DeepSeek-16B (TP1 EP16 DP2048), each with AICB's example compute profile (`_aiob`) and with
1 ns compute (`_noaiob`), AICB's two shipped A100 workloads (TP8, one stage), SimAI's microAllReduce example (also
at `-nv 300 -nic 12.5`) and SimAI's 9,216-GPU MoE example (TP2 PP12 EP16; `--workloads all` or naming it: its fabricsim side takes about a minute and 7 GB).

The same fabric and bandwidth model. SimAI's runs: `-nv 360 -nic 48.5 -n_p_s 8 -g_p_s 8`: NVLink 360 and a NIC
48.5 "GB/s", which SimAI applies as GiB/s (its GBps macro is 1/2^30), 8 NICs and 8 GPUs per server. fabricsim's
fabric: a `rail_optimized` cluster of the same GPUs, 8 per server, `nvlink_rate` = 360 · 2^30 · 8 b/s per GPU and
direction, one NIC per GPU at 48.5 · 2^30 · 8 b/s on its rail, non-blocking spines (32 servers per scalable unit,
16 spines), and packet spraying (`ecmp = "per_packet"`): SimAI has no topology, so no ECMP hash collisions either
(with per-flow ECMP the 9,216-GPU example's data-parallel rings collide on spine uplinks; see benchmarks/SIMAI.md).
Link delays are fabricsim's defaults (500 ns per network link, 300 ns per NVSwitch).

The hand calculation (`hand`) predicts each part of fabricsim's answer from the workload file alone, and splits
SimAI's from its reported totals:
- compute: the rows' compute, identical in both (SimAI's `total comp`);
- TP: SimAI = W + its efficiency ratios + its small-message table, where W = Σ ring bytes / NVLink at SimAI's
  rate; fabricsim = NCCL's own model of the algorithm and protocol it picks on the server (train.costs): its
  latency, and the bytes at NCCL's planned NVLink share (20/25 of the link, × 0.92 with LL128), so W + NCCL's
  bandwidth term + NCCL's latency;
- EP: an all-to-all between servers; SimAI's busbw NIC·k/g·(N·g − 1)/((N − 1)·g) makes its bandwidth term
  (N − 1)/N · S / NIC, the load of fabricsim's busiest NIC under NCCL's PXN (enumerated here: `nic_load`), so
  fabricsim = that + NCCL's ring latency (flows run at the NIC's rate), SimAI = that / its all-to-all ratio;
- DP: SimAI gives a data-parallel ring gps/tp NICs per rank and adds DP and DP_EP; fabricsim's ring (train.lower's
  `_ring`) leaves each server through one NIC, and DP and DP_EP run at once (different communicators), sharing
  the NICs both use: the busiest NIC's bytes / NIC, after the compute that overlaps them;
- pipeline: SimAI charges (PP − 1)/(GA · vpp) of the rows' time as a bubble and nothing for the sends; fabricsim
  runs 1F1B with blocking sends of pp_comm bytes: its iteration is predicted by the 1F1B recurrence over the
  passes (start = the later of the stage's previous pass and its send, and the data the pass needs).
The residual (fabricsim's engine − the prediction) is what the hand calculation leaves out: contention beyond the
NIC loads above, the pipeline's sends meeting other traffic, link latencies.

With SimAI built (--simai, else $SIMAI_ROOT, else /work/peers/simai/SimAI) each workload also runs in SimAI as a
whole process from SimAI's folder (it reads inputs/ratio/*.csv from there and writes results/, removed after),
its summary is checked against the stored record, and SimAI's every collective is recomputed from its formulas
and ratio tables (benchmarks/SIMAI.md §4) to split its TP and EP into W, ratio and table exactly. Without SimAI it
says so in one line and compares with the stored records. fabricsim runs as `fabricsim train --aicb FILE --fabric
F --json --quiet`; wall time and peak RSS are the whole processes' (benchmarks/readme_numbers.py `process`).

Usage:
    .venv/bin/python benchmarks/vs_simai.py [--workloads gpt13b_tp8pp2dp16_aiob,...|all] [--simai DIR] [--json F]
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = HERE / "data" / "simai"
DEFAULT_SIMAI = Path("/work/peers/simai/SimAI")
GIB = 2**30
RESIDUAL = 0.01
"""The hand calculation must predict fabricsim's iteration within this fraction (else exit 1)."""
LONG = ("simai_example_9216_moe",)
"""Workloads left out of the default run: fabricsim's side takes minutes."""
SMALL_TABLE_NS = {2: 10_000, 4: 12_000, 8: 15_000, 16: 66_000, 32: 135_000, 64: 200_000, 128: 320_000}
"""SimAI's time for a collective of 2 to 1,048,575 bytes by group size (Layer.cc:967-976); 0 for other sizes."""

if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


def records() -> dict[str, dict]:
    """SimAI's stored analytical runs by name (benchmarks/data/simai/NAME.json)."""
    out = {}
    for p in sorted(DATA.glob("*.json")):
        r = json.loads(p.read_text())
        if r["backend"] == "analytical":
            out[p.stem] = r
    return out


def rates(rec: dict) -> tuple[float, float]:
    """(NVLink, NIC) bytes/s per GPU and direction of a run: its -nv and -nic "GB/s" as SimAI applies them."""
    net = rec["network"]
    return net["nvlink_busbw_GBps (-nv)"] * GIB, net["nic_busbw_GBps (-nic)"] * GIB


def fabric_doc(gpus: int, nv_Bps: float, nic_Bps: float) -> str:
    """The rail-optimized fabric of `gpus` GPUs at SimAI's rates (see the module docstring), as TOML."""
    servers = gpus // 8
    sus, per = (1, servers) if servers <= 32 else (servers // 32, 32)
    assert sus * per * 8 == gpus, gpus
    return (f'[topology]\nkind = "rail_optimized"\nsus = {sus}\nservers_per_su = {per}\ngpus_per_server = 8\n'
            f'spines = 16\nrate = "{round(nic_Bps * 8)}bps"\nnvlink_rate = "{round(nv_Bps * 8)}bps"\n\n'
            f'[routing]\necmp = "per_packet"\n')


# ---- the hand calculation --------------------------------------------------------------------------------------

def _servers(ranks, gps: int = 8) -> int:
    return len({r // gps for r in ranks})


def nccl_node(gpus: int, nv: float, nic: float):
    """The comparison fabric's server as NCCL's model sees it (fabricsim.nccl), for train's closed forms."""
    import tomllib

    from fabricsim.collectives.fabrics import fabric_from_doc
    from fabricsim.nccl import nccl_fabric

    return nccl_fabric(fabric_from_doc(tomllib.loads(fabric_doc(gpus, nv, nic)), "simai"))


def nic_load(f, gpus: int, group: str, kind: str, size: float, gps: int = 8) -> float:
    """Bytes the busiest NIC sends for one collective of `group` on every rank at once, NCCL's PXN routing (a
    message to another server leaves on the rail of its destination GPU): all-to-alls pair by pair (size/n each),
    rings (train.lower's `_ring`, in rank order) edge by edge (their ring bytes each)."""
    from fabricsim.train.aicb import aicb_job
    from fabricsim.train.costs import ring_bytes

    par = aicb_job(f, gpus).par
    load: dict[tuple[int, int], float] = {}
    units = [(0, e, d, s) for s in range(par.pp) for d in range(par.dp) for e in range(par.ep)]
    seen = set()
    for u in units:
        _, e, d, s = u
        grp = {"ep": [(0, x, d, s) for x in range(par.ep)],
               "dp": [(0, x, y, s) for y in range(par.dp) for x in range(par.ep)],
               "dp_ep": [(0, e, y, s) for y in range(par.dp)]}[group]
        if grp[0] in seen:
            continue
        seen.add(grp[0])
        n = len(grp)
        for t in range(par.tp):
            rs = [par.rank(t, *w) for w in grp]
            if kind == "all_to_all":
                pairs = [(a, b, size / n) for a in rs for b in rs if a != b]
            else:
                pairs = [(rs[i], rs[(i + 1) % n], ring_bytes(kind, n, size)) for i in range(n)]
            for a, b, nbytes in pairs:
                if a // gps != b // gps:
                    key = (a // gps, b % gps)
                    load[key] = load.get(key, 0.0) + nbytes
    return max(load.values(), default=0.0)


def ring_servers(f, gpus: int, group: str, gps: int = 8) -> int:
    """How many servers one ring of `group` (dp or dp_ep) visits: NCCL's network steps (train.costs.latency_ps)."""
    from fabricsim.train.aicb import aicb_job

    par = aicb_job(f, gpus).par
    grp = ([(0, x, y, 0) for y in range(par.dp) for x in range(par.ep)] if group == "dp"
           else [(0, 0, y, 0) for y in range(par.dp)])
    return _servers([par.rank(0, *w) for w in grp], gps)


def _nic_keys(f, gpus: int, group: str, gps: int = 8) -> set:
    """The NICs (server, rail) the rings of `group` (dp or dp_ep) of the first stage leave their servers by."""
    from fabricsim.train.aicb import aicb_job

    par = aicb_job(f, gpus).par
    groups = ([[(0, x, y, 0) for y in range(par.dp) for x in range(par.ep)]] if group == "dp"
              else [[(0, e, y, 0) for y in range(par.dp)] for e in range(par.ep)])
    keys = set()
    for grp in groups:
        for t in range(par.tp):
            rs = [par.rank(t, *w) for w in grp]
            keys |= {(a // gps, b % gps) for a, b in zip(rs, rs[1:] + rs[:1]) if a // gps != b // gps}
    return keys


class OutsideHandCalculation(ValueError):
    """A workload of a shape the hand calculation was not derived for (TP across servers, a blocking collective
    across servers, weight-gradient collectives outside the last pass). None of SimAI's stored workloads has one;
    the script refuses such a file rather than guess."""


def hand(f, gpus: int, nv: float, nic: float) -> dict:
    """The prediction of fabricsim's answer and the split of SimAI's, from the file (see the module docstring).
    Times in seconds."""
    from dataclasses import replace

    from fabricsim.nccl.model import bandwidths, fastest, latency_us
    from fabricsim.train.aicb import MIN_FWD_BYTES, program
    from fabricsim.train.costs import NCCL_NAME, closed_form_ps, latency_ps, ring_bytes

    tp, ep, pp = f.tp, f.ep, f.pp
    DP = f.dp(gpus)
    size_of = {"tp": tp, "ep": ep, "dp": DP, "dp_ep": DP // ep}
    tp_local = tp <= 8
    ep_local = tp * ep <= 8
    ep_nodes = max(1, tp * ep // 8)
    node = nccl_node(gpus, nv, nic)
    out = {"compute": f.compute_ns() * 1e-9, "choices": {}}
    for g in ("tp", "ep"):
        out.update({f"W_{g}": 0.0, f"bw_{g}": 0.0, f"lat_{g}": 0.0, f"small_{g}": 0.0})
    memo: dict = {}
    if tp > 8:
        raise OutsideHandCalculation(f"{f.name}: TP across servers")

    def cost(c, fwd: bool) -> tuple[str, float, float, float]:
        """(group, fabricsim's time, its latency part, the bandwidth term at SimAI's rates) of one blocking
        collective: inside a server NCCL's model of the algorithm and protocol it picks (train.costs), between
        servers NCCL's ring latency and the busiest NIC's bytes."""
        if c is None or c.group == "none" or c.size <= 0 or size_of[c.group] <= 1:
            return "", 0.0, 0.0, 0.0
        size = max(c.size, MIN_FWD_BYTES) if fwd else c.size
        n = size_of[c.group]
        key = (c.kind, c.group, size)
        if key in memo:
            return memo[key]
        if c.group == "tp" and tp_local or c.group == "ep" and ep_local:
            t = closed_form_ps(c.kind, n, size, node) * 1e-12
            one = replace(node, nodes=1, gpus=n, rails=n)
            _, algo, proto = fastest(one, bandwidths(one), NCCL_NAME[c.kind], max(1, round(size)))
            lat = latency_us(one, NCCL_NAME[c.kind], algo, proto) * 1e-6
            w = ring_bytes(c.kind, n, size) / nv
            out["choices"][f"{c.group} {c.kind} {size}"] = f"{algo}/{proto}"
        elif c.group == "ep" and c.kind == "all_to_all":
            lat = latency_ps(c.kind, n, ep_nodes) * 1e-12
            w = nic_load(f, gpus, "ep", c.kind, size) / nic
            t = lat + w
        else:
            raise OutsideHandCalculation(f"{f.name}: a blocking {c.kind} on {c.group} across servers")
        memo[key] = (c.group, t, lat, w)
        return memo[key]

    # TP and EP: every unit runs every row once forward and once backward. Split: W (SimAI's bandwidth term),
    # NCCL's bandwidth model beyond it (bw), NCCL's latency (lat, and the whole time of a collective under 1 MiB,
    # which SimAI charges from its table, small).
    for r in f.rows:
        for c, fwd in ((r.fwd, True), (r.ig, False)):
            g, t, lat, w = cost(c, fwd)
            if not g:
                continue
            size = max(c.size, MIN_FWD_BYTES) if fwd else c.size
            if size < 1 << 20:
                out[f"small_{g}"] += SMALL_TABLE_NS.get(size_of[g], 0) * 1e-9
                out[f"lat_{g}"] += t
            else:
                out[f"W_{g}"] += w
                out[f"bw_{g}"] += t - lat - w
                out[f"lat_{g}"] += lat
    out["tp"] = out["W_tp"] + out["bw_tp"] + out["lat_tp"]
    out["ep"] = out["W_ep"] + out["bw_ep"] + out["lat_ep"]
    # DP and DP_EP: the weight-gradient collectives of the last pass (the rows that run once, backward), issued as
    # the pass reaches them, one chain per communicator; on a NIC both use, they share it.
    progs = {s: program(f, s) for s in range(pp)}
    last = progs[0][-1]
    for q in progs[0][:-1]:
        if q.backward and any(f.rows[i].wg is not None and f.rows[i].wg.size > 0 for i in q.rows):
            raise OutsideHandCalculation(f"{f.name}: weight-gradient collectives outside the last pass")
    chains: dict[str, list] = {"dp": [], "dp_ep": []}
    out["lat_dp"] = out["W1_dp"] = 0.0
    tau = 0.0
    for i in last.rows:
        r = f.rows[i]
        tau += (r.ig_ns + r.wg_ns) * 1e-9 + cost(r.ig, False)[1]
        w = r.wg
        if w is not None and w.group in chains and w.size > 0 and size_of[w.group] > 1:
            n = size_of[w.group]
            lat = latency_ps(w.kind, n, ring_servers(f, gpus, w.group)) * 1e-12
            out["lat_dp"] += lat
            out["W1_dp"] += ring_bytes(w.kind, n, w.size) / nic
            chains[w.group].append((tau, lat, ring_bytes(w.kind, n, w.size), nic_load(f, gpus, w.group, w.kind, w.size)))
    shared = bool(chains["dp"] and chains["dp_ep"]) and bool(_nic_keys(f, gpus, "dp") & _nic_keys(f, gpus, "dp_ep"))
    finish = max([fluid([[(a, b, d) for a, b, _, d in c]], nic) for c in chains.values() if c] or [0.0])
    if shared:
        finish = max(finish, fluid([[(a, b, e) for a, b, e, _ in c] for c in chains.values()], nic))
    out["dp"] = max(0.0, finish - tau)
    out["dp_shared_nic"] = shared
    # The pipeline: 1F1B over the passes, each pass's time from the parts above.
    pass_s = {}

    def pass_time(ps) -> float:
        key = ps.key
        if key not in pass_s:
            t = 0.0
            for i in ps.rows:
                r = f.rows[i]
                t += (r.ig_ns + r.wg_ns if ps.backward else r.fwd_ns) * 1e-9
                t += cost(r.ig if ps.backward else r.fwd, not ps.backward)[1]
            pass_s[key] = t
        return pass_s[key]

    send = f.pp_comm / nic if pp > 1 else 0.0
    idx = {s: {(q.micro_batch, q.backward): k for k, q in enumerate(progs[s]) if q.micro_batch is not None}
           for s in range(pp)}
    end: dict = {}

    def finish_of(s: int, k: int) -> float:
        if (s, k) in end:
            return end[(s, k)]
        ps = progs[s][k]
        start = 0.0
        if k:
            prev = progs[s][k - 1]
            start = finish_of(s, k - 1) + (send if _sends(prev, s, pp) else 0.0)
        if ps.micro_batch is not None:
            src = s + 1 if ps.backward else s - 1
            if 0 <= src < pp:
                start = max(start, finish_of(src, idx[src][(ps.micro_batch, ps.backward)]) + send)
        end[(s, k)] = start + pass_time(ps)
        return end[(s, k)]

    sys.setrecursionlimit(max(10_000, 8 * sum(len(p) for p in progs.values())))
    ends = {s: finish_of(s, len(progs[s]) - 1) + (send if _sends(progs[s][-1], s, pp) else 0.0) for s in range(pp)}
    out["step"] = max(ends[s] + out["dp"] for s in range(pp))
    if pp > 1:
        mb = [q for q in progs[0] if q.micro_batch == 0]
        out["t_mb"] = sum(pass_time(q) for q in mb)
        out["bubble_1f1b"] = (pp - 1) * out["t_mb"]
    busy = out["compute"] + out["tp"] + out["ep"] + out["dp"]
    out["pipeline"] = out["step"] - busy
    out["send"] = send
    return out


def _sends(ps, stage: int, pp: int) -> bool:
    if ps.micro_batch is None:
        return False
    return 0 <= (stage - 1 if ps.backward else stage + 1) < pp


def fluid(chains: list[list[tuple[float, float, float]]], rate: float) -> float:
    """When the last of `chains` ends on one link of `rate` bytes/s: each chain a list of (issue time, latency,
    bytes), an item starting at the later of its issue and the end of the chain's previous item, sending its bytes
    after its latency; the chains sending at a time share the link equally (max-min fairness)."""
    idx = [0] * len(chains)
    ready = [c[0][0] + c[0][1] if c else math.inf for c in chains]
    left = [c[0][2] if c else 0.0 for c in chains]
    t, end = 0.0, 0.0
    while any(i < len(c) for i, c in zip(idx, chains)):
        live = [k for k, c in enumerate(chains) if idx[k] < len(c)]
        active = [k for k in live if ready[k] <= t]
        share = rate / len(active) if active else 0.0
        step = min([ready[k] - t for k in live if ready[k] > t] + [left[k] / share for k in active])
        t += step
        for k in active:
            left[k] -= share * step
        for k in active:
            if left[k] <= 1e-6:
                end = t
                idx[k] += 1
                if idx[k] < len(chains[k]):
                    issue, lat, nbytes = chains[k][idx[k]]
                    ready[k], left[k] = max(issue, t) + lat, nbytes
    return end


def simai_model(f, gpus: int, nv_gbps: float, nic_gbps: float, ratio_dir: Path) -> dict:
    """SimAI-Analytical's time of every collective (Layer::compute_time with cal_busbw and cal_ratio, as
    benchmarks/SIMAI.md §4.2 gives them; its ratio tables read from `ratio_dir`), summed as SimAI books them:
    per group, its bandwidth term W (ratio 1), the extra its ratio tables add, and its small-message table."""
    import numpy as np

    f32 = np.float32

    def table(name):
        rows = []
        for i, line in enumerate((ratio_dir / name).read_text().splitlines()):
            cells = [c.strip() or "1" for c in line.split(",")]
            if i and cells and cells[-1]:
                rows.append([float(c) for c in cells])
            elif i and cells:
                rows.append([float(c) for c in cells[:-1]] if cells[-1] == "" else [float(c) for c in cells])
        return rows

    NIC, NVL, ATA = table("nic_ratio.csv"), table("nvlink_ratio.csv"), table("ata_ratio.csv")

    def value(size, nnode, data):
        col = {1: 1, 2: 2, 4: 3, 8: 4, 16: 5, 32: 6, 64: 7, 128: 8, 9: 9}.get(nnode, 5)
        if size == 0:
            return f32(1)
        if size < data[0][0]:
            return f32(data[0][col] / data[-1][col])
        for a, b in zip(data, data[1:]):
            if a[0] <= size <= b[0]:
                return f32((a[col] + (b[col] - a[col]) * (size - a[0]) / (b[0] - a[0])) / data[-1][col])
        raise ValueError("size out of SimAI's range")

    def busbw(nodes, coll, g, k):
        nvb, nicb, k = f32(nv_gbps), f32(nic_gbps), f32(k)
        if g * nodes == 1 or int(k) < 1:
            return f32(0), False
        isn = False
        if nodes == 1:
            ag = nvb
        elif g == 1:
            ag = nicb * k
        elif k * nicb > nvb:
            t = f32(nvb * g / (g - 1))
            ag, isn = (t, True) if t < nicb * k else (nicb * k, False)
        else:
            ag, isn = (nvb, True) if nvb < nicb * k else (nicb * k, False)
        if coll == "all_to_all":
            if nodes == 1:
                return nvb, True
            return f32(nicb * k / g * (nodes * g - 1) / ((nodes - 1) * g)), isn
        return f32(ag), isn

    tp, ep, gps, nps = f.tp, f.ep, 8, 8
    DP = f.dp(gpus)

    def t_ns(kind, group, n, size):
        if 1 < size < 1 << 20:
            return SMALL_TABLE_NS.get(n, 0), 0
        if group == "tp":
            bw, isn = busbw(1, kind, tp, nps) if tp <= gps else busbw(tp // gps, kind, gps, nps)
        elif group == "ep" and n > 1:
            if tp * n <= gps:
                bw, isn = busbw(1, kind, gps // tp, nps)
            else:
                bw, isn = busbw(tp * n // gps, kind, max(gps // tp, 1), nps // gps if tp > gps else nps // tp)
        elif group == "dp" and n > 1:
            bw, isn = busbw(n, kind, gps // tp, nps // tp) if tp <= gps else busbw(n, kind, 1, nps // gps)
        elif group == "dp_ep" and n > 1:
            bw, isn = (busbw(n, kind, gps // (tp * ep), nps // (tp * ep)) if tp * ep <= gps
                       else busbw(n, kind, 1, nps // gps))
        else:
            return 0, 0
        if kind in ("all_gather", "reduce_scatter") and group == "tp":
            r = value(size, 1 if tp < gps else tp // gps, NVL if isn else NIC)
        elif kind == "all_to_all" and group == "ep":
            r = value(size, 1 if tp * n <= gps else 9 if tp >= gps else tp * n // gps, ATA)
        elif kind == "all_to_all" and group == "tp":
            r = value(size, 1 if tp <= gps else tp // gps, ATA)
        else:
            r = f32(1)
        factor = 2 * (n - 1) / n if kind == "all_reduce" else (n - 1) / n
        full = int(size / GIB / float(f32(r * bw)) * 1e9 * factor)
        return full, int(size / GIB / float(bw) * 1e9 * factor)

    out = {k: 0.0 for k in ("TP", "EP", "DP", "DP_EP", "W_TP", "W_EP", "small_TP", "small_EP")}
    for r in f.rows:
        fsize = r.fwd.size if r.fwd else 0
        fsize = 4096 if 0 < fsize < 4096 else fsize
        booked = "EP" if r.fwd is not None and r.fwd.group == "ep" else "TP"
        for c, size in ((r.fwd, fsize), (r.ig, r.ig.size if r.ig else 0)):
            if c is None:
                continue
            n = ep if c.group == "ep" else tp
            full, w = t_ns(c.kind, c.group if c.group != "none" else "none", n, size)
            out[booked] += full * 1e-9
            if 1 < size < 1 << 20:
                out[f"small_{booked}"] += full * 1e-9
            else:
                out[f"W_{booked}"] += w * 1e-9
        if r.wg is not None:
            n = DP // ep if r.wg.group == "dp_ep" else DP
            full, _ = t_ns(r.wg.kind, r.wg.group, n, r.wg.size)
            out["DP_EP" if r.wg.group == "dp_ep" else "DP"] += full * 1e-9
    return out


# ---- running both ------------------------------------------------------------------------------------------------

def simai_root(arg: str | None) -> Path | None:
    """SimAI's folder if its analytical binary is there, else None."""
    root = Path(arg or os.environ.get("SIMAI_ROOT") or DEFAULT_SIMAI)
    return root if (root / "bin" / "SimAI_analytical").exists() else None


def run_simai(root: Path, name: str, rec: dict) -> dict:
    """One workload in SimAI_analytical as a whole process, from its folder: its summary (s) and wall and RSS."""
    from readme_numbers import process

    net = rec["network"]
    prefix = f"fabricsim-vs_simai-{name}-"
    argv = [root / "bin" / "SimAI_analytical", "-w", DATA / rec["workload_copy"], "-g", rec["gpus"],
            "-nv", net["nvlink_busbw_GBps (-nv)"], "-nic", net["nic_busbw_GBps (-nic)"],
            "-n_p_s", net["nics_per_server (-n_p_s)"], "-g_p_s", net["gpus_per_server (-g_p_s)"], "-r", prefix]
    wall, rss, _ = process(argv, cwd=root)
    out = root / "results" / f"{prefix}EndToEnd.csv"
    try:
        head, values = list(csv.reader(out.read_text().splitlines()[:2]))
    finally:
        out.unlink(missing_ok=True)
    vals = [float(v.strip().split(" ")[0]) * 1e-6 for v in values[1:]]
    keys = [k.strip() for k in head[1:]]
    b = dict(zip(keys, vals))
    return {"iteration_time_s": b["Total time"], "breakdown": b, "wall_s": wall, "rss_mb": rss}


def run_fabricsim(name: str, rec: dict, folder: Path) -> dict:
    """One workload in `fabricsim train --aicb` as a whole process: its --json answer, wall and RSS."""
    from readme_numbers import BIN, process

    nv, nic = rates(rec)
    fab = folder / f"fabric_{rec['gpus']}_{round(nv)}_{round(nic)}.toml"
    fab.write_text(fabric_doc(rec["gpus"], nv, nic))
    argv = [BIN / "fabricsim", "train", "--aicb", DATA / rec["workload_copy"], "--fabric", fab, "--gpus", rec["gpus"],
            "--json", "--quiet"]
    wall, rss, out = process(argv)
    d = json.loads(out)
    d["wall_s"], d["rss_mb"] = wall, rss
    return d


def compare(name: str, rec: dict, ours: dict, theirs: dict | None, root: Path | None) -> dict:
    """Both answers, the hand calculation and the differences (seconds)."""
    from fabricsim.train.aicb import read_aicb

    f = read_aicb(DATA / rec["workload_copy"])
    nv, nic = rates(rec)
    h = hand(f, rec["gpus"], nv, nic)
    sb = (theirs or rec)["breakdown"]
    s = {"iteration": (theirs or rec)["iteration_time_s"], "compute": sb["total comp"], "tp": sb["Expose TP comm"],
         "ep": sb["Expose_EP_comm"], "dp": sb["Expose DP comm"] + sb["Expose DP_EP comm"],
         "pipeline": sb["bubble time"] + sb["Expose_PP_comm"], "DP": sb["Expose DP comm"], "DP_EP": sb["Expose DP_EP comm"]}
    b = ours["breakdown"]
    o = {"iteration": ours["step_time_s"], "compute": b["compute_s"], "tp": b["exposed_s"]["tp"],
         "ep": b["exposed_s"]["ep"], "dp": b["exposed_s"]["dp"], "pipeline": b["bubble_s"] + b["exposed_s"]["pp"]}
    row = {"name": name, "gpus": rec["gpus"], "shape": f"TP{f.tp} PP{f.pp} DP{f.dp(rec['gpus'])}"
           + (f" EP{f.ep}" if f.ep > 1 else "") + f" GA{f.ga}", "simai": s, "fabricsim": o, "hand": h,
           "simai_wall_s": theirs["wall_s"] if theirs else None, "simai_rss_mb": theirs["rss_mb"] if theirs else None,
           "simai_stored_wall_s": rec["wall_s"], "fabricsim_wall_s": ours["wall_s"], "fabricsim_rss_mb": ours["rss_mb"],
           "fabricsim_engine_s": ours["run"]["engine_s"], "fabricsim_lower_s": ours["run"]["lower_s"],
           "flows": ours["run"]["flows"], "vpp": f.vpp, "pp": f.pp}
    # SimAI's TP and EP split: its bandwidth term W, then the rest (its ratio tables and small-message table).
    if root is not None:
        m = simai_model(f, rec["gpus"], rec["network"]["nvlink_busbw_GBps (-nv)"],
                        rec["network"]["nic_busbw_GBps (-nic)"], root / "astra-sim-alibabacloud" / "inputs" / "ratio")
        row["simai_model"] = m
        row["simai_split"] = {g: {"W": m[f"W_{G}"], "small": m[f"small_{G}"], "ratio": m[G] - m[f"W_{G}"] - m[f"small_{G}"]}
                              for g, G in (("tp", "TP"), ("ep", "EP"))}
    else:
        row["simai_split"] = {g: {"W": h[f"W_{g}"], "small": h[f"small_{g}"], "ratio": s[g] - h[f"W_{g}"] - h[f"small_{g}"]}
                              for g in ("tp", "ep")}
    row["terms"] = {
        "tp": h["tp"] - s["tp"], "ep": h["ep"] - s["ep"], "dp": h["dp"] - s["dp"], "pipeline": h["pipeline"] - s["pipeline"],
    }
    row["predicted"] = h["step"]
    row["residual"] = o["iteration"] - h["step"]
    return row


def pct(a: float, b: float) -> str:
    return f"{(a / b - 1) * 100:+.1f}%".replace("-", "−") if b else "—"


DIGITS = [1]
"""Decimals of the milliseconds printed: 3 for a workload under 10 ms (`tables` sets it per row)."""


def ms(x: float) -> str:
    return f"{x * 1e3:,.{DIGITS[0]}f}"


def signed_ms(x: float) -> str:
    return f"{x * 1e3:+,.{DIGITS[0]}f}".replace("-", "−")


def tables(rows: list[dict]) -> str:
    """The side-by-side table and the hand calculation of every difference, as Markdown."""
    head = ["workload", "GPUs", "SimAI iteration", "fabricsim", "difference", "without the pipeline", "compute",
            "TP (SimAI / fabricsim)", "EP", "DP + DP_EP / DP", "bubble + PP"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        DIGITS[0] = 3 if r["simai"]["iteration"] < 0.01 else 1
        s, o = r["simai"], r["fabricsim"]
        s_same, o_same = s["iteration"] - s["pipeline"], o["iteration"] - o["pipeline"]
        lines.append("| " + " | ".join([
            f"`{r['name']}` ({r['shape']})", f"{r['gpus']:,}", f"{ms(s['iteration'])} ms", f"{ms(o['iteration'])} ms",
            pct(o["iteration"], s["iteration"]), f"{ms(s_same)} / {ms(o_same)} ms ({pct(o_same, s_same)})",
            f"{ms(s['compute'])} / {ms(o['compute'])}", f"{ms(s['tp'])} / {ms(o['tp'])}",
            f"{ms(s['ep'])} / {ms(o['ep'])}" if s["ep"] or o["ep"] else "—",
            f"{ms(s['DP'])} + {ms(s['DP_EP'])} / {ms(o['dp'])}" if s["dp"] or o["dp"] else "—",
            f"{ms(s['pipeline'])} / {ms(o['pipeline'])}" if r["pp"] > 1 else "—"]) + " |")
    head2 = ["workload", "TP: + NCCL latency + NCCL's bandwidth − SimAI's ratios and table", "EP: the same",
             "DP: + one NIC per ring + NCCL latency − overlap", "pipeline: + 1F1B bubble + sends − SimAI's bubble",
             "SimAI + these = predicted", "fabricsim − predicted"]
    lines2 = ["| " + " | ".join(head2) + " |", "|" + "---|" * len(head2)]
    for r in rows:
        DIGITS[0] = 3 if r["simai"]["iteration"] < 0.01 else 1
        h, t, sp, s = r["hand"], r["terms"], r["simai_split"], r["simai"]
        tp = (f"+{ms(h['lat_tp'])} {signed_ms(h['bw_tp'])} − {ms(sp['tp']['ratio'] + sp['tp']['small'])} = "
              f"{signed_ms(t['tp'])}")
        ep = (f"+{ms(h['lat_ep'])} {signed_ms(h['bw_ep'])} − {ms(sp['ep']['ratio'] + sp['ep']['small'])} = "
              f"{signed_ms(t['ep'])}" if h["ep"] or s["ep"] else "—")
        nics = h["W1_dp"] - s["dp"]
        overlap = h["dp"] - h["W1_dp"] - h["lat_dp"]
        dp = (f"{signed_ms(nics)} +{ms(h['lat_dp'])} {signed_ms(overlap)} = {signed_ms(t['dp'])}"
              if h["dp"] or s["dp"] else "—")
        pipe = (f"+{ms(h['bubble_1f1b'])} {signed_ms(h['pipeline'] - h['bubble_1f1b'])} − {ms(s['pipeline'])} = "
                f"{signed_ms(t['pipeline'])}" if r["pp"] > 1 else "—")
        lines2.append("| " + " | ".join([
            f"`{r['name']}`", tp, ep, dp, pipe, f"{ms(r['predicted'])} ms",
            f"{signed_ms(r['residual'])} ms ({pct(r['fabricsim']['iteration'], r['predicted'])})"]) + " |")
    DIGITS[0] = 1
    return "\n".join(lines) + "\n\n" + "\n".join(lines2)


def walls(rows: list[dict]) -> str:
    """Wall time and peak RSS of both whole processes, as Markdown."""
    head = ["workload", "flows", "fabricsim wall (lowering, engine)", "peak RSS", "SimAI_analytical wall", "peak RSS"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        sw = f"{r['simai_wall_s']:.2f} s" if r["simai_wall_s"] is not None else f"{r['simai_stored_wall_s']} s (stored)"
        sr = f"{r['simai_rss_mb']:.0f} MiB" if r["simai_rss_mb"] is not None else "—"
        lines.append("| " + " | ".join([
            f"`{r['name']}`", f"{r['flows']:,}", f"{r['fabricsim_wall_s']:.2f} s ({r['fabricsim_lower_s']:.2f} s, "
            f"{r['fabricsim_engine_s']:.2f} s)", f"{r['fabricsim_rss_mb']:.0f} MiB", sw, sr]) + " |")
    return "\n".join(lines)


def measure(names: list[str], simai: Path | None, progress=None) -> list[dict]:
    """Run every workload in both tools (SimAI when built), paired, and compare."""
    recs = records()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            rec = recs[name]
            theirs = run_simai(simai, name, rec) if simai else None
            ours = run_fabricsim(name, rec, Path(tmp))
            rows.append(compare(name, rec, ours, theirs, simai))
            if progress:
                progress(rows[-1])
    return rows


def default_names() -> list[str]:
    return [n for n in records() if n not in LONG]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2
        self.exit(2, f"vs_simai.py: {message}\n")


def main(argv: list[str] | None = None) -> int:
    ap = _Parser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default=None, help="comma-separated record names, or 'all' (default: all but "
                    + ", ".join(LONG) + ")")
    ap.add_argument("--simai", default=None, help=f"SimAI's folder (default: $SIMAI_ROOT, else {DEFAULT_SIMAI})")
    ap.add_argument("--json", default=None, help="also write every row as JSON to this file")
    args = ap.parse_args(argv)
    recs = records()
    names = (list(recs) if args.workloads == "all" else args.workloads.split(",") if args.workloads
             else default_names())
    unknown = [n for n in names if n not in recs]
    if unknown:
        ap.error(f"--workloads: unknown {', '.join(unknown)} (known: {', '.join(recs)})")
    root = simai_root(args.simai)
    if root is None:
        print(f"SimAI is not built at {args.simai or os.environ.get('SIMAI_ROOT') or DEFAULT_SIMAI}: its side is "
              f"skipped, fabricsim is compared with SimAI's stored runs (benchmarks/data/simai)", flush=True)

    def show(r):
        print(f"{r['name']}: SimAI {r['simai']['iteration']:.4f} s, fabricsim {r['fabricsim']['iteration']:.4f} s "
              f"({pct(r['fabricsim']['iteration'], r['simai']['iteration'])}); predicted {r['predicted']:.4f} s; "
              f"walls {r['fabricsim_wall_s']:.2f} s / "
              + (f"{r['simai_wall_s']:.2f} s" if r["simai_wall_s"] is not None else "—"), flush=True)

    rows = measure(names, root, show)
    print()
    print(tables(rows))
    print()
    print(walls(rows))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    failed = []
    for r in rows:
        rec = recs[r["name"]]
        tol = rec["rows"] * 1e-6  # SimAI rounds each row to whole µs
        if "simai_model" in r:
            m, got = r["simai_model"], r["simai"]
            if any(not math.isclose(m[k], got[g], abs_tol=tol) for k, g in (("TP", "tp"), ("EP", "ep"), ("DP", "DP"),
                                                                              ("DP_EP", "DP_EP"))):
                failed.append(f"{r['name']}: SimAI's formulas (benchmarks/SIMAI.md §4) do not reproduce its run")
            if not math.isclose(got["iteration"], rec["iteration_time_s"], abs_tol=2e-6):
                failed.append(f"{r['name']}: SimAI's iteration {got['iteration']} s is not its stored "
                              f"{rec['iteration_time_s']} s")
        if abs(r["residual"]) > RESIDUAL * r["predicted"]:
            failed.append(f"{r['name']}: fabricsim's {r['fabricsim']['iteration']:.6f} s is "
                          f"{pct(r['fabricsim']['iteration'], r['predicted'])} from the hand calculation's "
                          f"{r['predicted']:.6f} s")
    for line in failed:
        print(line, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
