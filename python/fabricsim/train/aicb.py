"""SimAI/AICB workload files: read as SimAI reads them, and lowered onto a fabric as `fabricsim train` lowers a job.

An AICB workload file (aliyun/aicb's `SimAI_training_workload_generator.py`, read by aliyun/SimAI's
`Workload::initialize_workload`, astra-sim/workload/Workload.cc at cef83f9, lines 1136-1551; benchmarks/SIMAI.md
§3 describes it with citations) is one pipeline stage's program for one TP group:

- line 1, the header: the parallelism policy (AICB writes `HYBRID_TRANSFORMER_FWD_IN_BCKWD`, the only one read
  here), then `key: value` pairs in any order: `model_parallel_NPU_group:` (TP), `ep:`, `pp:`, `vpp:` (AICB writes
  the layers per stage; SimAI uses it only in its bubble formula), `ga:` (micro-batches per iteration),
  `all_gpus:` (unused by SimAI's analytical backend), `checkpoints:` / `checkpoint_initiates:` (recomputation),
  `pp_comm:` or `pp_comm` (bytes of one pipeline send). Values are read as `std::stoi` reads them: a leading whole
  number, so `2621440.0` is 2621440.
- line 2: the number of rows N.
- N rows of 12 fields: name, dependency (ignored), forward compute (ns), its collective's type and bytes,
  input-gradient compute (ns), its collective's type and bytes, weight-gradient compute (ns), its collective's
  type and bytes, weight-update time (ns; unused by SimAI's analytical backend).

A collective's type is read by its prefix, in SimAI's order: `ALLREDUCE` (so `ALLREDUCEALLTOALL…` is an all-reduce
of no group), `ALLTOALL`, `ALLGATHER`, `REDUCESCATTER`; anything else (`NONE`, `BROADCAST`) is no communication.
Its group is its suffix: none = TP in the forward and input-gradient columns and DP in the weight-gradient column;
`_EP` = expert-parallel; `_DP_EP` = the expert weights' data-parallel group (DP / EP ranks); any other = no group.

Stricter than SimAI: SimAI reads a row as the next 12 whitespace-separated words wherever the lines break, so a row
with a missing field silently shifts every later row. Here each row is one line of exactly 12 fields, and a
malformed row is a `UserError` naming the file and the line.

The job (SimAI's meaning of the header): TP = `model_parallel_NPU_group`, PP = `pp`, EP = `ep`, GPUs = `--gpus`
(default: the fabric's), DP = GPUs / (TP · PP), the expert weights' data-parallel group DP / EP. Ranks in
Megatron-LM's order tp-ep-dp-pp (TP fastest), rank r on the fabric's r-th GPU, as `fabricsim train` places them
(`train.job`): a TP group is a unit, the EP group is EP consecutive units, the DP group every unit of a stage.

The program of a unit (`lower_aicb`), SimAI's semantics (Workload.cc:793-931): a forward pass runs rows in order,
each its forward compute then its forward collective (blocking); a backward pass runs rows in reverse, each its
input-gradient compute, its input-gradient collective (blocking), its weight-gradient compute, then its
weight-gradient collective, which does not block: the program goes on while it runs, collectives of one
communicator in the order they were issued (one NCCL stream per communicator), and the step ends when every one has
finished. With PP = 1 the unit runs the file as SimAI does: every row forward, then every row backward. With PP > 1
the rows are cut into what runs once (the rows before the first micro-batch's and after the last one's) and the GA
micro-batches (`micro_batches`), every stage runs the same rows (AICB writes one stage's rows, the same for every
stage), in Megatron-LM's 1F1B order (`schedule.one_f_one_b`); the rows after the micro-batches run, forward then
backward, right after the stage's last forward, and the rows before them forward first and backward last. After
each micro-batch's pass every TP rank sends `pp_comm` bytes to the same TP rank of the next stage (forward) or
the previous one (backward), and the stage's next pass waits for its sends (Megatron's blocking p2p). SimAI's
analytical backend instead charges no time for these sends and adds (PP − 1)/(GA · vpp) of the rows' compute and
blocking communication as a bubble (benchmarks/SIMAI.md §4.1): the bubble of interleaved 1F1B with vpp chunks,
vpp times smaller than 1F1B's when vpp is the layers per stage, as AICB writes it.

Lowering, as `train.lower` does: a pass is one compute step (its rows' compute summed), then its blocking
collectives, summed per group: in NCCL's closed form (`costs.closed_form_ps`) for a TP or EP group inside one
NVLink domain, otherwise flows (a ring's edges, or one flow per ordered pair for an all-to-all, each per TP rank)
that start after NCCL's latency. A pass is cut after every row whose weight-gradient collective runs, so that
collective starts when the rows before it are done. Weight-gradient collectives are always flows. Sizes as SimAI
runs them: a forward collective under 4,096 bytes is raised to 4,096 (Workload.cc:813-815); a collective of
0 bytes, of no group, or of a group of one rank does nothing.
"""

