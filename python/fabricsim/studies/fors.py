"""Study 004 (Stein et al., FORS): the LHCb event-building network FT(2;20,18), its named failure scenarios, and
the setup and measured throughput its phased all-to-all model is calibrated to.

Switch ids are the study's (its Fig. 2): leaves SW_0 … SW_{M1−1}, spines SW_{M1} … SW_{M1+M0−1}, so on
FT(2;20,18) spine σ is SW_{18+σ}. `calibrate` and `evaluate` are `fabricsim.fors`'s with this setup as defaults.

The study's setup belongs to its network. On FT(2;20,18) (whatever fails) 326 servers take part and the
per-phase overhead is calibrated to the study's 141 Gb/s; on any other fat-tree every server takes part and the
overhead is an input, `DEFAULT_OVERHEAD_US` unless given: 141 Gb/s was measured on LHCb's network only.
"""

from __future__ import annotations

import random
from typing import Any

from .. import fors
from ..topology.fattree import FatTree

M0 = 20
"""Servers per leaf = spines of the study's network."""
M1 = 18
"""Leaves of the study's network."""
ACTIVE_SERVERS = 326
"""Servers taking part: the DAQ uses 326 of the 360 slots (which ones it does not say; see `fors.active_servers`)."""
LINK_GBPS = 200.0
"""Every link's rate."""
MSG_BYTES = 1 << 20
"""Message per pair and phase."""
PER_SERVER_GBPS_0F = 141.0
"""The study's measured per-server throughput without failures (§3.2, Fig. 3): the calibration target."""
DEFAULT_OVERHEAD_US = 0.0
"""Per-phase synchronization overhead (µs) on a fat-tree other than the study's, unless given: none, so the
throughput is the network's alone. An input: the study's calibration does not carry over to other networks."""
CALIBRATED = "calibrated to the study's 141 Gb/s"
"""How an overhead fitted to the study's measurement is labelled (its role "calibrated")."""
INPUT = "input"
"""How an overhead that was given, or defaulted to `DEFAULT_OVERHEAD_US`, is labelled (its role "input")."""


def is_study_network(ft: FatTree) -> bool:
    """Whether `ft` is the study's FT(2;M0,M1) = FT(2;20,18), with any failures (the study holds its calibration
    fixed across its failure scenarios)."""
    return (ft.m0, ft.m1) == (M0, M1)


def default_active(ft: FatTree) -> int:
    """Servers taking part unless told: the study's 326 on its own network, every server (M0·M1) elsewhere."""
    return ACTIVE_SERVERS if is_study_network(ft) else ft.servers


def _fail_spines(ft: FatTree, spines) -> FatTree:
    return ft.with_failed((leaf, sp) for sp in spines for leaf in range(ft.m1))


def scenario(name: str, m0: int = M0, m1: int = M1, seed: int = 0) -> FatTree:
    """The study's named failure scenarios (§3.1), on FT(2;M0,M1) (FT(2;20,18) by default):

    - `0F`: no failure;
    - `xF_SW0` (x = 1, 2, 3): x failed links between leaf SW_0 and spines drawn at random (`seed`);
    - `xF_SW0_5_11`: leaves SW_0, SW_5 and SW_11 each lose x links, to consecutive spines, each leaf to other
      spines: 1F is SW_0–SW_18, SW_5–SW_19, SW_11–SW_20; 3F is SW_0–SW_{18,19,20}, SW_5–SW_{21,22,23},
      SW_11–SW_{24,25,26} (spines are SW_{M1+σ});
    - `SW18_19`, `SW18_19_22_23`: whole spines SW_18, SW_19 (and SW_22, SW_23) fail, i.e. σ = 0, 1 (, 4, 5).
    """
    ft = FatTree(m0, m1)
    if name == "0F":
        return ft
    parts = name.split("_")
    if parts[0].endswith("F") and parts[0][:-1].isdigit():
        x = int(parts[0][:-1])
        leaves = [int(p.removeprefix("SW")) for p in parts[1:]]
        if not leaves or not parts[1].startswith("SW") or x < 1:
            raise ValueError(f"unknown scenario '{name}'")
        if len(leaves) == 1:
            spines = random.Random(seed).sample(range(m0), x)
            return ft.with_failed((leaves[0], sp) for sp in spines)
        if len(leaves) * x > m0:
            raise ValueError(f"scenario '{name}' needs {len(leaves) * x} spines; FT(2;{m0},{m1}) has {m0}")
        return ft.with_failed((leaf, i * x + k) for i, leaf in enumerate(leaves) for k in range(x))
    if parts[0].startswith("SW") and all(p.removeprefix("SW").isdigit() for p in parts):
        ids = [int(p.removeprefix("SW")) for p in parts]
        if any(not m1 <= i < m1 + m0 for i in ids):
            raise ValueError(f"scenario '{name}': spines are SW_{m1}..SW_{m1 + m0 - 1} on FT(2;{m0},{m1})")
        return _fail_spines(ft, [i - m1 for i in ids])
    raise ValueError(f"unknown scenario '{name}' (known: {', '.join(SCENARIOS)})")


