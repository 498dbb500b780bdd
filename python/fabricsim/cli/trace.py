"""`fabricsim trace info|run|synth|rescale`: Chakra execution traces, summarized, simulated on a fabric, synthesized or rescaled."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..collectives.fabrics import builtin_fabrics
from ..devices import DEVICES
from ..units import format_duration, format_size
from ._common import (SEED,
    EXIT_INCOMPLETE,
    FIDELITY,
    OUT_HELP,
    Fabric,
    deprecated_option,
    echo_json,
    fabric_option,
    incomplete_runs,
    resolve_trace,
    run_control,
    seeds_option,
    simulate,
    simulate_seeds,
    stdout_console,
)
from ._links import (check_links_figure, detail_option, links_figure_option, more_rows, preload_figures, print_links,
                     write_links_figure)
from .train import MODEL_HELP, ScheduleParam


@click.group("trace")
def trace() -> None:
    """Chakra execution traces (MLCommons ET, one PREFIX.{rank}.et file per rank, gzip or not).

    A trace argument is PREFIX, or a folder holding one trace (`trace synth --out DIR` writes DIR/trace.{rank}.et).
    """


@trace.command("info")
@click.argument("prefix", metavar="PREFIX|DIR")
@click.option("--json", "as_json", is_flag=True, help="Print exactly one JSON object on stdout.")
def info(prefix: str, as_json: bool) -> None:
    """Node counts by type, bytes by collective type, point-to-point bytes and the critical path (the longest
    dependency chain of a rank, in nodes and in COMP time) of the trace PREFIX.{rank}.et."""
    from ..chakra import info as trace_info
    from ..chakra import load

    out = trace_info(load(resolve_trace(prefix)))
    if as_json:
        echo_json(out)
        return
    con = stdout_console(100)
    con.print(f"[bold]{prefix}[/bold]: {out['ranks']} ranks")
    con.print("nodes: " + ", ".join(f"{k} {v}" for k, v in sorted(out["nodes"].items())))
    if out["collective_bytes"]:
        con.print("collective bytes (all ranks): " + ", ".join(f"{k} {format_size(v)}" for k, v in sorted(out["collective_bytes"].items())))
    con.print(f"point-to-point bytes: {format_size(out['p2p_bytes'])}")
    con.print(f"critical path: {out['critical_path_nodes']} nodes, {out['critical_path_compute_us']} us of compute")


@trace.command("run")
@click.argument("prefix", metavar="PREFIX|DIR")
@fabric_option(builtin_fabrics(), what="Required: the trace's ranks are placed on its hosts.")
@deprecated_option("--scenario", lambda v: {"fabric": Fabric(v, path=v)}, lambda v: f"--fabric {v}")
@click.option("--placement", default="pack", show_default=True,
              help="pack (rank i on the i-th host, NIC 0), spread (round-robin over the edge switches; on a GPU fabric over its servers), nics:K (K ranks per host, NICs 0..K-1), preset:NAME "
                   "(one of the fabric's named placements, its [fabric.placements], e.g. preset:8n_4r on vela), or a "
                   "comma-separated host list (host or host:nic).")
@click.option("--algorithm", default=None, help="Collective algorithm: ring (default for every type, as ASTRA-sim; an all-to-all ring "
                                                "relays blocks hop by hop), direct, halving_doubling or hierarchical; "
                                                "or kind=alg,kind=alg, e.g. all_to_all=direct.")
@click.option("--comm-groups", "comm_groups", type=click.Path(dir_okay=False), default=None,
              help="JSON file mapping communicator (pg_name) to its ranks, as ASTRA-sim's --comm-group-configuration. "
                   "Default: PREFIX.comm_groups.json if it exists, else every communicator is all ranks.")
@click.option("--device", type=click.Choice(["h100", "a100"]), default=None,
              help="Roofline for COMP nodes without a duration and for MEM nodes (see README).")
@click.option("--chunks", type=click.IntRange(min=1), default=1, show_default=True,
              help="Split every collective into N chunks (ASTRA-sim's preferred-dataset-splits).")
@click.option("--chunks-in-flight", "chunks_in_flight", type=click.IntRange(min=1), default=None,
              help="At most K chunks of a collective at once, chunk c starting when chunk c-K is done (ASTRA-sim's "
                   "active-chunks-per-dimension). Default: the engine pipelines all chunks.")
@click.option("--all-gather-size", "all_gather_size", type=click.Choice(["total", "block"]), default="total",
              show_default=True, help="An all-gather's comm_size is the gathered buffer (total) or each rank's block "
                                      "(block, ASTRA-sim's reading).")
@click.option("--timeline", type=click.Path(dir_okay=False), default=None,
              help="Write a Gantt of compute and communication, critical path marked (PNG, SVG or PDF): a row per "
                   "rank up to 64 ranks, else per group of consecutive ranks (every rank shown).")
@click.option("--perfetto", type=click.Path(dir_okay=False), default=None,
              help="Write a Chrome-trace JSON to open in ui.perfetto.dev (a process per rank group, or per rank with "
                   "--detail messages; collectives and the critical path as tracks).")
@detail_option
@links_figure_option
@click.option("--seed", type=SEED, default=None, help="Override the fabric's seed (the first, S).")
@seeds_option("Runs K, seeds S..S+K-1 (S = --seed, else the fabric's): one line per run and the completion time's "
              "mean ± 95% CI (Student t over the complete runs); with --json one object with every run's in `runs`. "
              "Ctrl-C keeps the finished seeds (printed, exit 130). Default: one run.")
@FIDELITY
@click.option("--json", "as_json", is_flag=True,
              help="One JSON object: completion_time_s, ranks, collectives, events, wall_s, complete, links (every "
                   "directed link, busiest first: bytes, utilization, peak queue, PFC pauses, drops).")
@run_control
def run(prefix: str, fabric, placement: str, algorithm: str | None, comm_groups: str | None,
        device: str | None, chunks: int, chunks_in_flight: int | None, all_gather_size: str, timeline: str | None,
        perfetto: str | None, detail: str, links_figure: str | None, seed: int | None, seeds: int | None,
        fidelity: str | None, as_json: bool, max_events: int | None,
        max_wall: float | None, partial: bool, quiet: bool) -> None:
    """Simulate the trace PREFIX.{rank}.et on the fabric of --fabric FABRIC.toml and report per-rank finish,
    compute, communication and exposed communication, and each collective's start and end (a RoCE or UEC fabric
    adds its transport's line: PFC pauses, ECN marks and CNPs; trims, NACKs, re-sent packets, timeouts, ECN echoes
    and the FCT).

    A trace that did not complete (a message that gave up re-sending its drops, see [retransmit]) says why
    on stderr and exits 3; Ctrl-C stops the engine at once (exit 130); long runs show a progress bar on a terminal."""
    from ..chakra import load, lower
    from ..chakra.lower import summarize
    from ..engine import run as run_scenario
    from ..errors import UserError
    from ..collectives.fabrics import FABRIC_KEY, read_fabric
    from ..spec import read_document, scenario_from_dict

    if fabric is None:
        raise UserError("fabricsim trace run: give the fabric: --fabric FABRIC.toml|NAME")
    scenario_path = fabric.text
    prefix = resolve_trace(prefix)
    fab = read_fabric(fabric.name or fabric.path)
    if fabric.path is None:
        sc = scenario_from_dict(fab.doc, fab.name)
    else:  # the whole file: a scenario's own traffic runs beside the trace
        doc = read_document(fabric.path)
        sc = scenario_from_dict({k: v for k, v in doc.items() if k != FABRIC_KEY}, fabric.path)
    place = placement if placement in ("pack", "spread") or placement.startswith(("nics:", "preset:")) else [
        (p.split(":")[0], int(p.split(":")[1])) if ":" in p else p for p in placement.split(",")]
    alg: str | dict | None = algorithm
    if algorithm and "=" in algorithm:
        alg = dict(x.split("=", 1) for x in algorithm.split(","))
    groups = _comm_groups(prefix, comm_groups)
    check_links_figure("fabricsim trace run", links_figure, sc)
    lowered = lower(load(prefix), sc, placement=place, algorithm=alg, comm_groups=groups, device=device, chunks=chunks,
                    chunks_in_flight=chunks_in_flight, all_gather_size=all_gather_size, fabric=fab)
    if seeds is not None:
        if timeline or perfetto or links_figure:
            raise UserError("fabricsim trace run: --timeline, --perfetto and --links-figure draw one run; give them "
                            "without --seeds")
        first = sc.seed if seed is None else seed
        recs = simulate_seeds(lambda s, **kw: run_scenario(sc, seed=s, fidelity=fidelity, workload=lowered.workload,
                                                             **kw),
                              list(range(first, first + seeds)), f"simulating {prefix}", max_events=max_events,
                              max_wall=max_wall, partial=partial, quiet=quiet,
                              show=lambda rs: _show_seeds(prefix, scenario_path, rs, lowered, as_json))
        _show_seeds(prefix, scenario_path, recs, lowered, as_json)
        incomplete_runs(f"fabricsim: {prefix}", recs, None if sc.stop is None else sc.stop * 1e-12)
        return
    if timeline or links_figure:
        preload_figures()
    show = lambda r: _show(prefix, scenario_path, r, summarize(lowered, r), as_json)  # noqa: E731
    rec = simulate(lambda **kw: run_scenario(sc, seed=seed, fidelity=fidelity, workload=lowered.workload, **kw),
                   f"simulating {prefix}", max_events=max_events, max_wall=max_wall, partial=partial, quiet=quiet,
                   show=show)
    if timeline or perfetto:
        from ..chakra import timeline as tl

        if timeline:
            tl.gantt(lowered, rec, timeline, title=f"{prefix} on {scenario_path}", detail=detail)
            click.echo(f"wrote the timeline to {timeline}", err=True)
        if perfetto:
            got = tl.perfetto(lowered, rec, perfetto, detail=detail)
            per = "per rank" if got["group"] == 1 else f"per group of {got['group']} ranks"
            click.echo(f"wrote the Perfetto trace to {perfetto} ({got['events']:,} events, {format_size(got['bytes'])}, "
                       f"{detail} {per}; open it in ui.perfetto.dev)", err=True)
    write_links_figure("fabricsim trace run", links_figure, sc, rec, f"{prefix} on {scenario_path}: link utilization")
    show(rec)
    reason = rec.incomplete_reason(None if sc.stop is None else sc.stop * 1e-12)
    if reason is not None:
        click.echo(f"fabricsim: {prefix}: {reason}", err=True)
        raise click.exceptions.Exit(EXIT_INCOMPLETE)


def _comm_groups(prefix, path: str | None) -> dict[str, list[int]] | None:
    """The communicators of trace `prefix`: the JSON file `path` (--comm-groups) if given, else
    PREFIX.comm_groups.json if it exists (what `trace synth` writes), else None; UserError for a file that is not
    a JSON object of communicator -> rank list."""
    from ..chakra.synth import read_comm_groups
    from ..errors import UserError

    if not path:
        return read_comm_groups(prefix)
    try:
        return {str(k): [int(r) for r in v] for k, v in json.loads(open(path).read()).items()}
    except (OSError, ValueError, TypeError, AttributeError) as e:
        raise UserError(f"{path}: not a JSON object of communicator -> rank list ({e})") from None


def _show_seeds(prefix: str, scenario_path: str, recs: list, lowered, as_json: bool) -> None:
    """A multi-seed trace run: one JSON object (the summary, every run's object in `runs`), or a line per seed and
    the mean."""
    from ..chakra.lower import summarize
    from .run import mean_line, seed_line, seeds_summary

    summary = seeds_summary(recs)
    if as_json:
        echo_json({"trace": prefix, "fabric": scenario_path, **summary,
                   "runs": [_record(r, summarize(lowered, r)) for r in recs]})
        return
    click.echo(f"{prefix} on {scenario_path} ({recs[0].fidelity})")
    for r in recs:
        click.echo(f"  {seed_line(r)}")
    click.echo(mean_line(summary))


def _record(rec, s: dict) -> dict:
    """A trace run's JSON object (`links`: every directed link, busiest first, as the run record's)."""
    return {"completion_time_s": rec.completion_time_s, **s, "events": rec.events, "wall_s": rec.wall_s,
            "fidelity": rec.fidelity, "seed": rec.seed, "complete": rec.complete, "halted": rec.halted,
            "links_span_s": rec.links_span_s, "links": rec.links()}


def _show(prefix: str, scenario_path: str, rec, s: dict, as_json: bool) -> None:
    """Print a trace run: one JSON object, or a summary with the ranks and collectives tables."""
    out = _record(rec, s)
    if as_json:
        echo_json(out)
        return
    from rich.table import Table

    con = stdout_console(120)
    ct = rec.completion_time_s
    con.print(f"[bold]{prefix}[/bold] on {scenario_path} ({rec.fidelity}): completion "
              f"{format_duration(ct * 1e12) if ct is not None else 'n/a'}, {rec.events} events in {rec.wall_s:.3f} s")
    t = Table(title="ranks", title_justify="left")
    for col in ("rank", "host", "finish", "compute", "communication", "exposed", "idle (bubble)"):
        t.add_column(col, justify="left" if col == "host" else "right")
    for r in s["ranks"][:32]:
        t.add_row(str(r["rank"]), r["host"], format_duration(r["finish_s"] * 1e12), format_duration(r["compute_s"] * 1e12),
                  format_duration(r["comm_s"] * 1e12), format_duration(r["exposed_comm_s"] * 1e12),
                  format_duration(r["idle_s"] * 1e12))
    con.print(t)
    if (line := more_rows(32, len(s["ranks"]), "ranks")) is not None:
        con.print(line)
    con.print("idle (bubble) = finish − compute − exposed communication: waiting for other ranks (a pipeline's bubble)")
    if s["collectives"]:
        c = Table(title="collectives", title_justify="left")
        for col in ("kind", "algorithm", "ranks", "bytes", "start", "end"):
            c.add_column(col, justify="left" if col in ("kind", "algorithm") else "right")
        for x in s["collectives"][:32]:
            c.add_row(x["kind"], x["algorithm"], str(x["ranks"]), format_size(x["bytes"]),
                      format_duration(x["start_s"] * 1e12) if x["start_s"] is not None else "-",
                      format_duration(x["end_s"] * 1e12) if x["end_s"] is not None else "-")
        con.print(c)
        if (line := more_rows(32, len(s["collectives"]), "collectives")) is not None:
            con.print(line)
    print_links(con, rec)
    from .run import transport_lines

    for line in transport_lines(rec):
        con.print(line, markup=False, soft_wrap=True)  # one line each, however wide the terminal


@trace.command("synth")
@click.argument("kind", type=click.Choice(["dp", "tp", "pp", "ep", "dp-tp", "3d"]))
@click.option("--out", "out", default=None, metavar="DIR",
              help=f"{OUT_HELP}: DIR/NAME.{{rank}}.et (and DIR/NAME.comm_groups.json); `trace run DIR` reads it.")
@click.option("--name", default="trace", show_default=True, metavar="NAME",
              help="File name stem of the trace in --out DIR (NAME.gz: gzip-compressed files).")
@deprecated_option("--prefix", lambda v: {"out": str(Path(v).parent), "name": Path(v).name},
                   lambda v: f"--out {Path(v).parent} --name {Path(v).name}")
@click.option("--ranks", type=click.IntRange(min=2), default=8, show_default=True,
              help="Ranks (dp, tp, ep, dp-tp), pipeline stages (pp); 3d: if given, checked against tp × cp × ep × dp × pp.")
@click.option("--tp", type=click.IntRange(min=1), default=None,
              help="dp-tp: tensor-parallel group size (default 2); 3d: tensor-parallel degree (default 1).")
@click.option("--model", "model_name", default=None, metavar="NAME|FILE", help=f"3d (required): {MODEL_HELP[0].lower()}{MODEL_HELP[1:]}")
@click.option("--pp", type=click.IntRange(min=1), default=1, show_default=True, help="3d: pipeline stages.")
@click.option("--dp", type=click.IntRange(min=1), default=1, show_default=True,
              help="3d: data-parallel replicas (of the experts, with --ep: Megatron's data-parallel size is dp × ep).")
@click.option("--ep", type=click.IntRange(min=1), default=1, show_default=True,
              help="3d: expert-parallel degree (an MoE model's experts split over it).")
@click.option("--cp", type=click.IntRange(min=1), default=1, show_default=True,
              help="3d: context-parallel degree (the sequence split over it, ring attention).")
@click.option("--global-batch", "global_batch", type=click.IntRange(min=1), default=None,
              help="3d: sequences per step (default: micro-batch × dp × ep × pp).")
@click.option("--schedule", type=ScheduleParam(), default="1f1b", show_default=True, metavar="1f1b|interleaved:V",
              help="3d: pipeline schedule, Megatron-LM's 1F1B or interleaved 1F1B with V model chunks per stage.")
@click.option("--zero", type=click.IntRange(0, 1), default=0, show_default=True,
              help="3d: ZeRO stage: 0 all-reduces gradients; 1 (Megatron's distributed optimizer) reduce-scatters them "
                   "and all-gathers the parameters after the optimizer.")
@click.option("--no-sequence-parallel", "no_sp", is_flag=True,
              help="3d: TP all-reduces activations instead of all-gather/reduce-scatter (sequence parallelism is on "
                   "by default when tp > 1).")
@click.option("--layers", type=click.IntRange(min=1), default=24, show_default=True)
@click.option("--hidden", type=click.IntRange(min=1), default=4096, show_default=True, help="Hidden size h (elements).")
@click.option("--seq-len", "seq_len", type=click.IntRange(min=1), default=2048, show_default=True,
              help="Sequence length s (tokens); 3d: default the model's.")
@click.option("--micro-batch", "micro_batch", type=click.IntRange(min=1), default=1, show_default=True,
              help="Sequences per micro-batch b.")
@click.option("--micro-batches", "micro_batches", type=click.IntRange(min=1), default=8, show_default=True, help="pp only.")
@click.option("--bucket-layers", "bucket_layers", type=click.IntRange(min=1), default=1, show_default=True,
              help="dp, dp-tp: layers per gradient all-reduce bucket.")
@click.option("--dtype-bytes", "dtype_bytes", type=click.IntRange(min=1), default=2, show_default=True)
@click.option("--device", type=click.Choice(list(DEVICES)), default="h100", show_default=True)
@click.option("--efficiency", type=click.FloatRange(0, 1, min_open=True), default=0.5, show_default=True,
              help="Fraction of the device's peak FLOP/s and memory bandwidth reached (roofline durations).")
@click.option("--forward-us", "forward_us", type=click.FloatRange(0, min_open=True), default=None,
              help="Calibrate: one layer's forward time for one micro-batch (µs); other nodes scale by FLOPs.")
@click.pass_context
def synth(ctx: click.Context, kind: str, out: str | None, name: str, ranks: int, tp: int | None,
          model_name: str | None, pp: int, dp: int, ep: int, cp: int, global_batch: int | None,
          schedule: tuple[str, int], zero: int, no_sp: bool, layers: int, hidden: int, seq_len: int,
          micro_batch: int, micro_batches: int, bucket_layers: int, dtype_bytes: int, device: str,
          efficiency: float, forward_us: float | None) -> None:
    """Write the Chakra trace of one training step: data parallel (per-layer backward with bucketed gradient
    all-reduce overlapping it), tensor parallel (an all-reduce per layer and direction), pipeline parallel
    (1F1B, send/recv of activations and gradients), expert parallel (all-to-all dispatch and combine) or DP x TP.
    Sizes and FLOPs follow the formulas in fabricsim/chakra/synth.py (12·h² parameters per layer, 24·b·s·h² +
    4·b·s²·h forward FLOPs).

    3d: a model preset or file in any layout TP x CP x EP x DP x PP (Megatron-LM's rank order tp-cp-ep-dp-pp,
    1F1B or interleaved), the same job as `fabricsim train`: per rank and pass, per layer the attention and MLP
    compute, TP all-gathers and reduce-scatters (or all-reduces), EP all-to-alls, CP key/value all-gathers; PP
    send/recv; DP gradient buckets in each chunk's last backward; the optimizer (see
    fabricsim/train/chakra.py). Example: fabricsim trace synth 3d --model gpt3-13b --tp 8 --pp 4 --dp 2
    --global-batch 64 --out step"""
    from ..chakra import synth as sy
    from ..errors import UserError

    if out is None:
        raise UserError("fabricsim trace synth: give the folder to write: --out DIR")
    if not name or "/" in name or name in (".", ".."):
        raise UserError(f"fabricsim trace synth: --name: '{name}' is not a file name (give the folder with --out)")
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise UserError(f"fabricsim trace synth: --out: {out} exists and is not a folder")
    given = {p.name for p in ctx.command.params
             if ctx.get_parameter_source(p.name) == click.core.ParameterSource.COMMANDLINE}
    only = _SYNTH_3D if kind != "3d" else _SYNTH_LAYERS
    wrong = [p.opts[0] for p in ctx.command.params if p.name in only and p.name in given]
    if wrong:
        raise UserError(f"fabricsim trace synth {kind}: {wrong[0]} is for "
                        + ("3d" if kind != "3d" else "dp, tp, pp, ep and dp-tp (3d takes the model from --model)"))
    if kind == "3d":
        traces, groups, summary = _synth_3d(model_name, tp or 1, pp, dp, ep, cp, micro_batch, global_batch,
                                            seq_len if "seq_len" in given else None, schedule, zero, not no_sp,
                                            device, efficiency, ranks if "ranks" in given else None)
    else:
        traces, groups = _synth_layers(kind, ranks, 2 if tp is None else tp, layers, hidden, seq_len, micro_batch,
                                       micro_batches, bucket_layers, dtype_bytes, device, efficiency, forward_us)
        summary = f"{sum(len(t['id']) for t in traces):,} nodes"
    folder.mkdir(parents=True, exist_ok=True)
    path = sy.write(folder / name, traces, groups)
    click.echo(f"wrote {len(traces)} ranks, {summary}: {path}.{{0..{len(traces) - 1}}}.et"
               + (f" and {path}.comm_groups.json" if groups else ""), err=True)


_SYNTH_3D = ("model_name", "pp", "dp", "ep", "cp", "global_batch", "schedule", "zero", "no_sp")
"""`trace synth` options only 3d takes."""
_SYNTH_LAYERS = ("layers", "hidden", "micro_batches", "bucket_layers", "dtype_bytes", "forward_us")
"""`trace synth` options only the layer-stack kinds (dp, tp, pp, ep, dp-tp) take."""


def _synth_layers(kind: str, ranks: int, tp: int, layers: int, hidden: int, seq_len: int, micro_batch: int,
                  micro_batches: int, bucket_layers: int, dtype_bytes: int, device: str, efficiency: float,
                  forward_us: float | None) -> tuple[list, dict | None]:
    """The traces (and communicators) of a stack of identical layers (`fabricsim.chakra.synth`)."""
    from ..chakra import synth as sy
    from ..errors import UserError

    model = sy.Model(layers=layers, hidden=hidden, seq_len=seq_len, micro_batch=micro_batch, dtype_bytes=dtype_bytes,
                     device=device, efficiency=efficiency, forward_us=forward_us)
    if kind == "dp":
        return sy.data_parallel(model, ranks, bucket_layers), None
    if kind == "tp":
        return sy.tensor_parallel(model, ranks), None
    if kind == "pp":
        return sy.pipeline_parallel(model, ranks, micro_batches), None
    if kind == "ep":
        return sy.expert_parallel(model, ranks), None
    if tp < 2:
        raise UserError(f"fabricsim trace synth dp-tp: --tp must be ≥ 2, got {tp}")
    if ranks % tp:
        raise UserError(f"--ranks {ranks} is not a multiple of --tp {tp}")
    return sy.data_tensor_parallel(model, ranks // tp, tp, bucket_layers)


def _synth_3d(model_name: str | None, tp: int, pp: int, dp: int, ep: int, cp: int, micro_batch: int,
              global_batch: int | None, seq_len: int | None, schedule: tuple[str, int], zero: int,
              sequence_parallel: bool, device: str, efficiency: float, ranks: int | None):
    """The traces, communicators and a summary of a training job's layout (`fabricsim.train.chakra`)."""
    from ..errors import UserError
    from ..train.chakra import make_job, synthesize

    if model_name is None:
        raise UserError("fabricsim trace synth 3d: give the model: --model NAME|FILE")
    kind, v = schedule
    job = make_job(model_name, tp=tp, pp=pp, dp=dp, ep=ep, cp=cp, micro_batch=micro_batch, global_batch=global_batch,
                   seq_len=seq_len, schedule=kind, vpp=v, zero=zero, device_name=device, efficiency=efficiency,
                   sequence_parallel=sequence_parallel, ranks=ranks)
    t = synthesize(job)
    p = job.par
    return t.traces, t.comm_groups, (
        f"{job.model.name} TP {p.tp} × CP {p.cp} × EP {p.ep} × DP {p.dp} × PP {p.pp}, "
        f"{kind}{'' if job.chunks == 1 else f' V={job.chunks}'}, {job.micro_batches} micro-batches, {t.nodes:,} nodes")


