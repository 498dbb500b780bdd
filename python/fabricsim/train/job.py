"""A training job: model, parallelism, batch, device and optimizer settings, checked as one.

Parallelism (Megatron-LM's meaning; `--dp` counts expert-data-parallel replicas, so Megatron's data-parallel size
is dp × ep and the GPUs are tp × cp × ep × dp × pp):
- TP (tensor): every layer's matrices split over tp GPUs; with sequence parallelism (the default when tp > 1)
  the activations between them are sharded by sequence.
- CP (context): the sequence split over cp GPUs; attention exchanges keys and values around a ring.
- EP (expert): an MoE layer's experts split over ep GPUs; tokens go to their experts and back by all-to-all.
- DP (data): replicas of the model, each with global_batch / (micro_batch · dp · ep) micro-batches per step.
- PP (pipeline): the layers cut into pp stages (× V chunks per stage with the interleaved schedule).

Ranks in Megatron's default order "tp-cp-ep-dp-pp" (TP fastest):
rank = t + tp·(c + cp·(e + ep·(d + dp·s))). Rank r runs on the fabric's r-th host (GPU), so consecutive ranks
share a server and TP stays inside a server's NVLink domain when tp divides the GPUs per server.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from ..devices import Device
from ..errors import UserError
from .models import ModelSpec

SCHEDULES = ("1f1b", "interleaved")


@dataclass(frozen=True)
class LayerTimes:
    """Measured compute times of one micro-batch on one GPU of this job (already split by its TP, CP and EP), in
    microseconds: a dense layer's forward and backward, an MoE layer's, the output layer's (on the last stage), and
    the optimizer step (None: the roofline's). Read from a TOML file by `read_layer_times`."""

    forward_us: float
    backward_us: float
    moe_forward_us: float
    moe_backward_us: float
    head_forward_us: float = 0.0
    head_backward_us: float = 0.0
    optimizer_us: float | None = None
    source: str = ""


LAYER_TIME_KEYS = ("forward_us", "backward_us", "moe_forward_us", "moe_backward_us", "head_forward_us",
                   "head_backward_us", "optimizer_us")


def read_layer_times(path: str) -> LayerTimes:
    """A layer times TOML: `forward_us` (required), `backward_us` (default 2 × forward), `moe_forward_us` and
    `moe_backward_us` (default the dense ones), `head_forward_us` (0), `head_backward_us` (2 × head forward),
    `optimizer_us`. UserError naming the file and key on anything else."""
    from pathlib import Path

    from ..checks import path as a_path

    path = str(a_path(path, "path"))

    from .models import read_toml

    p = Path(path)
    doc = read_toml(p, "layer times file")
    for k, v in doc.items():
        if k not in LAYER_TIME_KEYS:
            raise UserError(f"{p}: {k}: unknown key (keys: {', '.join(LAYER_TIME_KEYS)})")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v < 1e12:
            raise UserError(f"{p}: {k}: expected a duration in microseconds ≥ 0, got {v!r}")
    if "forward_us" not in doc:
        raise UserError(f"{p}: forward_us: missing (a dense layer's forward time in microseconds)")
    f = float(doc["forward_us"])
    b = float(doc.get("backward_us", 2 * f))
    hf = float(doc.get("head_forward_us", 0.0))
    return LayerTimes(f, b, float(doc.get("moe_forward_us", f)), float(doc.get("moe_backward_us", b)), hf,
                      float(doc.get("head_backward_us", 2 * hf)),
                      None if "optimizer_us" not in doc else float(doc["optimizer_us"]), str(p))


class Coord(NamedTuple):
    t: int
    c: int
    e: int
    d: int
    s: int


@dataclass(frozen=True)
class Parallel:
    """Degrees of parallelism; `vpp` model chunks per pipeline stage (the interleaved schedule)."""

    tp: int = 1
    pp: int = 1
    dp: int = 1
    ep: int = 1
    cp: int = 1
    vpp: int = 1

    def __post_init__(self) -> None:
        from ..checks import fields

        fields(self, positive=("tp", "pp", "dp", "ep", "cp", "vpp"))

    @property
    def world(self) -> int:
        return self.tp * self.cp * self.ep * self.dp * self.pp

    def rank(self, t: int, c: int, e: int, d: int, s: int) -> int:
        return t + self.tp * (c + self.cp * (e + self.ep * (d + self.dp * s)))

    def coord(self, rank: int) -> Coord:
        t, r = rank % self.tp, rank // self.tp
        c, r = r % self.cp, r // self.cp
        e, r = r % self.ep, r // self.ep
        d, s = r % self.dp, r // self.dp
        return Coord(t, c, e, d, s)

    @property
    def units(self) -> int:
        """TP groups: the GPUs that run one shard of every layer in lockstep."""
        return self.world // self.tp

    def unit(self, c: int, e: int, d: int, s: int) -> int:
        """The TP group of (c, e, d, s): its first rank divided by tp."""
        return c + self.cp * (e + self.ep * (d + self.dp * s))


@dataclass(frozen=True)
class TrainJob:
    """One training job. Sizes in tokens and sequences; `grad_bytes` bytes per gradient element as reduced (4:
    Megatron-LM reduces BF16 training's gradients in FP32), `param_bytes` per weight (2, BF16); `bucket_params`
    gradient elements per data-parallel bucket (None: Megatron-core's max(40M, 1M × the group's size));
    `efficiency` the fraction of the device's peak FLOP/s and memory bandwidth a kernel achieves (an assumption,
    not a measurement); `zero` the ZeRO stage (1 = Megatron's distributed optimizer); `steps` training steps
    simulated back to back."""

    model: ModelSpec
    par: Parallel
    micro_batch: int
    global_batch: int
    device: Device
    efficiency: float = 0.5
    schedule: str = "1f1b"
    zero: int = 0
    sequence_parallel: bool = True
    grad_bytes: int = 4
    param_bytes: int = 2
    bucket_params: int | None = None
    steps: int = 1
    layer_times: LayerTimes | None = None
    """Measured compute times (`read_layer_times`), replacing the roofline; None: the roofline."""

    def __post_init__(self) -> None:
        from ..checks import fields

        fields(self, positive=("micro_batch", "global_batch", "efficiency", "grad_bytes", "param_bytes",
                               "bucket_params", "steps"), nonneg=("zero",))

    @property
    def seq_len(self) -> int:
        return self.model.seq_len

    @property
    def micro_batches(self) -> int:
        """Micro-batches per step of each pipeline: global_batch / (micro_batch · dp · ep)."""
        return self.global_batch // (self.micro_batch * self.par.dp * self.par.ep)

    @property
    def chunks(self) -> int:
        return self.par.vpp if self.schedule == "interleaved" else 1

    def check(self, gpus: int) -> None:
        """UserError naming the option on the first inconsistency (`gpus`: the fabric's GPUs the job uses)."""
        p, m = self.par, self.model
        for name in ("tp", "pp", "dp", "ep", "cp", "vpp"):
            if getattr(p, name) < 1:
                raise UserError(f"--{name}: must be ≥ 1, got {getattr(p, name)}")
        if p.world != gpus:
            raise UserError(f"--tp × --pp × --dp × --ep × --cp = {p.tp} × {p.pp} × {p.dp} × {p.ep} × {p.cp} = "
                            f"{p.world}, but the job has {gpus} GPUs (--gpus, default: every GPU of the fabric)")
        if self.schedule not in SCHEDULES:
            raise UserError(f"--schedule: '{self.schedule}' is not a schedule ({', '.join(SCHEDULES)})")
        if self.schedule == "interleaved" and p.pp == 1:
            raise UserError("--schedule interleaved: needs --pp ≥ 2")
        v = self.chunks
        if m.layers % (p.pp * v):
            raise UserError(f"--pp: the model's {m.layers} layers are not divisible by pp × V = {p.pp} × {v} = "
                            f"{p.pp * v}")
        if m.heads % p.tp:
            raise UserError(f"--tp: the model's {m.heads} attention heads are not divisible by tp = {p.tp}")
        if m.kv_heads % p.tp and p.tp % m.kv_heads:
            raise UserError(f"--tp: the model's {m.kv_heads} key/value heads and tp = {p.tp}: one must divide the "
                            f"other")
        if p.ep > 1 and not m.moe:
            raise UserError(f"--ep: {m.name} has no experts; expert parallelism needs an MoE model")
        if m.moe and m.experts % p.ep:
            raise UserError(f"--ep: the model's {m.experts} experts are not divisible by ep = {p.ep}")
        if self.seq_len % (p.cp * (p.tp if self.sequence_parallel and p.tp > 1 else 1)):
            raise UserError(f"--seq-len: {self.seq_len} is not divisible by cp × tp = {p.cp * p.tp} (context and "
                            f"sequence parallelism shard the sequence)")
        if self.micro_batch < 1:
            raise UserError(f"--micro-batch: must be ≥ 1, got {self.micro_batch}")
        if self.global_batch % (self.micro_batch * p.dp * p.ep):
            raise UserError(f"--global-batch: {self.global_batch} is not divisible by micro_batch × dp × ep = "
                            f"{self.micro_batch} × {p.dp} × {p.ep}")
        if self.schedule == "interleaved" and self.micro_batches % p.pp:
            raise UserError(f"--schedule interleaved: the {self.micro_batches} micro-batches per pipeline are not a "
                            f"multiple of pp = {p.pp} (Megatron-LM's requirement)")
        if self.zero not in (0, 1, 2, 3):
            raise UserError(f"--zero: must be 0, 1, 2 or 3, got {self.zero}")
        if not 0 < self.efficiency <= 1:
            raise UserError(f"--efficiency: must be in (0, 1], got {self.efficiency}")
        if self.steps < 1:
            raise UserError(f"--steps: must be ≥ 1, got {self.steps}")
