"""`fabricsim nccl-tests`: nccl-tests' table (time, algbw, busbw by size) for an NCCL collective on a GPU cluster."""

from __future__ import annotations

import re

import click

from ..collectives.fabrics import builtin_fabrics
from ..errors import UserError
from ._common import echo_json, fabric_option

COMMAND = "fabricsim nccl-tests"
COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "alltoall")
REDOP = {"all_reduce": "sum", "reduce_scatter": "sum", "all_gather": "none", "alltoall": "none"}


class NcclSizeParam(click.ParamType):
    """A size as nccl-tests reads -b and -e: a number of bytes with an optional K, M, G or T (powers of 1024: 8G is
    8 x 2^30), or with one of the scenario files' units (8GiB; 10MB is 10^7). At least 1 byte."""

    name = "bytes"

    def convert(self, value, param, ctx) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            n = value
        else:
            text = str(value).strip()
            m = re.fullmatch(r"(\d+)\s*([kKmMgGtT]?)", text)
            if m:
                n = int(m.group(1)) * 1024 ** " KMGT".index((m.group(2) or " ").upper())
            else:
                from ..units import parse_size_bytes

                try:
                    n = parse_size_bytes(text)
                except ValueError as e:
                    self.fail(f"'{value}' is not a size: {e}", param, ctx)
        if n < 1:
            self.fail(f"'{value}' is {n} bytes; a size is at least 1 byte", param, ctx)
        return n


SIZE_HELP = ("bytes, as nccl-tests reads it: 8, 1K, 64M, 8G (K, M, G: powers of 1024), or with a unit: 8GiB, 10MB "
             "(10^7)")


def _time(us: float) -> str:
    """nccl-tests' time column: 2 decimals below 100 us, 1 below 10 ms, none above."""
    return f"{us:7.2f}" if us < 100 else f"{us:7.1f}" if us < 10000 else f"{us:7.0f}"


def table(res) -> str:
    """The nccl-tests-like text of a NcclTestsResult: a header on the fabric and the busbw factor, one line per
    size, the average and peak busbw, and the calibrated constants."""
    from ..nccl import CALIBRATED

    f = res.fabric
    lines = [
        f"# {COMMAND}: {res.collective} on {f.name} (a model of NCCL, not a measurement)",
        f"# {f.describe()}",
        f"# busbw = algbw x {res.to_json()['busbw_factor']:.4g} (nccl-tests' factor for {res.collective} on "
        f"{f.ranks} ranks); algo {res.algo}, fidelity {res.fidelity}",
        "#",
        f"# {'size':>10} {'count':>13} {'type':>9} {'redop':>7} {'root':>7} {'time':>8} {'algbw':>7} {'busbw':>7}"
        "  algo/proto",
        f"# {'(B)':>10} {'(elements)':>13} {'':>9} {'':>7} {'':>7} {'(us)':>8} {'(GB/s)':>7} {'(GB/s)':>7}",
    ]
    for r in res.rows:
        lines.append(f"{r['size_bytes']:12d} {r['count']:13d} {'float':>9} {REDOP[res.collective]:>7} {-1:7d} "
                     f"{_time(r['time_us']):>8} {r['algbw_GBps']:7.2f} {r['busbw_GBps']:7.2f}  "
                     f"{r['algo']}/{r['proto']}")
    lines += [f"# Avg bus bandwidth    : {res.avg_busbw_GBps:.3f}", f"# Peak bus bandwidth   : {res.peak_busbw_GBps:.3f}",
              "#"]
    for name, c in CALIBRATED.items():
        lines.append(f"# calibrated: {name} = {c['value']} ({c['meaning']}; fitted on {len(c['fitted_on'])} public "
                     "runs only, docs/guide/nccl.md)")
    return "\n".join(lines)


@click.command("nccl-tests")
@click.option("--collective", type=click.Choice(COLLECTIVES), default="all_reduce", show_default=True,
              help="The collective, as nccl-tests' all_reduce_perf, all_gather_perf, reduce_scatter_perf, "
                   "alltoall_perf.")
