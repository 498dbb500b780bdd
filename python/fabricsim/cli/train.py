"""`fabricsim train`: one step (or N) of a training job, or of a SimAI/AICB workload file (--aicb), on a fabric: the
step time, why, and the busiest links."""

from __future__ import annotations

import click

from ..collectives.fabrics import builtin_fabrics
from ..errors import UserError
from ._common import (
    EXIT_INCOMPLETE,
    check_figure_path,
    echo_json,
    fabric_option,
    run_control,
    simulate,
    stdout_console,
)

MODEL_HELP = ("A preset (gpt3-1.3b, gpt3-13b, gpt3-175b, llama2-7b, llama2-13b, llama2-70b, llama3-8b, llama3-70b, "
              "llama3-405b, mixtral-8x7b, deepseek-v3) or a model TOML file (layers, hidden, ffn, heads, kv_heads, "
              "vocab, seq_len, experts, top_k, expert_ffn, shared_experts, dense_layers, swiglu).")


class ScheduleParam(click.ParamType):
    """`1f1b` or `interleaved:V` (V model chunks per stage)."""

    name = "schedule"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        text = str(value)
        if text == "1f1b":
            return ("1f1b", 1)
        kind, _, v = text.partition(":")
        if kind == "interleaved" and v.isdigit() and int(v) >= 2:
            return ("interleaved", int(v))
        self.fail(f"'{text}' is not a schedule: give 1f1b or interleaved:V (V ≥ 2 model chunks per stage)", param, ctx)


def _given(ctx: click.Context, name: str) -> bool:
    """Whether the user gave parameter `name` (command line or environment)."""
    from click.core import ParameterSource

    return ctx.get_parameter_source(name) in (ParameterSource.COMMANDLINE, ParameterSource.ENVIRONMENT)


def _flag(ctx: click.Context, name: str) -> str:
    """Parameter `name`'s longest option string."""
    return next(max(p.opts, key=len) for p in ctx.command.params if p.name == name)


def _pos(name: str, default: int | None, help: str):
    return click.option(name, type=click.IntRange(min=1), default=default, show_default=default is not None,
                        help=help)


AICB_FIXED = ("model_name", "micro_batch", "global_batch", "seq_len", "schedule", "zero", "device_name", "efficiency",
              "no_sp", "cp", "layer_times")