from __future__ import annotations

import re
import warnings
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import FabricsimWarning, UserError
from ..workload import Deps, Workload
from .costs import closed_form_ps, latency_ps, ring_bytes
from .job import Parallel, TrainJob
from .lower import DIMS, FabricView, Lowered, _Builder, _ring
from .models import ModelSpec
from .schedule import one_f_one_b

POLICY = "HYBRID_TRANSFORMER_FWD_IN_BCKWD"
"""The parallelism policy AICB writes and the only one read here (SimAI's transformer loop with backward rows)."""
KINDS = (("ALLREDUCE", "all_reduce"), ("ALLTOALL", "all_to_all"), ("ALLGATHER", "all_gather"),
         ("REDUCESCATTER", "reduce_scatter"))
"""SimAI's collective prefixes, in the order Workload.cc tests them."""
GROUPS = ("tp", "ep", "dp", "dp_ep")
"""Communication groups: tensor-parallel, expert-parallel, data-parallel (DP = GPUs / (TP · PP) ranks), and the
expert weights' data-parallel group (DP / EP ranks)."""
DIM_OF = {"tp": "tp", "ep": "ep", "dp": "dp", "dp_ep": "dp"}
"""The breakdown's dimension of each group: `dp` carries both SimAI's DP and DP_EP."""
MIN_FWD_BYTES = 4096
"""SimAI raises a forward collective of 1 to 4,095 bytes to 4,096 when it runs it (Workload.cc:813-815)."""
FIELDS = ("name", "dependency", "forward compute (ns)", "forward comm type", "forward comm bytes",
          "input-gradient compute (ns)", "input-gradient comm type", "input-gradient comm bytes",
          "weight-gradient compute (ns)", "weight-gradient comm type", "weight-gradient comm bytes",
          "weight-update time (ns)")
_STOI = re.compile(r"\s*([+-]?\d+)")
_UINT = re.compile(r"\+?\d+")
_INT = re.compile(r"[+-]?\d+")


@dataclass(frozen=True)
class Collective:
    """One collective of a row: `kind` (all_reduce, all_to_all, all_gather, reduce_scatter), `group` (tp, ep, dp,
    dp_ep, or "none"), `size` bytes as written (for an all-gather or reduce-scatter the whole buffer, as NCCL's
    and SimAI's S), and `text`, the type as written."""

    kind: str
    group: str
    size: int
    text: str


@dataclass(frozen=True)
class Row:
    """One row: its name, its `line` in the file, compute times in ns and its three collectives (None: no
    communication)."""

    name: str
    line: int
    dependency: int
    fwd_ns: int
    fwd: Collective | None
    ig_ns: int
    ig: Collective | None
    wg_ns: int
    wg: Collective | None
    wg_update_ns: int


@dataclass(frozen=True)
class AicbFile:
    """An AICB workload file as SimAI reads it (0: the header does not give the key)."""

    path: str
    policy: str
    tp: int
    ep: int
    pp: int
    vpp: int
    ga: int
    all_gpus: int
    pp_comm: int
    rows: tuple[Row, ...]
    warnings: tuple[str, ...] = ()
    """What SimAI would read silently or warn about (its "format mismatch"), one line each."""

    @property
    def name(self) -> str:
        return Path(self.path).stem

    def dp(self, gpus: int) -> int:
        """SimAI's data-parallel size: GPUs / (TP · PP)."""
        return gpus // (self.tp * self.pp)

    def compute_ns(self) -> int:
        """Every row's forward, input-gradient and weight-gradient compute: SimAI's `total comp`."""
        return sum(r.fwd_ns + r.ig_ns + r.wg_ns for r in self.rows)