@fabric_option(builtin_fabrics(),
               what="Required. Its [topology] must be kind = \"rail_optimized\" (GPU servers, one NIC link per GPU "
                    "on its rail, NVLink to an NVSwitch); its [fabric] table may say nvls = true (the NVSwitch "
                    "reduces: NVLink SHARP) and nics = K (the NICs the rails stand for).")
@click.option("-b", "--minbytes", type=NcclSizeParam(), default="8", show_default=True, metavar="BYTES",
              help=f"Smallest size, {SIZE_HELP}.")
@click.option("-e", "--maxbytes", type=NcclSizeParam(), default="8G", show_default=True, metavar="BYTES",
              help=f"Largest size, {SIZE_HELP}.")
@click.option("-f", "--stepfactor", type=click.IntRange(min=2), default=2, show_default=True,
              help="Multiply the size by this from one row to the next.")
@click.option("--algo", type=click.Choice(["auto", "ring", "tree", "nvls"]), default="auto", show_default=True,
              help="NCCL's algorithm, as NCCL_ALGO: auto picks the fastest by the model at each size; ring (one "
                   "channel per rail); tree (double binary tree across servers, all_reduce only); nvls (NVSwitch "
                   "reduction inside a server, NVLSTree across servers; all_reduce on a fabric with nvls = true).")
@click.option("--fidelity", type=click.Choice(["model", "flow"]), default="model", show_default=True,
              help="model: closed forms (the whole table in milliseconds); flow: the ring's bandwidth from a "
                   "flow-engine run of its channels on the fabric (under a second), the rest as model.")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object: rows of size_bytes, count, time_us, algbw_GBps, busbw_GBps (GB/s = 10^9 "
                   "B/s), algo, proto; peak_busbw_GBps, avg_busbw_GBps; the fabric's figures; calibrated.")
def nccl_tests(collective, fabric, minbytes, maxbytes, stepfactor, algo, fidelity, as_json) -> None:
    """nccl-tests' table for an NCCL collective on a GPU cluster, from its fabric file: size, count, type, redop,
    time (us), algbw and busbw (GB/s) and the algorithm and protocol NCCL would use.

    A model of NCCL, not a measurement: per algorithm and protocol, NCCL's own latency (src/graph/tuning.cc) plus
    bytes over the fabric's bandwidth (one ring per rail with NVLink and NIC pipelined, NCCL's double binary tree,
    NVLink SHARP), busbw as nccl-tests defines it (algbw x 2(n-1)/n for all_reduce, (n-1)/n for the others). One
    constant is calibrated, nic_efficiency, fitted on three public nccl-tests runs only (docs/guide/nccl.md);
    the output names it.

    \b
    Examples:
      fabricsim nccl-tests --fabric h100_ib_2x8 --algo ring
      fabricsim nccl-tests --collective all_gather --fabric my_cluster.toml -b 1M -e 8G -f 2 --json
    """
    from ..nccl import nccl_fabric
    from ..nccl import nccl_tests as run_model
    from ..nccl.model import algorithms

    if fabric is None:
        raise UserError(f"{COMMAND}: --fabric: required (a built-in fabric, e.g. h100_ib_2x8, or a fabric file)")
    if minbytes > maxbytes:
        raise UserError(f"{COMMAND}: -b/--minbytes: {minbytes} bytes is more than -e/--maxbytes ({maxbytes} bytes)")
    f = nccl_fabric(fabric.text)
    if f.ranks < 2:
        raise UserError(f"{COMMAND}: --fabric: {f.name} has one GPU; a collective needs at least 2 ranks")
    try:
        algorithms(f, collective, algo)
    except ValueError as e:
        raise UserError(f"{COMMAND}: --algo {algo}: {e}") from None
    res = run_model(fabric.text, collective, minbytes=minbytes, maxbytes=maxbytes, stepfactor=stepfactor, algo=algo,
                    fidelity=fidelity)
    if as_json:
        echo_json(res.to_json())
    else:
        click.echo(table(res))
