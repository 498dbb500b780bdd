"""RoCEv2 keys of a scenario: `transport = "rdma"`, `[pfc]` (shared-buffer switches), `[ecn]` and `[rdma]`.

Defaults are the engine's presets (`fabricsim._core.roce_presets()`, read once): HPCC's ns-3 `mix/config.txt`,
SimAI's `SimAI.conf` and the DCQCN paper (docs/roce_parameters.md gives the source of every value). Python only
names the keys and resolves units and presets; the engine validates the values (Kmin ≤ Kmax, α in (0, 64], …)
and its errors are said back with the user's keys (`roce_user_field`: `ecn.thresholds[0].kmin_bytes` →
`ecn.kmin`).
"""

from __future__ import annotations

import functools
import json
from typing import Annotated, Any, Literal

from annotated_types import Ge, Le
from pydantic import Field, Strict

from ..units import Rate, Size
from .base import PositiveDuration, PositiveRate, PositiveSize, SpecProblem, _Model

Real = Annotated[float, Strict(), Field(allow_inf_nan=False)]
"""A finite number (an integer is taken as it is; booleans and strings are errors)."""
Count32 = Annotated[int, Strict(), Ge(0), Le(2**32 - 1)]
"""A count that fits the engine's 32-bit field."""

EcnPreset = Literal["hpcc", "simai", "dcqcn_paper"]
RdmaPreset = Literal["hpcc", "simai", "dcqcn_paper"]
RdmaCc = Literal["none", "dcqcn", "hpcc"]

FLOW_REFUSES_RDMA = ('the RDMA transport (ACKs, congestion control, PFC) runs only in the packet engine; use '
                     'fidelity = "packet"')
"""Why `transport = "rdma"` cannot run at flow fidelity (said for the scenario's `fidelity` and for --fidelity)."""


@functools.cache
def presets() -> dict[str, Any]:
    """The engine's RoCE presets in wire units (bytes, ps, bit/s): {"pfc": {...}, "ecn": {name: {...}}, "rdma":
    {name: {cc: {...}}}}. Read once per process; treat as read-only."""
    from .. import _core

    return json.loads(_core.roce_presets())


def _pfc_default(wire: str):
    """A default factory: PFC's preset value of wire key `wire` (`None`, HPCC's formula, is "auto")."""
    def default():
        v = presets()["pfc"][wire]
        return "auto" if v is None else v
    return default


# (user key, wire key): the one table of names, used to build the wire and to say engine errors back.
PFC_KEYS = (("enabled", "enabled"), ("buffer", "buffer_bytes"), ("reserve", "reserve_bytes"), ("alpha", "alpha"),
            ("headroom", "headroom_bytes"), ("resume_offset", "resume_offset_bytes"), ("frame", "frame_bytes"),
            ("watchdog", "watchdog_ps"))
RDMA_KEYS = (("cc", "cc"), ("ack_size", "ack_bytes"), ("ack_high_priority", "ack_high_priority"),
             ("nack_interval", "nack_interval_ps"), ("window", "window"), ("var_window", "var_window"),
             ("base_rtt", "base_rtt_ps"), ("min_rate", "min_rate_bps"), ("g", "g"),
             ("alpha_interval", "alpha_resume_interval_ps"), ("decrease_interval", "rate_decrease_interval_ps"),
             ("rp_timer", "rp_timer_ps"), ("fast_recovery", "fast_recovery_times"), ("rate_ai", "rate_ai_bps"),
             ("rate_hai", "rate_hai_bps"), ("clamp_target", "clamp_target_rate"), ("eta", "eta"),
             ("max_stage", "max_stage"), ("hpcc_rate_ai", "hpcc_rate_ai_bps"), ("fast_react", "fast_react"))
ECN_KEYS = (("rate", "rate_bps"), ("kmin", "kmin_bytes"), ("kmax", "kmax_bytes"), ("pmax", "pmax"))


def _auto(v):
    """"auto" (the engine's formula) is `null` on the wire."""
    return None if v == "auto" else v