def collective(text: str, column: str) -> tuple[str, str] | None:
    """(kind, group) of a comm type as SimAI reads it in `column` (fwd, ig or wg), or None (no communication)."""
    for prefix, kind in KINDS:
        if text.startswith(prefix):
            suffix = text[len(prefix):]
            group = {"": "dp" if column == "wg" else "tp", "_EP": "ep", "_DP_EP": "dp_ep"}.get(suffix, "none")
            return kind, group
    return None


def read_aicb(path: str | Path) -> AicbFile:
    """Read an AICB workload file as SimAI's Workload.cc does (see the module docstring); UserError naming the file
    and line on anything SimAI could not run or would misread."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise UserError(f"{p}: cannot read the AICB workload file: {e.strerror}") from None
    except UnicodeDecodeError:
        raise UserError(f"{p}: not an AICB workload file (not text)") from None
    lines = text.splitlines()
    if not lines or not lines[0].split():
        raise UserError(f"{p}:1: empty: an AICB workload file starts with its header "
                        f"('{POLICY} model_parallel_NPU_group: …')")
    tokens = lines[0].split()
    if tokens[0] != POLICY:
        raise UserError(f"{p}:1: '{tokens[0]}' is not the parallelism policy fabricsim reads: AICB files start with "
                        f"{POLICY}")

    def value(*keys: str, required: bool = True, least: int = 1) -> int:
        found = None
        for i, tok in enumerate(tokens[1:], 1):
            if tok in keys:
                m = _STOI.match(tokens[i + 1]) if i + 1 < len(tokens) else None
                if m is None:
                    raise UserError(f"{p}:1: {keys[0]} expects a whole number after it, got "
                                    f"{tokens[i + 1]!r}" if i + 1 < len(tokens) else f"{p}:1: {keys[0]} has no value")
                found = int(m.group(1))
        if found is None:
            if required:
                raise UserError(f"{p}:1: {keys[0]} missing from the header (SimAI needs model_parallel_NPU_group:, "
                                f"ep:, pp:, vpp: and ga:; a legacy AICB header lacks the last four: append "
                                f"'ep: 1 pp: 1 vpp: 1 ga: 1')")
            return 0
        if found < least:
            raise UserError(f"{p}:1: {keys[0]} {found}: must be ≥ {least}")
        return found

    tp = value("model_parallel_NPU_group:")
    ep = value("ep:")
    pp = value("pp:")
    vpp = value("vpp:", least=0)
    ga = value("ga:")
    all_gpus = value("all_gpus:", required=False, least=0)
    pp_comm = value("pp_comm:", "pp_comm", required=False, least=0)
    for key in ("checkpoints:", "checkpoint_initiates:"):
        if key in tokens:
            i = tokens.index(key)
            n = _STOI.match(tokens[i + 1]) if i + 1 < len(tokens) else None
            if n is None or int(n.group(1)) != 0:
                raise UserError(f"{p}:1: {key} {tokens[i + 1] if i + 1 < len(tokens) else ''}: activation "
                                f"recomputation (SimAI's forward-in-backward) is not simulated; AICB writes 0")
    notes: list[str] = []
    if vpp == 0 or all_gpus == 0 or (pp != 1 and pp_comm == 0) or (pp == 1 and pp_comm != 0):
        notes.append(f"{p}:1: SimAI warns 'Input workload format mismatch' on this header (a vpp, all_gpus or "
                     f"pp_comm of 0, or pp_comm given with pp = 1)")
    if len(lines) < 2 or _STOI.match(lines[1]) is None:
        raise UserError(f"{p}:2: expected the number of rows (a whole number), got "
                        f"{lines[1].strip()[:40]!r}" if len(lines) >= 2 else f"{p}:2: missing: the number of rows")
    n = int(_STOI.match(lines[1]).group(1))
    if n < 0:
        raise UserError(f"{p}:2: the number of rows must be ≥ 0, got {n}")
    rows: list[Row] = []
    unknown: dict[tuple[str, str], list[int]] = defaultdict(list)
    no_group: dict[tuple[str, str], list[int]] = defaultdict(list)
    for lineno in range(3, len(lines) + 1):
        if len(rows) == n:
            break
        words = lines[lineno - 1].split()
        if not words:
            continue
        rows.append(_row(words, f"{p}:{lineno}: row {len(rows) + 1} of {n}", lineno, unknown, no_group))
    if len(rows) < n:
        raise UserError(f"{p}:2: the header announces {n} rows, but the file has {len(rows)} (it ends at line "
                        f"{len(lines)})")
    rest = [i + 1 for i in range(rows[-1].line if rows else 2, len(lines)) if lines[i].split()]
    if rest:
        notes.append(f"{p}:{rest[0]}: {len(rest)} line(s) after the {n} rows line 2 announces: ignored, as SimAI "
                     f"ignores them")
    cols = {"fwd": "forward", "ig": "input-gradient", "wg": "weight-gradient"}
    for (column, t), at in unknown.items():
        notes.append(f"{p}:{at[0]}: {cols[column]} comm type '{t}' is not a collective SimAI reads: no "
                     f"communication ({len(at)} row(s))")
    for (column, t), at in no_group.items():
        notes.append(f"{p}:{at[0]}: {cols[column]} comm type '{t}' has no group SimAI knows (its suffix): not "
                     f"simulated (SimAI charges it only its small-message latency under 1 MiB) ({len(at)} row(s))")
    return AicbFile(str(p), tokens[0], tp, ep, pp, vpp, ga, all_gpus, pp_comm, tuple(rows), tuple(notes))


def _row(words: list[str], where: str, lineno: int, unknown: dict, no_group: dict) -> Row:
    """One row's 12 fields (UserError naming `where` on a bad one); notes what SimAI would read silently."""
    if len(words) != 12:
        raise UserError(f"{where}: {len(words)} fields, a row has 12 (name, dependency, then compute ns, comm type and "
                        f"comm bytes for forward, input gradient and weight gradient, then the weight-update ns)")

    def num(k: int, signed: bool = False) -> int:
        if not (_INT if signed else _UINT).fullmatch(words[k]):
            raise UserError(f"{where} ('{words[0]}'): field {k + 1}, {FIELDS[k]}: expected a whole "
                            f"{'number' if signed else 'number ≥ 0'}, got {words[k]!r}")
        return int(words[k])

    colls = []
    for k, column in ((3, "fwd"), (6, "ig"), (9, "wg")):
        size = num(k + 1)
        kg = collective(words[k], column)
        if kg is None:
            if words[k] != "NONE":
                unknown[(column, words[k])].append(lineno)
            colls.append(None)
            continue
        if kg[1] == "none" and size > 0:
            no_group[(column, words[k])].append(lineno)
        colls.append(Collective(kg[0], kg[1], size, words[k]))
    return Row(words[0], lineno, num(1, signed=True), num(2), colls[0], num(5), colls[1], num(8), colls[2], num(11))


