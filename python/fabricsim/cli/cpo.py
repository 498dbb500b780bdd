"""`fabricsim design` and `fabricsim locality`: the co-packaged-optics study's network calculator and locality tools."""

from __future__ import annotations

import click

from ..errors import ScenarioError, UserError
from ._common import (SEED,
    OUT_HELP,
    SIZE,
    SIZE_HELP,
    deprecated_option,
    echo_json,
    out_file,
    pm_text,
    seed_stats,
    seed_text,
    seeds_option,
    size_option,
)

TRACE_FILE = "trace.csv"
"""What `locality trace --out DIR` writes in DIR."""


def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:,.4g}" if abs(v) < 1e4 else f"{v:,.0f}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def _design(source: str, overrides: dict):
    from ..cpo import load

    try:
        return load(source, overrides)
    except ScenarioError as e:
        raise UserError(f"fabricsim design: {e}") from None


@click.command("design")
@click.argument("design", required=False, default=None)
@click.option("--compare", nargs=2, metavar="A B", default=None,
              help="Two designs (presets or files) side by side, with B/A ratios.")
@click.option("--spine-tbps", type=float, default=None, help="Spine switch I/O bandwidth, Tb/s.")
@click.option("--leaf-tbps", type=float, default=None, help="Leaf (first-level) switch I/O bandwidth, Tb/s.")
@click.option("--port-gbps", type=float, default=None, help="Port and link speed, Gb/s (radix = I/O / port speed).")
@click.option("--oversubscription", type=float, default=None, help="Leaf down:up ratio (3 for 3:1).")
@click.option("--servers-per-group", type=int, default=None,
              help="Servers per first-level group (a leaf pair when dual-homed).")
@click.option("--dual-homed/--single-homed", default=None, help="Servers connect to two leaves (two endpoints) or one.")
@click.option("--groups", type=int, default=None, help="First-level groups.")
@click.option("--endpoints", type=int, default=None, help="Instead of --groups: the fewest groups reaching this.")
@click.option("--optics", type=click.Choice(["fabric", "all"]), default=None,
              help="Which links are optical: leaf-spine only (AOCs, copper to servers) or all (co-packaged).")
@click.option("--pj-per-bit", type=float, default=None, help="Optics energy per bit per transceiver (power figures).")
@click.option("--cost-per-port", type=float, default=None, help="Cost of one optical transceiver (cost figures).")
@click.option("--gpus", type=int, default=None, metavar="N",
              help="Size a rail-optimized GPU cluster of N GPUs instead (DGX SuperPOD style; see below).")
@click.option("--gpus-per-server", type=int, default=8, show_default=True, help="With --gpus: GPUs per server (one NVLink domain).")
@click.option("--nics-per-gpu", type=int, default=1, show_default=True, help="With --gpus: NICs per GPU.")
@click.option("--rails", type=int, default=None, help="With --gpus: rails per server [default: one per NIC].")
@click.option("--su-servers", type=int, default=32, show_default=True,
              help="With --gpus: servers per scalable unit (one rail leaf per rail per SU).")
@click.option("--spines", type=int, default=None,
              help="With --gpus: spine switches [default: the fewest that take every leaf uplink, evenly].")
@click.option("--radix", type=int, default=64, show_default=True,
              help="With --gpus: ports per leaf and spine switch (QM9700: 64 x 400G).")
@click.option("--write", "write_path", default=None, metavar="SCENARIO.toml",
              help="With --gpus: write a runnable scenario of the cluster (lossless switches) with a hierarchical "
                   "all-reduce over every GPU, for `fabricsim validate`, `run`, `place --fabric`, `topology`.")