@trace.command("rescale")
@click.argument("prefix", metavar="PREFIX|DIR")
@click.option("--ranks", type=click.IntRange(min=1), default=None,
              help="Ranks of the new trace: tp × pp × the new data-parallel degree (give this or --dp).")
@click.option("--dp", type=click.IntRange(min=1), default=None, help="The new data-parallel degree (instead of --ranks).")
@click.option("--tp", type=click.IntRange(min=1), default=None,
              help="The trace's tensor-parallel degree (rank = t + tp·(d + dp·p)). Default: inferred from its "
                   "communicators, with --pp (1 without communicators).")
@click.option("--pp", type=click.IntRange(min=1), default=None, help="The trace's pipeline-parallel degree (see --tp).")
@click.option("--comm-groups", "comm_groups", type=click.Path(dir_okay=False), default=None,
              help="JSON file mapping communicator (pg_name) to its ranks. Default: PREFIX.comm_groups.json if it "
                   "exists, else every communicator is all ranks.")
@click.option("--all-gather-size", "all_gather_size", type=click.Choice(["total", "block"]), default="total",
              show_default=True, help="An all-gather's comm_size is the gathered buffer (total: kept) or each rank's "
                                      "block (block, ASTRA-sim's reading: scaled by dp/dp' over a data-parallel group).")