SCENARIOS = ["0F", "1F_SW0", "2F_SW0", "3F_SW0", "1F_SW0_5_11", "2F_SW0_5_11", "3F_SW0_5_11", "SW18_19",
             "SW18_19_22_23"]
"""The study's scenarios, in the order of its Figs. 3 and 6."""


def calibrate(ft0: FatTree, *, target_gbps: float = PER_SERVER_GBPS_0F, active: int = ACTIVE_SERVERS,
              link_gbps: float = LINK_GBPS, msg_bytes: int = MSG_BYTES, packet_bytes: int = 4096) -> float:
    """The per-phase synchronization overhead (s) for which linear shift + Ftree on `ft0` (no failures) gives the
    study's 141 Gb/s per server with its setup: `fors.calibrate` with these defaults. Only on the study's network
    (raises ValueError elsewhere: fit an overhead of your own with `fabricsim.fors.calibrate`)."""
    if not is_study_network(ft0):
        raise ValueError(f"the study's {PER_SERVER_GBPS_0F:g} Gb/s was measured on FT(2;{M0},{M1}), not "
                         f"FT(2;{ft0.m0},{ft0.m1}): give the per-phase overhead as an input")
    return fors.calibrate(ft0, target_gbps=target_gbps, active=active, link_gbps=link_gbps, msg_bytes=msg_bytes,
                          packet_bytes=packet_bytes)


def phase_overhead(ft: FatTree, overhead_s: float | None = None, *, msg_bytes: int = MSG_BYTES,
                   packet_bytes: int = 4096) -> tuple[float, str]:
    """(per-phase overhead in s, its label `CALIBRATED` or `INPUT`) for a run on `ft`. Given, it is an input.
    Not given: on the study's network, `calibrate`d with the study's 326 servers and 200 Gb/s and this message
    size (as the study's run does for each message size), and then held fixed whatever the run's servers and
    link rate; on any other network `DEFAULT_OVERHEAD_US`, an input."""
    if overhead_s is not None:
        return overhead_s, INPUT
    if is_study_network(ft):
        return calibrate(FatTree(ft.m0, ft.m1), msg_bytes=msg_bytes, packet_bytes=packet_bytes), CALIBRATED
    return DEFAULT_OVERHEAD_US * 1e-6, INPUT


def evaluate(ft: FatTree, scheme: str, *, active: int | None = None, link_gbps: float = LINK_GBPS,
             msg_bytes: int = MSG_BYTES, packet_bytes: int = 4096, overhead_s: float | None = None,
             fidelity: str | None = None) -> fors.Evaluation:
    """`fors.evaluate` with the study's setup; `active` None = `default_active(ft)`, `overhead_s` None =
    `phase_overhead(ft)`. The result's extra fields say what the overhead is: `overhead_role` "calibrated" or
    "input", and `overhead_source`, its label."""
    if active is None:
        active = default_active(ft)
    overhead_s, source = phase_overhead(ft, overhead_s, msg_bytes=msg_bytes, packet_bytes=packet_bytes)
    ev = fors.evaluate(ft, scheme, active=active, link_gbps=link_gbps, msg_bytes=msg_bytes,
                       packet_bytes=packet_bytes, overhead_s=overhead_s, fidelity=fidelity)
    ev.extra.update(overhead_role="calibrated" if source == CALIBRATED else "input", overhead_source=source)
    return ev


def sweep_task(payload: dict[str, Any], seed: int) -> dict[str, Any]:
    """Sweep task: {"scenario", "scheme", "m0", "m1", "active", "link_gbps", "msg_bytes", "overhead_s"} → metrics
    (missing keys as in `evaluate`)."""
    ft = scenario(payload["scenario"], int(payload.get("m0", M0)), int(payload.get("m1", M1)), seed=int(payload.get("failure_seed", 0)))
    active = payload.get("active")
    ev = evaluate(ft, payload["scheme"], active=None if active is None else int(active),
                  link_gbps=float(payload.get("link_gbps", LINK_GBPS)), msg_bytes=int(payload.get("msg_bytes", MSG_BYTES)),
                  overhead_s=payload.get("overhead_s"), fidelity=payload.get("fidelity"))
    out = ev.to_json()
    out.pop("scheme")
    return out