@click.option("--size", "collective_size", type=SIZE, default="64MiB", show_default=True, metavar="SIZE",
              help=f"With --write: the all-reduce's buffer per GPU, {SIZE_HELP}.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def design(design, compare, as_json, gpus, gpus_per_server, nics_per_gpu, rails, su_servers, spines, radix,
           write_path, collective_size, **fields) -> None:
    """Two-level leaf-spine network calculator (study 003, co-packaged optics), or with --gpus a rail-optimized
    GPU cluster calculator.

    DESIGN is a preset (baseline: 25.6 Tb/s spines, 6.4 Tb/s leaves, 100G, 3:1, 48 servers per leaf pair, 128
    groups; motion: 51.2 Tb/s switches of 128 × 400G, 3:1, 96 servers per leaf pair, 64 groups) or a JSON/TOML
    file with the same fields (spine_tbps, leaf_tbps, port_gbps, oversubscription, servers_per_group,
    dual_homed, groups or endpoints, optics, pj_per_bit, cost_per_port); options override fields.

    Reports switches per layer and in total, bisection bandwidth (half the leaf-spine capacity), servers,
    endpoints, servers per first-level group, max switch hops, and optics power and cost when given.

    With --gpus N: servers of --gpus-per-server GPUs (one NVSwitch) and --nics-per-gpu NICs split over --rails;
    scalable units (SUs) of --su-servers servers, one rail leaf per rail per SU; leaves of --radix ports with
    ⌈down / --oversubscription⌉ uplinks spread evenly over the spines. Reports servers, SUs, leaves, spines, the
    ports each switch uses of its radix, links and bisection (the narrower of half the NICs and half the leaf
    uplinks), in Gb/s of --port-gbps (default 400). --write writes the cluster as a scenario.

    \b
    Examples:
      fabricsim design baseline
      fabricsim design --compare baseline motion
      fabricsim design motion --endpoints 8192 --pj-per-bit 1 --cost-per-port 500 --json
      fabricsim design --gpus 1024                      # NVIDIA DGX SuperPOD: 4 SUs, 32 leaves, 16 spines
      fabricsim design --gpus 64 --su-servers 4 --write rail64.toml && fabricsim run rail64.toml
    """
    if gpus is not None:
        _rail_design(gpus, gpus_per_server, nics_per_gpu, rails, su_servers, spines, radix, write_path,
                     collective_size, design, compare, as_json, fields)
        return
    if write_path is not None:
        raise UserError("fabricsim design: --write needs --gpus N (it writes a rail-optimized GPU cluster)")
    overrides = {k: v for k, v in fields.items() if v is not None}
    if compare:
        from ..cpo import compare as cmp

        if design:
            raise UserError("fabricsim design: give a DESIGN or --compare A B, not both")
        a, b = _design(compare[0], overrides), _design(compare[1], overrides)
        rows = cmp(a, b)
        if as_json:
            echo_json({"a": a.to_json(), "b": b.to_json(), "comparison": rows})
            return
        from rich.console import Console
        from rich.table import Table

        t = Table(title=f"{a.spec.name} vs {b.spec.name}", title_justify="left")
        for col in ("quantity", a.spec.name, b.spec.name, f"{b.spec.name} / {a.spec.name}", "change"):
            t.add_column(col, justify="left" if col == "quantity" else "right")
        for r in rows:
            ch = r["change_pct"]
            t.add_row(r["quantity"], _fmt(r[a.spec.name]), _fmt(r[b.spec.name]),
                      "-" if r["ratio"] is None else f"{r['ratio']:.3g}×", "-" if ch is None else f"{ch:+.1f}%")
        Console().print(t)
        return
    d = _design(design or "baseline", overrides)
    out = d.to_json()
    if as_json:
        echo_json(out)
        return
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"design {out['name']}", title_justify="left", show_header=False)
    t.add_column("quantity")
    t.add_column("value", justify="right")
    for k, v in out.items():
        if k != "name":
            t.add_row(k, _fmt(v))
    Console().print(t)


def _rail_design(gpus, gpus_per_server, nics_per_gpu, rails, su_servers, spines, radix, write_path, collective_size,
                 design, compare, as_json, fields) -> None:
    """`fabricsim design --gpus N`: size the rail-optimized cluster, print it, and write its scenario if asked."""
    from ..cpo.rail import RailDesign, RailSpec, write

    other = [f"--{k.replace('_', '-')}" for k, v in fields.items() if v is not None
             and k not in ("oversubscription", "port_gbps")]
    if design or compare or other:
        what = "DESIGN" if design else "--compare" if compare else other[0]
        raise UserError(f"fabricsim design: {what} is for the two-level calculator, not with --gpus")
    spec = RailSpec(gpus=gpus, gpus_per_server=gpus_per_server, nics_per_gpu=nics_per_gpu, rails=rails,
                    su_servers=su_servers, spines=spines, radix=radix,
                    oversubscription=1.0 if fields.get("oversubscription") is None else fields["oversubscription"],
                    port_gbps=400.0 if fields.get("port_gbps") is None else fields["port_gbps"])
    try:
        d = RailDesign(spec)
        written = str(write(d, write_path, f"{collective_size}B")) if write_path else None
    except ScenarioError as e:
        raise UserError(str(e)) from None
    out = {**d.to_json(), **({"written": written} if written else {})}
    if as_json:
        echo_json(out)
        return
    from rich.console import Console
    from rich.table import Table

    title = (f"rail-optimized cluster: {d.gpus:,} GPUs" + (f" (asked {gpus:,}, rounded up to whole SUs)" if d.rounded_up else "")
             + f" on {d.servers:,} servers in {d.sus} SU(s)")
    t = Table(title=title, title_justify="left", show_header=False)
    t.add_column("quantity")
    t.add_column("value", justify="right")
    rows = [("servers x GPUs (NVLink domains)", f"{d.servers:,} x {spec.gpus_per_server}"),
            ("NICs per server, rails", f"{d.nics_per_server}, {d.rails}"),
            ("scalable units x servers", f"{d.sus} x {d.servers_per_su}"),
            ("rail leaves (per SU)", f"{d.leaves:,} ({d.rails})"),
            ("spines", f"{d.spines:,}"),
            ("leaf ports: down + up / radix", f"{d.leaf_down} + {d.leaf_up} / {spec.radix} ({100 * (d.leaf_down + d.leaf_up) / spec.radix:.0f}%)"),
            ("spine ports used / radix", f"{d.spine_ports} / {spec.radix} ({100 * d.spine_ports / spec.radix:.0f}%)"),
            ("leaf oversubscription", f"{d.leaf_down / d.leaf_up:.3g}:1"),
            ("NIC-leaf, leaf-spine links", f"{d.nics:,}, {d.uplinks:,} of {spec.port_gbps:g} Gb/s"),
            ("bisection (non-blocking)", f"{d.bisection_tbps:,.4g} Tb/s ({d.full_bisection_tbps:,.4g})")]
    for k, v in rows:
        t.add_row(k, v)
    Console().print(t)
    if written:
        click.echo(f"wrote {written}: `fabricsim run {written}` simulates a hierarchical all-reduce over every GPU"
                   + ("" if d.writable_as_family() else " (a custom topology: the rail_optimized family is non-blocking)"),
                   err=True)