# ---- the program -------------------------------------------------------------------------------------------------

def _signature(r: Row) -> tuple:
    return (r.name, r.fwd, r.ig, r.wg)


def micro_batches(f: AicbFile) -> tuple[int, int, int] | None:
    """(P, L, S): the first P rows run once, then GA micro-batches of L rows each (the same names and collectives
    L rows apart), then the last S rows once; the largest L for the smallest P; None when the rows do not repeat
    GA times."""
    n, ga = len(f.rows), f.ga
    if ga <= 1:
        return (0, n, 0) if n else None
    ids: dict[tuple, int] = {}
    sig = np.array([ids.setdefault(_signature(r), len(ids)) for r in f.rows], dtype=np.int64)
    for start in range(n):
        span = (n - start) // ga
        if span == 0:
            break
        later = np.flatnonzero(sig[start + 1:start + span + 1] == sig[start]) + 1
        for length in sorted(later.tolist(), reverse=True):
            end = start + ga * length
            if np.array_equal(sig[start:end - length], sig[start + length:end]):
                return start, length, n - end
    return None


@dataclass(frozen=True)
class _Pass:
    """One pass of a unit's program: rows in execution order, backward or not, and its micro-batch (None: a pass
    that runs once)."""

    rows: tuple[int, ...]
    backward: bool
    micro_batch: int | None
    key: tuple