class PfcDef(_Model):
    """Priority flow control of the `shared_buffer` switches (HPCC's switch MMU; a scenario with such a switch
    needs this table, even empty). An ingress port may hold its `reserve`, then up to `alpha` × (the shared
    pool left) before it sends PAUSE upstream, and its `headroom` for what is on the wire meanwhile; it sends
    RESUME once it is `resume_offset` below the threshold. A PAUSE lasts until its RESUME (the pause time of
    802.1Qbb is not modelled, as in HPCC's fork). Defaults: HPCC's `mix/config.txt` and `switch-mmu.cc`."""

    enabled: bool = Field(default_factory=_pfc_default("enabled"))
    """Whether switches send PAUSE frames; without PFC a shared-buffer switch drops what its headroom cannot
    hold."""
    buffer: PositiveSize = Field(default_factory=_pfc_default("buffer_bytes"))
    """Shared buffer of each switch."""
    reserve: Size = Field(default_factory=_pfc_default("reserve_bytes"))
    """Bytes reserved per ingress port outside the shared pool."""
    alpha: Real = Field(default_factory=_pfc_default("alpha"))
    """Dynamic-threshold factor in (0, 64]: a port may use alpha × (the shared buffer left) before it pauses;
    doubled per doubling of a port's rate above the hosts' NIC rate, up to 1 (HPCC's `pfc_a_shift`)."""
    headroom: Literal["auto"] | Size = Field(default_factory=_pfc_default("headroom_bytes"))
    """Headroom per ingress port for the bytes in flight while a PAUSE travels; "auto" is HPCC's 3 × link
    rate × link delay / 8."""
    resume_offset: Size = Field(default_factory=_pfc_default("resume_offset_bytes"))
    """A paused port resumes when its shared use is this far below the threshold (or zero)."""
    frame: PositiveSize = Field(default_factory=_pfc_default("frame_bytes"))
    """Wire size of a PAUSE or RESUME frame (it waits for the packet being sent, then goes first)."""
    watchdog: PositiveDuration = Field(default_factory=_pfc_default("watchdog_ps"))
    """Deadlock check period: a run whose paused ports sent nothing for this long is searched for a cycle of
    paused ports, and a cycle ends it (`fabricsim run` names it and exits 3)."""

    def wire(self) -> dict:
        return {w: _auto(getattr(self, k)) for k, w in PFC_KEYS}


class EcnRateDef(_Model):
    """ECN thresholds of the egress ports of one link rate."""

    rate: PositiveRate
    """The link rate these thresholds apply to (a port of another rate takes the nearest rate below, else the
    lowest)."""
    kmin: Size
    """Queue length below which nothing is marked."""
    kmax: Size
    """Queue length above which every packet is marked (≥ kmin)."""
    pmax: Real
    """Marking probability at kmax, in [0, 1]; between kmin and kmax it rises linearly from 0."""


class EcnDef(_Model):
    """ECN marking at every switch egress port: RED-like on the instantaneous queue, decided at dequeue on the
    bytes of the data queue the packet leaves behind. Thresholds depend on the port's rate: a `preset`'s table,
    optionally with `kmin`, `kmax` or `pmax` replaced at every rate, or a table of your own (`[[ecn.rate]]`)."""

    preset: EcnPreset = "hpcc"
    """Thresholds by rate: "hpcc" (HPCC's config.txt), "simai" (SimAI.conf, with rows for faster links) or
    "dcqcn_paper" (the DCQCN paper's single row); docs/roce_parameters.md lists them."""
    kmin: Size | None = None
    """Kmin at every rate of the preset (unset: the preset's)."""
    kmax: Size | None = None
    """Kmax at every rate of the preset (unset: the preset's)."""
    pmax: Real | None = None
    """Pmax at every rate of the preset (unset: the preset's)."""
    rate: list[EcnRateDef] = []
    """Your own thresholds, one table per link rate, instead of a preset's (empty, the default: the preset's)."""

    @property
    def own(self) -> bool:
        """Whether the thresholds are the file's own `[[ecn.rate]]` tables (given, even empty), not a preset's."""
        return "rate" in self.model_fields_set

    def wire(self) -> dict:
        if self.own:
            for key in ("preset", "kmin", "kmax", "pmax"):
                if key in self.model_fields_set:
                    raise SpecProblem(f"ecn.{key}", "give thresholds either as [[ecn.rate]] tables or as a preset "
                                                    "with kmin/kmax/pmax, not both")
            return {"thresholds": [{w: getattr(r, k) for k, w in ECN_KEYS} for r in self.rate]}
        rows = [dict(t) for t in presets()["ecn"][self.preset]["thresholds"]]
        for k, w in ECN_KEYS[1:]:
            if getattr(self, k) is not None:
                for t in rows:
                    t[w] = getattr(self, k)
        return {"thresholds": rows}