@click.group("locality")
def locality() -> None:
    """Job locality on two-level designs (study 003): a synthetic VM trace, best-fit packing, and the simulated
    cost of spreading an all-to-all over several first-level switches (Fig. 2)."""


@locality.command("trace")
@click.option("--seed", type=SEED, default=1, show_default=True)
@click.option("--capacity", type=click.IntRange(min=1), default=6144, show_default=True, help="VM slots to fill.")
@click.option("--fill", type=click.FloatRange(0, 1, min_open=True), default=0.9, show_default=True,
              help="Stop when the applications' VMs reach this share of --capacity.")
@click.option("--small-share", type=click.FloatRange(0, 1), default=0.7, show_default=True,
              help="Share of small applications (uniform 1…--small-max VMs); the rest log-uniform up to --large-max.")
@click.option("--small-max", type=click.IntRange(min=1), default=16, show_default=True)
@click.option("--large-max", type=click.IntRange(min=2), default=256, show_default=True)
@click.option("--out", default=None, metavar="DIR", help=f"{OUT_HELP}: DIR/{TRACE_FILE} instead of stdout.")
def trace_cmd(seed, capacity, fill, small_share, small_max, large_max, out) -> None:
    """Write a synthetic application trace as CSV (column `vms`, one row per application, arrival order)."""
    from ..cpo.locality import synthetic_trace

    path = out_file("fabricsim locality trace", out, TRACE_FILE, (".csv",))
    try:
        sizes = synthetic_trace(seed, capacity_vms=capacity, fill=fill, small_share=small_share,
                                small_max=small_max, large_max=large_max)
    except ValueError as e:
        raise UserError(f"fabricsim locality trace: {e}") from None
    text = "vms\n" + "".join(f"{n}\n" for n in sizes)
    if path is not None:
        path.write_text(text)
        click.echo(f"wrote {len(sizes)} applications ({sum(sizes)} VMs) to {path}", err=True)
    else:
        click.echo(text, nl=False)


@locality.command("pack")
@click.option("--trace", "trace_file", default=None, metavar="FILE.csv",
              help=f"One row per application: its VM count (column `vms`, or the first column), e.g. the "
                   f"DIR/{TRACE_FILE} of `locality trace --out DIR`.")
@click.option("--seed", type=SEED, default=1, show_default=True,
              help="Seed of the synthetic trace used when no --trace is given.")
@click.option("--designs", default="baseline,motion", show_default=True,
              help="Comma-separated designs (presets or files) to pack onto.")
@click.option("--vms-per-server", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--large-vms", type=click.IntRange(min=1), default=24, show_default=True,
              help="Applications with at least this many VMs count as large.")