def program(f: AicbFile, stage: int) -> list[_Pass]:
    """The passes a unit of pipeline stage `stage` runs in one step (see the module docstring)."""
    n = len(f.rows)
    if f.pp == 1:
        return [_Pass(tuple(range(n)), False, None, ("all", False)),
                _Pass(tuple(range(n - 1, -1, -1)), True, None, ("all", True))]
    cut = micro_batches(f)
    if cut is None:
        raise UserError(f"{f.path}: pp: {f.pp} needs the rows of each of the ga: {f.ga} micro-batches, but the "
                        f"{n} rows do not repeat {f.ga} times")
    P, L, S = cut

    def fwd(lo: int, hi: int, mb, key) -> _Pass:
        return _Pass(tuple(range(lo, hi)), False, mb, (key, False))

    def bwd(lo: int, hi: int, mb, key) -> _Pass:
        return _Pass(tuple(range(hi - 1, lo - 1, -1)), True, mb, (key, True))

    out = [fwd(0, P, None, "first")] if P else []
    for ps in one_f_one_b(f.pp, f.ga, stage):
        lo = P + ps.micro_batch * L
        out.append((bwd if ps.backward else fwd)(lo, lo + L, ps.micro_batch, ps.micro_batch))
        if not ps.backward and ps.micro_batch == f.ga - 1 and S:
            out += [fwd(n - S, n, None, "last"), bwd(n - S, n, None, "last")]
    if P:
        out.append(bwd(0, P, None, "first"))
    return out


# ---- lowering ----------------------------------------------------------------------------------------------------

@dataclass
class _Segment:
    """Part of a pass up to a row whose weight-gradient collective runs: its compute, its blocking collectives in
    closed form (ps and bytes per GPU, per group) and across the fabric (per (group, pattern): bytes per ring edge
    or per ordered pair, and NCCL's latency), and the weight-gradient collective that starts at its end."""

    compute_ps: int = 0
    closed_ps: dict = field(default_factory=lambda: defaultdict(int))
    closed_bytes: dict = field(default_factory=lambda: defaultdict(float))
    cross: dict = field(default_factory=dict)
    wg: Collective | None = None


@dataclass
class _Run:
    """A unit's pass as lowered: the start barrier's deps, each segment's compute ref and join deps, the end."""

    start: list
    start_ref: int
    computes: list = field(default_factory=list)
    joins: list = field(default_factory=list)
    ends: list = field(default_factory=list)
    end: int = 0


class _Flows(_Builder):
    """`_Builder` with a row of flows whose source and destination units differ flow by flow (an all-to-all)."""

    def flow_rows(self, src: list[int], dst: list[int], size: float, delay: int, deps: list[list[int]], dim: str,
                  su: list[int], du: list[int]) -> range:
        """Flows src[i] → dst[i] as `flows` makes them, flow i waiting for `deps[i]` and labelled su[i] → du[i]."""
        r = self.flows(src, dst, size, delay, [], dim, su[0], du[0])
        self.m["su"][r.start:r.stop] = su
        self.m["du"][r.start:r.stop] = du
        self.m_dep_counts[r.start:r.stop] = [len(d) for d in deps]
        for d in deps:
            self.m_dep_flat.extend(d)
        return r


def aicb_job(f: AicbFile, gpus: int, steps: int = 1, device=None) -> TrainJob:
    """The `TrainJob` a lowered AICB file carries for the report: its parallelism (dp = DP / EP expert-data-parallel
    replicas, as `train.job` counts them), GA micro-batches of one sequence, and a model of no FLOPs (the file gives
    times, not a model): the report's MFU is then 0 and the plan reports none."""
    from ..devices import device as get_device

    dp = f.dp(gpus) // f.ep
    model = ModelSpec(f.name, layers=max(1, f.pp * f.vpp), hidden=0, ffn=0, heads=1, kv_heads=1, vocab=0, seq_len=1,
                      source=f.path)
    return TrainJob(model, Parallel(f.tp, f.pp, dp, f.ep, 1, 1), 1, f.ga * dp * f.ep, device or get_device("h100"),
                    steps=steps)


