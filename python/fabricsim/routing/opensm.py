"""OpenSM export of a FORS routing: LFT dumps for OpenSM's `file` routing engine, with LMC multipath LIDs.

Addressing (the study's §6.1): every server has 2^LMC LIDs (LMC = ⌈log2 M0⌉, 5 on FT(2;20,18)); LID base_d + σ
reaches server d through spine σ. Ports: leaf ports 1…M0 lead to its servers (α + 1) and ports M0+1…2·M0 to
spines (M0 + 1 + σ); spine ports 1…M1 lead to leaves (γ + 1). Port 0 is the switch itself. LIDs through a
spine that a leaf cannot use (failed link) fall back to a live spine, so every LID stays routable; FORS never
hands those LIDs out. The per-phase LID choice (which LID a source uses for each destination) goes to a JSON
file the MPI application reads.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

GUID_LEAF = 0x0002C90300000000
GUID_SPINE = 0x0002C90300010000
GUID_HCA = 0x0002C90300100000


def lmc_for(m0: int) -> int:
    return max(0, (m0 - 1).bit_length())


class Addressing:
    """LIDs, GUIDs and ports of FT(2;M0,M1) under the export's conventions."""

    def __init__(self, ft):
        self.ft = ft
        self.lmc = lmc_for(ft.m0)
        self.block = 1 << self.lmc
        top = (ft.servers + 1) * self.block + ft.m1 + ft.m0
        if top > 0xBFFF:
            raise ValueError(f"FT(2;{ft.m0},{ft.m1}) with LMC {self.lmc} needs LIDs up to {top:#x}, beyond the "
                             "unicast range 0xbfff")

    def base(self, server: int) -> int:
        return (server + 1) * self.block

    def server_of(self, lid: int) -> tuple[int, int]:
        """(server, spine offset) of a server LID."""
        return lid // self.block - 1, lid % self.block

    def leaf_lid(self, leaf: int) -> int:
        return (self.ft.servers + 1) * self.block + leaf

    def spine_lid(self, spine: int) -> int:
        return (self.ft.servers + 1) * self.block + self.ft.m1 + spine

    def dlid(self, dst: int, spine: int) -> int:
        """The LID a source uses to reach dst through `spine` (−1: the base LID, within a leaf)."""
        return self.base(dst) + max(spine, 0)