@click.option("--out", "out", default=None, metavar="DIR",
              help=f"{OUT_HELP}: DIR/NAME.{{rank}}.et (and DIR/NAME.comm_groups.json when the trace has communicators).")
@click.option("--name", default=None, metavar="NAME", help="File name stem in --out DIR. Default: the trace's own.")
def rescale(prefix: str, ranks: int | None, dp: int | None, tp: int | None, pp: int | None, comm_groups: str | None,
            all_gather_size: str, out: str | None, name: str | None) -> None:
    """Write the trace PREFIX.{rank}.et rescaled to more (or fewer) data-parallel replicas: --ranks N or --dp D.

    The model and each replica's work stay fixed: new rank (t, d', p) runs old rank (t, d' mod dp, p)'s program,
    its point-to-point peers moved into its replica; a data-parallel communicator spans the new replicas; one
    within a replica is copied under a new name. All-reduce, reduce-scatter and all-gather (total) sizes are per-rank
    buffers of the fixed model and stay; an all-gather's block (block) shrinks as dp grows. Refused, one line each:
    all-to-all over the data-parallel group, communicators or sends that cross replicas otherwise, a single
    replica. See fabricsim/chakra/rescale.py."""
    from ..chakra import load
    from ..chakra.rescale import rescale as do_rescale
    from ..chakra.synth import write
    from ..errors import ScenarioError, UserError

    cmd = "fabricsim trace rescale"
    if out is None:
        raise UserError(f"{cmd}: give the folder to write: --out DIR")
    if (ranks is None) == (dp is None):
        raise UserError(f"{cmd}: give the new size: --ranks N or --dp D (one of them)")
    src = Path(resolve_trace(prefix))
    name = name or src.name
    if not name or "/" in name or name in (".", ".."):
        raise UserError(f"{cmd}: --name: '{name}' is not a file name (give the folder with --out)")
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise UserError(f"{cmd}: --out: {out} exists and is not a folder")
    dest = folder / name
    if dest.resolve() == src.resolve():
        raise UserError(f"{cmd}: --out: {dest} is the trace itself; write the rescaled one elsewhere")
    traces = load(src)
    try:
        res = do_rescale(traces, ranks, dp=dp, tp=tp, pp=pp, comm_groups=_comm_groups(src, comm_groups),
                         all_gather_size=all_gather_size, source=str(prefix))
    except ScenarioError as e:
        if e.source:
            raise
        raise UserError(f"{cmd}: --{e.field.replace('_', '-')}: {e.reason}") from None
    folder.mkdir(parents=True, exist_ok=True)
    path = write(dest, res.traces, res.comm_groups)
    nodes = sum(len(t["id"]) for t in res.traces)
    click.echo(f"wrote {len(res.traces)} ranks ({res.after}, from {res.before}), {nodes:,} nodes: "
               f"{path}.{{0..{len(res.traces) - 1}}}.et" + (f" and {path}.comm_groups.json" if res.comm_groups else ""),
               err=True)
