"""`fabricsim design` and `fabricsim locality`: the co-packaged-optics study's network calculator and locality tools."""

from __future__ import annotations

import json

import click

from .errors import ScenarioError, UserError


def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:,.4g}" if abs(v) < 1e4 else f"{v:,.0f}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def _design(source: str, overrides: dict):
    from .cpo import load

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
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def design(design, compare, as_json, **fields) -> None:
    """Two-level leaf-spine network calculator (study 003, co-packaged optics).

    DESIGN is a preset (baseline: 25.6 Tb/s spines, 6.4 Tb/s leaves, 100G, 3:1, 48 servers per leaf pair, 128
    groups; motion: 51.2 Tb/s switches of 128 × 400G, 3:1, 96 servers per leaf pair, 64 groups) or a JSON/TOML
    file with the same fields (spine_tbps, leaf_tbps, port_gbps, oversubscription, servers_per_group,
    dual_homed, groups or endpoints, optics, pj_per_bit, cost_per_port); options override fields.

    Reports switches per layer and in total, bisection bandwidth (half the leaf-spine capacity), servers,
    endpoints, servers per first-level group, max switch hops, and optics power and cost when given.

    \b
    Examples:
      fabricsim design baseline
      fabricsim design --compare baseline motion
      fabricsim design motion --endpoints 20000 --pj-per-bit 2 --json
    """
    overrides = {k: v for k, v in fields.items() if v is not None}
    if compare:
        from .cpo import compare as cmp

        if design:
            raise UserError("fabricsim design: give a DESIGN or --compare A B, not both")
        a, b = _design(compare[0], overrides), _design(compare[1], overrides)
        rows = cmp(a, b)
        if as_json:
            click.echo(json.dumps({"a": a.to_json(), "b": b.to_json(), "comparison": rows}))
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
        click.echo(json.dumps(out))
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