def _tables(ft, addr: Addressing) -> dict[tuple[str, int], dict[int, int]]:
    """LID → port per switch, keyed by ("leaf", γ) or ("spine", σ)."""
    m0, m1, P = ft.m0, ft.m1, ft.servers
    tables: dict[tuple[str, int], dict[int, int]] = {}
    for g in range(m1):
        t: dict[int, int] = {addr.leaf_lid(g): 0}
        for d in range(P):
            gd = d // m0
            common = ft.common_spines(g, gd) if gd != g else []
            for j in range(addr.block):
                if gd == g:
                    t[addr.base(d) + j] = d % m0 + 1
                elif common:
                    sp = j if (j < m0 and j in common) else common[j % len(common)]
                    t[addr.base(d) + j] = m0 + 1 + sp
        for g2 in range(m1):
            common = ft.common_spines(g, g2)
            if g2 != g and common:
                t[addr.leaf_lid(g2)] = m0 + 1 + common[0]
        for sp in ft.uplinks(g):
            t[addr.spine_lid(sp)] = m0 + 1 + sp
        tables[("leaf", g)] = dict(sorted(t.items()))
    for sp in range(m0):
        t = {addr.spine_lid(sp): 0}
        for d in range(P):
            if ft.alive(d // m0, sp):
                for j in range(addr.block):
                    t[addr.base(d) + j] = d // m0 + 1
        for g in range(m1):
            if ft.alive(g, sp):
                t[addr.leaf_lid(g)] = g + 1
        tables[("spine", sp)] = dict(sorted(t.items()))
    return tables


def _guid(kind: str, idx: int) -> int:
    return (GUID_LEAF if kind == "leaf" else GUID_SPINE) + idx


def export_opensm(ft, routing, out_dir) -> list[str]:
    """Write `fors.lfts` (the LFT dump OpenSM's `file` engine loads: `-R file -U fors.lfts`), `guids.json`
    (switch and server GUIDs, LIDs, the port map) and `phase_lids.json` (per phase, [src, dst, dlid] for every
    flow). Returns the paths written."""
    addr = Addressing(ft)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tables = _tables(ft, addr)
    lines = []
    for (kind, idx), t in tables.items():
        own = addr.leaf_lid(idx) if kind == "leaf" else addr.spine_lid(idx)
        sw_id = ft.switch_id(kind, idx)
        guid = _guid(kind, idx)
        lines.append(f"Unicast lids [0x0-0x{max(t):x}] of switch Lid {own} guid 0x{guid:016x} "
                     f"(fabricsim {kind} SW_{sw_id}):")
        for lid, port in t.items():
            if port == 0:
                what = f"(Switch portguid 0x{guid:016x}: 'fabricsim {kind} SW_{sw_id}')"
            elif lid <= addr.base(ft.servers - 1) + addr.block - 1:
                s, j = addr.server_of(lid)
                what = f"(Channel Adapter portguid 0x{GUID_HCA + s:016x}: 'server {s}' via spine {j})"
            else:
                what = "(Switch)"
            lines.append(f"0x{lid:04x} {port:03d} : {what}")
        lines.append("")
    lfts = out / "fors.lfts"
    lfts.write_text("\n".join(lines))
    guids = out / "guids.json"
    guids.write_text(json.dumps({
        "m0": ft.m0, "m1": ft.m1, "lmc": addr.lmc, "failed": sorted(map(list, ft.failed)),
        "leaves": {str(g): {"guid": f"0x{_guid('leaf', g):016x}", "lid": addr.leaf_lid(g)} for g in range(ft.m1)},
        "spines": {str(s): {"guid": f"0x{_guid('spine', s):016x}", "lid": addr.spine_lid(s)} for s in range(ft.m0)},
        "servers": {str(s): {"guid": f"0x{GUID_HCA + s:016x}", "base_lid": addr.base(s)} for s in range(ft.servers)},
        "ports": "leaf: 1..M0 servers (alpha+1), M0+1..2*M0 spines (M0+1+sigma); spine: 1..M1 leaves (gamma+1)",
    }, indent=1))
    lids = out / "phase_lids.json"
    lids.write_text(json.dumps({"lmc": addr.lmc, "phases": [[[s, d, addr.dlid(d, sp)] for s, d, sp in ph]
                                                             for ph in routing]}))
    return [str(lfts), str(guids), str(lids)]


def parse_lfts(text: str) -> dict[int, dict[int, int]]:
    """An LFT dump as OpenSM's file engine reads it: per switch GUID, LID → output port."""
    tables: dict[int, dict[int, int]] = {}
    cur = None
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("Unicast lids"):
            m = re.search(r"guid (0x[0-9a-fA-F]+)", line)
            if not m:
                raise ValueError(f"line {n}: switch header without a guid")
            cur = tables.setdefault(int(m.group(1), 16), {})
        elif line.startswith("0x"):
            if cur is None:
                raise ValueError(f"line {n}: LFT entry before any switch header")
            lid, port = line.split()[:2]
            cur[int(lid, 16)] = int(port)
    return tables


def trace(tables: dict[int, dict[int, int]], ft, src: int, dlid: int) -> tuple[int, int]:
    """Follow dlid from src's leaf through the parsed tables: (spine crossed or −1, server reached)."""
    m0 = ft.m0
    leaf = src // m0
    spine = -1
    for _ in range(4):
        port = tables[_guid("leaf", leaf)].get(dlid)
        if port is None:
            raise ValueError(f"leaf {leaf} has no entry for LID {dlid:#x}")
        if 1 <= port <= m0:
            return spine, leaf * m0 + port - 1
        if spine >= 0:
            raise ValueError(f"LID {dlid:#x} goes up twice (loop)")
        spine = port - m0 - 1
        down = tables[_guid("spine", spine)].get(dlid)
        if down is None:
            raise ValueError(f"spine {spine} has no entry for LID {dlid:#x}")
        leaf = down - 1
    raise ValueError(f"LID {dlid:#x} does not reach a server")