def check_gpus(f: AicbFile, gpus: int, available: int) -> None:
    """UserError naming --gpus when `gpus` cannot run the file's TP × PP (and EP) on a fabric of `available`."""
    if not 1 <= gpus <= available:
        raise UserError(f"--gpus: {gpus} GPUs, but the fabric has {available}")
    if gpus % (f.tp * f.pp):
        raise UserError(f"--gpus: {gpus} GPUs are not a multiple of TP × PP = {f.tp} × {f.pp} (the header of "
                        f"{f.path}): SimAI's DP = GPUs / (TP · PP)")
    dp = f.dp(gpus)
    if dp % f.ep:
        raise UserError(f"--gpus: DP = {gpus} / ({f.tp} × {f.pp}) = {dp} is not a multiple of ep = {f.ep} (the "
                        f"expert weights' data-parallel group is DP / EP)")


def lower_aicb(f: AicbFile, fabric: FabricView, scenario, gpus: int, steps: int = 1) -> Lowered:
    """The workload of `steps` iterations of `f` on the fabric's first `gpus` GPUs (see the module docstring)."""
    check_gpus(f, gpus, len(fabric.hosts))
    job = aicb_job(f, gpus, steps)
    par = job.par
    tp, ep, dp = par.tp, par.ep, par.dp
    domain = fabric.domain
    units = [(0, e, d, s) for s in range(par.pp) for d in range(dp) for e in range(ep)]
    uid = {u: par.unit(*u) for u in units}
    size_of = {"tp": tp, "ep": ep, "dp": dp * ep, "dp_ep": dp}

    def gpu(t: int, u) -> int:
        return par.rank(t, *u)

    def server(rank: int) -> int:
        return rank // domain if domain > 1 else rank

    def members(group: str, u) -> list:
        """The units of `u`'s `group`, in rank order (a ring's order)."""
        _, e, d, s = u
        if group == "tp":
            return [u]
        if group == "ep":
            return [(0, x, d, s) for x in range(ep)]
        if group == "dp":
            return [(0, x, y, s) for y in range(dp) for x in range(ep)]
        return [(0, e, y, s) for y in range(dp)]

    shapes: dict[tuple, tuple[bool, int]] = {}

    def shape(group: str, u) -> tuple[bool, int]:
        """Whether the group's GPUs share one NVLink domain, and how many servers one of its rings visits."""
        grp = members(group, u)
        key = (group, grp[0])
        if key not in shapes:
            if group == "tp":
                every = ring = [gpu(t, u) for t in range(tp)]
            else:
                every = [gpu(t, w) for w in grp for t in range(tp)]
                ring = [gpu(0, w) for w in grp]
            shapes[key] = (domain > 1 and len({server(r) for r in every}) == 1, len({server(r) for r in ring}))
        return shapes[key]

    geos = {u: tuple(shape(g, u) for g in GROUPS) for u in units}
    segments_cache: dict[tuple, list[_Segment]] = {}

    def segments(ps: _Pass, geo: tuple) -> list[_Segment]:
        key = (ps.key, geo)
        if key in segments_cache:
            return segments_cache[key]
        out = [_Segment()]
        for i in ps.rows:
            r = f.rows[i]
            seg = out[-1]
            seg.compute_ps += (r.ig_ns + r.wg_ns if ps.backward else r.fwd_ns) * 1000
            c = r.ig if ps.backward else r.fwd
            if c is not None and c.group != "none" and c.size > 0 and size_of[c.group] > 1:
                size = c.size if ps.backward else max(c.size, MIN_FWD_BYTES)
                n = size_of[c.group]
                local, nodes = geo[GROUPS.index(c.group)]
                if local and c.group in ("tp", "ep"):
                    seg.closed_ps[c.group] += closed_form_ps(c.kind, n, size, fabric.node)
                    seg.closed_bytes[c.group] += ring_bytes(c.kind, n, size)
                else:
                    pattern = "pairs" if c.kind == "all_to_all" else "ring"
                    per = size / n if pattern == "pairs" else ring_bytes(c.kind, n, size)
                    b0, l0 = seg.cross.get((c.group, pattern), (0.0, 0))
                    seg.cross[(c.group, pattern)] = (b0 + per, l0 + latency_ps(c.kind, n, nodes))
            w = r.wg if ps.backward else None
            if w is not None and w.group != "none" and w.size > 0 and size_of[w.group] > 1:
                seg.wg = w
                out.append(_Segment())
        if len(out) > 1 and out[-1].compute_ps == 0 and not out[-1].closed_ps and not out[-1].cross:
            out.pop()
        segments_cache[key] = out
        return out

    b = _Flows()
    closed = dict.fromkeys(DIMS, 0.0)
    programs = {s: program(f, s) for s in range(par.pp)}
    index = {s: {(q.micro_batch, q.backward): k for k, q in enumerate(programs[s]) if q.micro_batch is not None}
             for s in range(par.pp)}
    prev_end: dict = dict.fromkeys(units)
    end_refs: list[dict] = []
    for _step in range(steps):
        runs: dict[tuple, list[_Run]] = {}
        for u in units:
            rep = gpu(0, u)
            mine = []
            for ps in programs[u[3]]:
                start = [prev_end[u]] if prev_end[u] is not None else []
                run = _Run(start, b.barrier(start))
                prev = run.start_ref
                for seg in segments(ps, geos[u]):
                    cref = b.step(rep, seg.compute_ps, [prev], uid[u], "compute")
                    join = [cref]
                    run.computes.append(cref)
                    run.joins.append(join)
                    tail = b.barrier(join)
                    for g in ("tp", "ep"):
                        if g in seg.closed_ps:
                            tail = b.step(rep, seg.closed_ps[g], [tail], uid[u], g)
                            closed[g] += seg.closed_bytes[g] * tp
                    run.ends.append(tail)
                    prev = tail
                run.end = prev
                prev_end[u] = prev
                mine.append(run)
            runs[u] = mine
        # Flows between GPUs: blocking collectives across the fabric, weight-gradient collectives, pipeline sends.
        tails: dict = {u: [b.step(gpu(0, u), 0, [prev_end[u]], uid[u], "compute")] for u in units}
        stream: dict[tuple, list[list[int]]] = {}
        for u in units:
            s = u[3]
            order = programs[s]
            for k, ps in enumerate(order):
                run = runs[u][k]
                for si, seg in enumerate(segments(ps, geos[u])):
                    for (g, pattern), (per, delay) in seg.cross.items():
                        grp = members(g, u)
                        if grp[0] != u:
                            continue  # the group's first unit makes its flows
                        mem = [runs[w][k] for w in grp]
                        if g == "tp":
                            hs = [gpu(t, u) for t in range(tp)]
                            if pattern == "ring":
                                _ring(b, hs, [uid[u]] * tp, per, delay, [[run.computes[si]]] * tp, "tp",
                                      [run.joins[si]] * tp)
                            else:
                                _pairs(b, [[h] for h in hs], [uid[u]] * tp, per, delay, [[run.computes[si]]] * tp,
                                       "tp", [run.joins[si]] * tp)
                        elif pattern == "ring":
                            for t in range(tp):
                                _ring(b, [gpu(t, w) for w in grp], [uid[w] for w in grp], per, delay,
                                      [[m.computes[si]] for m in mem], DIM_OF[g], [m.joins[si] for m in mem])
                        else:
                            _pairs(b, [[gpu(t, w) for t in range(tp)] for w in grp], [uid[w] for w in grp], per,
                                   delay, [[m.computes[si]] for m in mem], DIM_OF[g], [m.joins[si] for m in mem])
                    w = seg.wg
                    if w is None or members(w.group, u)[0] != u:
                        continue
                    grp = members(w.group, u)
                    mem = [runs[x][k] for x in grp]
                    n = size_of[w.group]
                    for t in range(tp):
                        hs = [gpu(t, x) for x in grp]
                        key = (w.group, uid[u], t)
                        before = stream.get(key) or [[] for _ in grp]
                        into: list[list[int]] = [[] for _ in grp]
                        deps = [[m.ends[si], *before[i]] for i, m in enumerate(mem)]
                        lat = latency_ps(w.kind, n, len({server(h) for h in hs}))
                        if w.kind == "all_to_all":
                            _pairs(b, [[h] for h in hs], [uid[x] for x in grp], w.size / n, lat, deps,
                                   DIM_OF[w.group], into)
                        else:
                            _ring(b, hs, [uid[x] for x in grp], ring_bytes(w.kind, n, w.size), lat, deps,
                                  DIM_OF[w.group], into)
                        stream[key] = into
                        for x, refs in zip(grp, into):
                            tails[x].extend(refs)
                # Pipeline: send to the next stage (forward) or the previous one (backward).
                ts = s - 1 if ps.backward else s + 1
                if ps.micro_batch is None or not 0 <= ts < par.pp:
                    continue
                tu = (0, u[1], u[2], ts)
                target = runs[tu][index[ts][(ps.micro_batch, ps.backward)]]
                if f.pp_comm <= 0:
                    target.start.append(run.end)
                    continue
                b.begin()
                r = b.flows([gpu(t, u) for t in range(tp)], [gpu(t, tu) for t in range(tp)], f.pp_comm, 0,
                            [run.end], "pp", uid[u], uid[tu])
                target.start.extend(r)
                (runs[u][k + 1].start if k + 1 < len(order) else tails[u]).extend(r)
        for u in units:
            prev_end[u] = b.barrier(tails[u])
        end_refs.append(tails)

    wl = Workload(scenario)
    wl.compute(np.asarray(b.s_host, dtype=np.int64), np.asarray(b.s_dur, dtype=np.uint64), after=b.s_deps)
    wl.barriers(b.b_deps)
    if b.n_msgs:
        wl.messages(b.col("src", np.int64), b.col("dst", np.int64), b.col("size", np.uint64), packet_size=4096,
                    delay_ps=b.col("delay", np.uint64),
                    after=Deps(np.asarray(b.m_dep_counts, dtype=np.uint32), np.asarray(b.m_dep_flat, dtype=np.uint32)))
    order = sorted(units, key=uid.get)
    return Lowered(wl, job, fabric, np.asarray(b.s_unit, dtype=np.int64), np.asarray(b.s_kind, dtype=np.uint8),
                   b.col("dim", np.uint8), b.col("su", np.int64), b.col("du", np.int64), b.col("size", np.float64),
                   b.col("coll", np.int64), b.col("delay", np.int64), closed,
                   [[list(tails[u]) for u in order] for tails in end_refs])