class RdmaDef(_Model):
    """The RDMA transport (`transport = "rdma"`): every message is one queue pair with an ACK per packet (a
    CNP flag echoes an ECN mark), NACK and go-back-N, pacing at its rate and congestion control `cc`. Every
    other key starts from `preset` for that `cc` (docs/roce_parameters.md) and may be overridden."""

    cc: RdmaCc = "dcqcn"
    """Congestion control: "dcqcn" (HPCC fork's Mellanox model; needs [ecn]), "hpcc" (INT per hop) or "none"
    (line rate; only PFC holds it back)."""
    preset: RdmaPreset = "hpcc"
    """Parameter set: "hpcc" (HPCC's mix/config.txt), "simai" (SimAI.conf) or "dcqcn_paper" (the reaction point
    of Zhu et al. 2015); docs/roce_parameters.md lists them."""
    ack_size: PositiveSize | None = None
    """Wire size of an ACK or NACK (unset: the preset's)."""
    ack_high_priority: bool | None = None
    """ACKs and NACKs travel in the control class (strict priority, never paused) rather than with the data
    (unset: the preset's)."""
    nack_interval: PositiveDuration | None = None
    """A receiver sends at most one NACK per hole in this interval (unset: the preset's)."""
    window: bool | None = None
    """Limit the bytes in flight to one bandwidth-delay product (HPCC's HAS_WIN; unset: the preset's for `cc`)."""
    var_window: bool | None = None
    """The window follows the rate (VAR_WIN; unset: the preset's)."""
    base_rtt: Literal["auto"] | PositiveDuration | None = None
    """Base RTT T of the window and of HPCC; "auto" is the largest over the QPs of 2 × propagation + payload
    serialisation (unset: the preset's)."""
    min_rate: PositiveRate | None = None
    """Lowest rate congestion control may set (unset: the preset's)."""
    g: Real | None = None
    """DCQCN: EWMA gain of α, in (0, 1] (unset: the preset's)."""
    alpha_interval: PositiveDuration | None = None
    """DCQCN: α update period (unset: the preset's)."""
    decrease_interval: PositiveDuration | None = None
    """DCQCN: rate-decrease check period, at most one cut per period (unset: the preset's)."""
    rp_timer: PositiveDuration | None = None
    """DCQCN: rate-increase timer (unset: the preset's)."""
    fast_recovery: Count32 | None = None
    """DCQCN: fast-recovery steps F before additive increase (unset: the preset's)."""
    rate_ai: Rate | None = None
    """DCQCN: additive-increase step (unset: the preset's)."""
    rate_hai: Rate | None = None
    """DCQCN: hyper-increase step (unset: the preset's)."""
    clamp_target: bool | None = None
    """DCQCN: every cut sets the target rate to the current rate (unset: the preset's)."""
    eta: Real | None = None
    """HPCC: target utilisation η, in (0, 1] (unset: the preset's)."""
    max_stage: Count32 | None = None
    """HPCC: additive-increase stages before a multiplicative update (unset: the preset's)."""
    hpcc_rate_ai: Rate | None = None
    """HPCC: additive-increase step, as a rate (unset: the preset's)."""
    fast_react: bool | None = None
    """HPCC: react on every ACK from the per-RTT reference rate (unset: the preset's)."""

    def wire(self) -> dict:
        out = dict(presets()["rdma"][self.preset][self.cc])
        for k, w in RDMA_KEYS:
            v = getattr(self, k)
            if v is not None:
                out[w] = _auto(v)
        return out


def roce_wire(sc) -> dict:
    """The scenario's `pfc`, `ecn` and `rdma` wire objects (only those it has); raises SpecProblem for an
    `[rdma]` table without `transport = "rdma"` and for the RDMA transport at flow fidelity."""
    if sc.rdma is not None and sc.transport != "rdma":
        raise SpecProblem("rdma", 'an [rdma] table needs transport = "rdma" (without it, messages use the message '
                                  'transport)')
    if sc.transport == "rdma" and sc.fidelity == "flow":
        raise SpecProblem("transport", FLOW_REFUSES_RDMA)
    out = {}
    if sc.pfc is not None:
        out["pfc"] = sc.pfc.wire()
    if sc.ecn is not None:
        out["ecn"] = sc.ecn.wire()
    if sc.transport == "rdma":
        out["rdma"] = (sc.rdma or RdmaDef()).wire()
    return out


def roce_user_field(field: str, sc) -> str | None:
    """The user's key for an engine field under `pfc.`, `ecn.` or `rdma.` (None for any other field):
    `pfc.buffer_bytes` → `pfc.buffer`, `rdma.ack_bytes` → `rdma.ack_size`, and an ECN threshold's field → the
    key that set it: `ecn.rate[i].kmin` for a `[[ecn.rate]]` table, else `ecn.kmin` / `ecn.kmax` / `ecn.pmax`
    (a Kmin above Kmax is named by whichever of the two the file set), else `ecn.preset`."""
    head, _, rest = field.partition(".")
    if head == "rdma" and not rest and sc is not None and sc.rdma is None:
        return "transport"
    if head in ("pfc", "rdma"):
        keys = dict((w, k) for k, w in (PFC_KEYS if head == "pfc" else RDMA_KEYS))
        return f"{head}.{keys.get(rest, rest)}" if rest else head
    if head != "ecn":
        return None
    ecn = getattr(sc, "ecn", None)
    own = ecn is not None and ecn.own
    item, _, key = rest.partition("].")
    if not item.startswith("thresholds["):
        return "ecn.rate" if own and rest == "thresholds" else "ecn"
    user = dict((w, k) for k, w in ECN_KEYS).get(key, key)
    if own:
        return f"ecn.rate[{item[len('thresholds['):]}].{user}"
    if ecn is not None and user == "kmin" and ecn.kmin is None and ecn.kmax is not None:
        user = "kmax"
    return f"ecn.{user}" if ecn is not None and user != "rate" and getattr(ecn, user) is not None else "ecn.preset"