@click.option("--json", "as_json", is_flag=True)
def pack_cmd(trace_file, seed, designs, vms_per_server, large_vms, as_json) -> None:
    """Best-fit packing of the applications on each design: groups spanned, share under one first-level group."""
    from ..cpo.locality import pack, read_trace, synthetic_trace

    try:
        sizes = read_trace(trace_file) if trace_file else synthetic_trace(seed)
    except ScenarioError as e:
        raise UserError(f"fabricsim locality pack: {e}") from None
    out = [pack(_design(d.strip(), {}), sizes, vms_per_server=vms_per_server, large_vms=large_vms).summary()
           for d in designs.split(",") if d.strip()]
    src = trace_file or f"synthetic trace (seed {seed})"
    if as_json:
        echo_json({"trace": src, "applications": len(sizes), "vms": sum(sizes), "large_vms": large_vms,
                   "vms_per_server": vms_per_server, "designs": out})
        return
    from rich.table import Table

    from ._common import stdout_console

    def pct(x) -> str:
        return "-" if x is None else f"{x * 100:.1f}%"

    def spans(h: dict) -> str:
        return ", ".join(f"{k}: {v:,}" for k, v in h.items()) or "-"

    rows = [
        ("groups × slots per group", lambda s: f"{s['groups']:,} × {s['slots_per_group']:,}"),
        ("applications placed (rejected)", lambda s: f"{s['placed']:,} ({s['rejected']:,})"),
        ("slots used", lambda s: pct(s["utilization"])),
        ("applications under one group", lambda s: pct(s["single_group_fraction"])),
        (f"large (≥ {large_vms} VMs) under one group", lambda s: f"{pct(s['large_single_group_fraction'])} of "
                                                                 f"{s['large_applications']:,}"),
        ("large: mean groups spanned", lambda s: "-" if s["large_mean_groups"] is None else f"{s['large_mean_groups']:.2f}"),
        ("groups spanned: applications", lambda s: spans(s["groups_spanned_histogram"])),
    ]
    t = Table(title=f"best-fit packing of {len(sizes):,} applications ({sum(sizes):,} VMs) from {src}",
              title_justify="left")
    t.add_column("quantity")
    for s in out:
        t.add_column(s["design"], justify="right")
    for label, fn in rows:
        t.add_row(label, *(fn(s) for s in out))
    stdout_console(120).print(t)


@locality.command("simulate")
@size_option("256B", "Message per VM pair")
@deprecated_option("--msg-bytes", lambda v: {"size": v}, lambda v: f"--size {v}B", type=click.IntRange(min=1))
@click.option("--packet-bytes", type=click.IntRange(min=1), default=256, show_default=True)
@click.option("--vnic-gbps", type=click.FloatRange(min=0, min_open=True), default=70.0, show_default=True,
              help="VNIC throttle of every VM.")
@click.option("--stack-us", type=click.FloatRange(min=0), default=1.25, show_default=True,
              help="Network-stack latency added before every message.")
@click.option("--leaves", type=click.IntRange(min=2), default=2, show_default=True,
              help="First-level switches the spread placement uses (2: the halves of the exchange apart).")
@click.option("--fabric-delay-us", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="Propagation delay of every leaf-spine link (the study states none).")
@click.option("--seed", type=SEED, default=1, show_default=True, help="The first ECMP seed S.")
@seeds_option("Runs K, seeds S..S+K-1; prints every run and the mean ± 95% CI. Default: one run, seed S.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def simulate_cmd(size, packet_bytes, vnic_gbps, stack_us, leaves, fabric_delay_us, seed, seeds, as_json) -> None:
    """The 24-VM all-to-all under one first-level switch and spread over --leaves, on the lossless baseline
    fabric (packet engine): both completion times and the spread's increase (one cell of the study's Fig. 2)."""
    from ..cpo.locality_sim import overhead

    runs = []
    for s in range(seed, seed + (seeds or 1)):
        try:
            runs.append(overhead(size, packet_bytes, vnic_gbps, stack_us, leaves=leaves, seed=s,
                                 fabric_delay_us=fabric_delay_us))
        except ValueError as e:
            raise UserError(f"fabricsim locality simulate: {e}") from None
    if seeds is None:
        r = runs[0]
        if as_json:
            echo_json(r)
        else:
            click.echo(f"one switch {r['single_us']:.2f} us, {leaves} switches {r['spread_us']:.2f} us: "
                       f"{r['increase_pct']:+.1f}%")
        return
    seed_list = list(range(seed, seed + seeds))
    out = {"seeds": seed_list, "runs": [{"seed": s, **r} for s, r in zip(seed_list, runs)],
           **{k: seed_stats([r[k] for r in runs]) for k in ("single_us", "spread_us", "increase_pct")}}
    if as_json:
        echo_json(out)
        return
    for s, r in zip(seed_list, runs):
        click.echo(f"seed {s}: one switch {r['single_us']:.2f} us, {leaves} switches {r['spread_us']:.2f} us: "
                   f"{r['increase_pct']:+.1f}%")
    click.echo(f"mean ± 95% CI over {seed_text(seed_list)}: one switch {pm_text(out['single_us'], '.2f', 'us')}, "
               f"{leaves} switches {pm_text(out['spread_us'], '.2f', 'us')}: {pm_text(out['increase_pct'], '+.1f')}%")