def _pairs(b: _Flows, hosts: list[list[int]], units: list[int], per_pair: float, delay: int, deps: list[list[int]],
           dim: str, into: list[list[int]]) -> None:
    """An all-to-all among members i, each with the GPUs `hosts[i]` (one per TP rank, or one): for every ordered pair
    (i, j), a flow from each GPU of i to the GPU of the same TP rank of j, after every ref of `deps[i]` and
    `deps[j]`; the pair's flows are appended to `into[i]` and `into[j]`."""
    n = len(hosts)
    if n < 2 or per_pair <= 0:
        return
    b.begin()
    for i in range(n):
        src, dst, fdeps, dus = [], [], [], []
        for j in range(n):
            if i != j:
                dij = deps[i] + deps[j]
                src += hosts[i]
                dst += hosts[j]
                fdeps += [dij] * len(hosts[i])
                dus += [units[j]] * len(hosts[i])
        r = b.flow_rows(src, dst, per_pair, delay, fdeps, dim, [units[i]] * len(src), dus)
        into[i].extend(r)
        k = 0
        for j in range(n):
            if i != j:
                into[j].extend(r[k:k + len(hosts[i])])
                k += len(hosts[i])


def warn(f: AicbFile) -> None:
    """Issue the file's notes as FabricsimWarnings (the command line prints each as one line)."""
    for note in f.warnings:
        warnings.warn(note, FabricsimWarning, stacklevel=2)


__all__ = ["AicbFile", "Row", "Collective", "read_aicb", "lower_aicb", "micro_batches", "program", "aicb_job",
           "check_gpus", "warn", "POLICY", "GROUPS"]