"""Options an AICB workload file decides (its rows give compute times and collectives): refused with --aicb."""
AICB_HEADER = {"tp": ("model_parallel_NPU_group", lambda f, n: f.tp), "pp": ("pp", lambda f, n: f.pp),
               "ep": ("ep", lambda f, n: f.ep),
               "dp": ("dp = GPUs / (TP · PP · EP)", lambda f, n: f.dp(n) // f.ep)}
"""Options an AICB file's header decides, accepted with --aicb when they agree with it."""


@click.command("train")
@click.option("--model", "model_name", default=None, metavar="NAME|FILE", help=MODEL_HELP + " Required without --aicb.")
@click.option("--aicb", "aicb", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="A SimAI/AICB workload file (aliyun/aicb's generator; SimAI's -w), read as SimAI reads it: TP, PP "
                   "and EP from its header, DP = GPUs / (TP · PP), its rows' compute and collectives as one pipeline "
                   "stage's program (instead of --model and the job's options).")
@fabric_option(builtin_fabrics(), what="Required. GPUs are its hosts in order (rank r on the r-th); a rail_optimized "
               "fabric's servers are NVLink domains.")
@_pos("--tp", 1, "Tensor-parallel GPUs (inside a server's NVLink domain when it divides the GPUs per server).")
@_pos("--pp", 1, "Pipeline stages.")
@_pos("--dp", 1, "Data-parallel replicas (of the experts, with --ep: Megatron's data-parallel size is dp × ep).")
@_pos("--ep", 1, "Expert-parallel GPUs (an MoE model's experts split over them).")
@_pos("--cp", 1, "Context-parallel GPUs (the sequence split over them, ring attention).")
@_pos("--micro-batch", 1, "Sequences per micro-batch.")
@_pos("--global-batch", None, "Sequences per step (default: micro-batch × dp × ep × pp).")
@_pos("--seq-len", None, "Tokens per sequence (default: the model's).")
@click.option("--schedule", type=ScheduleParam(), default="1f1b", show_default=True, metavar="1f1b|interleaved:V",
              help="Pipeline schedule: Megatron-LM's 1F1B, or interleaved 1F1B with V model chunks per stage.")
@click.option("--zero", type=click.IntRange(0, 3), default=0, show_default=True,
              help="ZeRO stage: 0 all-reduces gradients; 1 (Megatron's distributed optimizer) and 2 reduce-scatter "
                   "them and all-gather the parameters after the optimizer; 3 also all-gathers each chunk's "
                   "parameters before every pass.")
@click.option("--device", "device_name", type=click.Choice(["h100", "h200", "b200", "a100", "mi300x"]),
              default="h100", show_default=True, help="GPU preset: peak dense BF16 FLOP/s and HBM bandwidth.")
@click.option("--efficiency", type=click.FloatRange(0, 1, min_open=True), default=0.5, show_default=True,
              help="Fraction of the device's peak a kernel achieves (an assumption, not a measurement).")
@click.option("--layer-times", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Measured compute times (TOML, microseconds per micro-batch on one GPU of this job: forward_us, "
                   "backward_us, moe_forward_us, moe_backward_us, head_forward_us, head_backward_us, optimizer_us) "
                   "instead of the roofline.")
@click.option("--no-sequence-parallel", "no_sp", is_flag=True,
              help="TP all-reduces activations instead of reduce-scatter/all-gather (sequence parallelism is on by "
                   "default when tp > 1).")
@_pos("--gpus", None, "GPUs the job uses: the fabric's first N (default: all of them).")
@_pos("--steps", 1, "Training steps simulated back to back (the answer is their mean).")
@click.option("--fidelity", type=click.Choice(["flow", "hybrid", "packet"]), default="flow", show_default=True,
              help="Engine: flow (max-min fair flows, fast), hybrid or packet (every packet; slow at scale).")
@click.option("--seed", type=click.IntRange(min=0), default=1, show_default=True, help="Seed (ECMP hashing).")
@click.option("--top-links", type=click.IntRange(min=0), default=10, show_default=True,
              help="How many of the busiest links to list.")
@click.option("--json", "as_json", is_flag=True,
              help="One JSON object: step_time_s, breakdown (compute_s, exposed_s per tp/cp/ep/pp/dp, bubble_s, "
                   "optimizer_s), mfu, traffic_bytes per dimension, links, job, run.")
@click.option("--figure", type=click.Path(dir_okay=False), default=None,
              help="Write a figure (PNG, SVG or PDF): the step's decomposition, the critical GPU's timeline and the "
                   "busiest links.")
@click.option("--perfetto", type=click.Path(dir_okay=False), default=None,
              help="Write a Chrome-trace JSON (ui.perfetto.dev): a track per TP group, one event per pass and per "
                   "collective.")
@run_control
def train(model_name: str, fabric, tp: int, pp: int, dp: int, ep: int, cp: int, micro_batch: int,
          global_batch: int | None, seq_len: int | None, schedule: tuple[str, int], zero: int, device_name: str,
          efficiency: float, layer_times: str | None, no_sp: bool, gpus: int | None, steps: int, fidelity: str, seed: int, top_links: int,
          as_json: bool, figure: str | None, perfetto: str | None, max_events: int | None, max_wall: float | None,
          partial: bool, quiet: bool, aicb: str | None) -> None:
    """One training step (or --steps N) of a model on a fabric, Megatron-LM style: how long it takes, and why.

    Prints the step time; compute, the communication of each parallel dimension that no compute hides (tp, cp,
    ep, pp, dp), the pipeline bubble and the optimizer, which add up to the step time on the critical GPU; MFU
    (model FLOPs / (step time × GPUs × peak)); the bytes of each dimension; and the busiest links with their
    utilization. GPUs: tp × pp × dp × ep × cp must equal --gpus (default: the fabric's hosts).

    With --aicb FILE the job is a SimAI/AICB workload file instead: its header's TP, PP and EP, DP = GPUs / (TP ·
    PP), and its rows (compute in ns, collectives) as every pipeline stage's program, in 1F1B order across stages.

    Example: fabricsim train --model gpt3-13b --tp 8 --pp 4 --dp 8 --global-batch 256 --fabric cluster.toml
    """
    from ..train import aicb_plan
    from ..train import plan as make_plan

    if fabric is None:
        raise UserError("fabricsim train: give the fabric: --fabric FABRIC.toml|NAME")
    check_figure_path("fabricsim train", figure)
    fabric_name = fabric.name or fabric.path
    if aicb is not None:
        ctx = click.get_current_context()
        given = [name for name in AICB_FIXED if _given(ctx, name)]
        if given:
            raise UserError(f"{_flag(ctx, given[0])}: not with --aicb (the AICB file {aicb} gives the compute times "
                            f"and collectives)")
        p = aicb_plan(aicb, fabric=fabric_name, gpus=gpus, steps=steps, seed=seed, top_links=top_links)
        for name, have in (("tp", tp), ("pp", pp), ("ep", ep), ("dp", dp)):
            what, of = AICB_HEADER[name]
            want = of(p.aicb, p.job.par.world)
            if _given(ctx, name) and have != want:
                raise UserError(f"--{name} {have}: the AICB file {aicb} says {what} = {want}")
        label = f"simulating {p.aicb.name} on {p.job.par.world} GPUs"
    else:
        if model_name is None:
            raise UserError("fabricsim train: give the job: --model NAME|FILE (or --aicb FILE)")
        kind, v = schedule
        p = make_plan(model_name, fabric=fabric_name, tp=tp, pp=pp, dp=dp, ep=ep, cp=cp,
                      micro_batch=micro_batch, global_batch=global_batch, seq_len=seq_len, schedule=kind, vpp=v,
                      zero=zero, device_name=device_name, efficiency=efficiency, sequence_parallel=not no_sp,
                      steps=steps, gpus=gpus, seed=seed, top_links=top_links, layer_times=layer_times)
        label = f"simulating {p.job.model.name} on {p.job.par.world} GPUs"
    rec = simulate(lambda **kw: p.run(fidelity, **kw).record, label, max_events=max_events, max_wall=max_wall,
                   partial=partial, quiet=quiet, show=lambda r: _show(p.result(r).summary, as_json))
    res = p.result(rec, rec.wall_s)
    if figure:
        from ..train.figure import figure as draw

        draw(res, figure)
        click.echo(f"wrote the figure to {figure}", err=True)
    if perfetto:
        from ..train.figure import perfetto as trace

        trace(res, perfetto)
        click.echo(f"wrote the Perfetto trace to {perfetto} (open it in ui.perfetto.dev)", err=True)
    _show(res.summary, as_json)
    if not rec.complete:
        click.echo(f"fabricsim train: {rec.incomplete_reason(None)}", err=True)
        raise click.exceptions.Exit(EXIT_INCOMPLETE)


def _ms(s: float) -> str:
    return f"{s * 1e3:,.2f} ms"


def _show(s: dict, as_json: bool) -> None:
    if as_json:
        echo_json(s)
        return
    from rich.table import Table

    from ..units import format_size

    j = s["job"]
    con = stdout_console(110)
    if "aicb" in j:
        ep = f" × EP {j['ep']} (SimAI's DP {j['simai_dp']})" if j["ep"] > 1 else ""
        con.print(f"[bold]{j['model']}[/bold] (AICB workload, {j['rows']:,} rows) on {j['gpus']} GPUs of "
                  f"{j['fabric']}: TP {j['tp']} × PP {j['pp']} × DP {j['dp']}{ep}, GA {j['ga']}"
                  f"{', 1F1B' if j['pp'] > 1 else ''} ({j['fidelity']})")
    else:
        con.print(f"[bold]{j['model']}[/bold] ({j['params'] / 1e9:,.1f}B parameters) on {j['gpus']} {j['device']} GPUs "
                  f"of {j['fabric']}: TP {j['tp']} × PP {j['pp']} × DP {j['dp']} × EP {j['ep']} × CP {j['cp']}, "
                  f"{j['schedule']}{'' if j['vpp'] == 1 else ' V=' + str(j['vpp'])}, ZeRO {j['zero']}, "
                  f"{j['micro_batches']} micro-batches of {j['micro_batch']} × {j['seq_len']} tokens ({j['fidelity']})")
    if s.get("step_time_s") is None:
        con.print("the run did not complete: no step time")
        return
    b = s["breakdown"]
    mfu = "" if s.get("mfu") is None else f"   MFU {s['mfu'] * 100:.1f}%"
    con.print(f"step time [bold]{_ms(s['step_time_s'])}[/bold]{mfu}   (critical GPU {s['critical_gpu']})")
    t = Table(title="where the step goes (critical GPU)", title_justify="left")
    t.add_column("part")
    t.add_column("time", justify="right")
    t.add_column("share", justify="right")
    rows = [("compute", b["compute_s"])] + [(f"exposed {d.upper()}", x) for d, x in b["exposed_s"].items() if x > 0] + [
        ("pipeline bubble", b["bubble_s"]), ("optimizer", b["optimizer_s"])]
    for name, x in rows:
        t.add_row(name, _ms(x), f"{x / s['step_time_s'] * 100:.1f}%")
    con.print(t)
    con.print("traffic per step: " + ", ".join(f"{d.upper()} {format_size(x)}" for d, x in s["traffic_bytes"].items() if x))
    if s["links"]:
        lt = Table(title="busiest links", title_justify="left")
        for col in ("link", "bytes", "utilization", "peak queue", "PFC pauses", "drops"):
            lt.add_column(col, justify="left" if col == "link" else "right")
        for ln in s["links"]:
            u, pk = ln["utilization"], ln.get("peak_bytes")
            lt.add_row(ln["link"], format_size(ln["bytes"]), "" if u is None else f"{u * 100:.1f}%",
                       "n/a (flow)" if pk is None else format_size(pk), f"{ln.get('pfc_pauses') or 0:,}",
                       f"{ln.get('drops') or 0:,}")
        con.print(lt)
    r = s["run"]
    con.print(f"[dim]{r['flows']:,} flows, {r['compute_steps']:,} compute steps; lowered in {r['lower_s']:.2f} s, "
              f"simulated in {r['simulate_s']:.2f} s[/dim]")
