"""The Python API's misuse corpus (issue 33, deliverable 9): every public function and constructor, called with
each kind of wrong argument (a string, None, a list, a dict, a path where a number goes; negative, zero, NaN,
infinity, 2^64, a bool where an int goes, a fractional float where a count goes), raises a
`fabricsim.errors.FabricsimError` whose message names the parameter, and never a built-in exception alone. numpy
integers and floats are accepted wherever a Python number is, and the nonsense calls the issue lists are refused.

Every case fails before any simulation starts, so the whole corpus runs in seconds.
"""

from __future__ import annotations

import functools
import math
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest

import fabricsim
from fabricsim import collectives as C
from fabricsim import topology as T
from fabricsim.chakra import info, load, lower, rescale
from fabricsim.errors import ArgumentError, FabricsimError
from fabricsim import train as TR
from fabricsim.chakra import Device
from fabricsim.cluster import ClusterConfig
from fabricsim.cpo import load as cpo_load
from fabricsim.ina import Instance
from fabricsim.nccl import busbw_factor, nccl_tests
from fabricsim.report import ci95
from fabricsim.routing import fors_route, ftree
from fabricsim.sweep import Store, load_sweep

EXAMPLE = fabricsim.examples.path("leaf_spine_incast.toml")
FABRIC = "h100_ib_2x8"

BAD = {"str": "abc", "none": None, "list": [1], "dict": {"a": 1}, "path": "x.toml", "neg": -5, "zero": 0,
       "nan": math.nan, "inf": math.inf, "huge": 2**64, "bool": True, "float": 2.5}
"""The wrong values, by kind."""

ANY = set(BAD)
COUNT = ANY  # a count of at least 1: nothing of BAD is one
COUNT0 = ANY - {"zero"}  # a count that may be 0
OPTIONAL = ANY - {"none"}  # an optional count of at least 1
NUMBER = ANY - {"float"}  # a positive finite number (2.5 is one)
NUMBER0 = NUMBER - {"zero"}  # a finite number >= 0
TEXT = ANY - {"str", "path"}  # a name: every non-string is refused (a string's own check is the callee's)
CHOICE = ANY - {"none"}  # one of a few strings, None meaning "the default"
OBJECT = ANY - {"str", "path"}  # a Scenario or a path to its file (a string is read as a path: its error names the file)
RATE = ANY - {"float"}  # a rate: a number (bit/s) or a string with a unit


def scenario():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fabricsim.load_scenario(EXAMPLE)


SC = scenario()


@functools.cache
def record():
    """A short run of the example (its first 100 events)."""
    return fabricsim.run(SC, max_events=100)


@functools.cache
def traces():
    """A 4-rank data-parallel trace written by `trace synth`'s writer into a fresh folder, read back."""
    from fabricsim.chakra import synth as sy

    folder = Path(tempfile.mkdtemp(prefix="fabricsim-corpus-api-"))
    return load(sy.write(folder / "dp", sy.data_parallel(sy.Model(layers=1, hidden=64, seq_len=32, micro_batch=2), 4)))


# (id, parameter the error must name, call taking the wrong value, the kinds of BAD it must refuse)
CASES = [
    ("run.scenario", "scenario", lambda v: fabricsim.run(v), OBJECT),
    ("run.seed", "seed", lambda v: fabricsim.run(SC, seed=v), OPTIONAL - {"zero"}),
    ("run.fidelity", "fidelity", lambda v: fabricsim.run(SC, fidelity=v), CHOICE),
    ("run.workload", "workload", lambda v: fabricsim.run(SC, workload=v), OPTIONAL),
    ("run.max_events", "max_events", lambda v: fabricsim.run(SC, max_events=v), OPTIONAL),
    ("run.max_wall_s", "max_wall_s", lambda v: fabricsim.run(SC, max_wall_s=v), NUMBER - {"none"}),
    ("run.progress", "progress", lambda v: fabricsim.run(SC, progress=v), OPTIONAL),
    ("validate.scenario", "scenario", lambda v: fabricsim.validate(v), OBJECT),
    ("validate.fidelity", "fidelity", lambda v: fabricsim.validate(SC, fidelity=v), CHOICE),
    ("validate.workload", "workload", lambda v: fabricsim.validate(SC, workload=v), OPTIONAL),
    ("load_scenario", "path", lambda v: fabricsim.load_scenario(v), ANY - {"str", "path"}),
    ("scenario_from_dict.data", "", lambda v: fabricsim.scenario_from_dict(v), ANY - {"dict"}),
    ("scenario_from_dict.source", "source", lambda v: fabricsim.scenario_from_dict({}, v), TEXT - {"none"}),
    ("Scenario.with_seed", "seed", lambda v: SC.with_seed(v), COUNT0),
    ("Workload", "scenario", lambda v: fabricsim.Workload(v), ANY),
    ("Workload.messages.size", "size", lambda v: fabricsim.Workload(SC).messages("h0", "h1", v),
     COUNT0 - {"zero", "list"}),  # a list is one size per message
    ("Workload.messages.names", "name", lambda v: fabricsim.Workload(SC).messages("h0", "h1", 10, names=[v]),
     ANY - {"str", "path"}),
    ("examples.path", "name", lambda v: fabricsim.examples.path(v), ANY),
    ("topology.fat_tree.m0", "m0", lambda v: T.fat_tree(v, 3, "10Gbps"), COUNT),
    ("topology.fat_tree.m1", "m1", lambda v: T.fat_tree(2, v, "10Gbps"), COUNT),
    ("topology.fat_tree.rate", "rate", lambda v: T.fat_tree(2, 3, v), RATE),
    ("topology.fat_tree.delay", "delay", lambda v: T.fat_tree(2, 3, "10Gbps", delay=v), RATE - {"none", "zero"}),
    ("topology.fat_tree3.k", "k", lambda v: T.fat_tree3(v, "10Gbps"), COUNT),
    ("topology.fat_tree3.oversubscription", "oversubscription",
     lambda v: T.fat_tree3(4, "10Gbps", oversubscription=v), NUMBER - {"none", "float", "huge"}),
    # (2^64:1 oversubscription is a fabric of 2^64 hosts: refused by the engine's size limit, naming `topology`)
    ("topology.leaf_spine.racks", "racks", lambda v: T.leaf_spine(v, 2, 2, "10Gbps", "10Gbps"), COUNT),
    ("topology.leaf_spine.spines", "spines", lambda v: T.leaf_spine(2, 2, v, "10Gbps", "10Gbps"), COUNT),
    ("topology.dumbbell.senders", "senders", lambda v: T.dumbbell(v), COUNT - {"none"}),
    ("topology.torus.dims", "dims", lambda v: T.torus(v, "10Gbps"), ANY),
    ("topology.dragonfly.p", "p", lambda v: T.dragonfly(v, 2, 1, "10Gbps"), COUNT),
    ("topology.rail_optimized.sus", "sus", lambda v: T.rail_optimized(v, 2, 1), COUNT),
    ("topology.rail_gpus.sus", "sus", lambda v: T.rail_gpus(v, 2), COUNT),
    ("topology.graph.file", "", lambda v: T.graph(v), ANY),
    ("topology.to_networkx", "network", lambda v: T.to_networkx(v), ANY),
    ("topology.custom.nodes", "nodes", lambda v: T.custom(v, []), ANY),
    ("topology.FatTree.m0", "m0", lambda v: T.FatTree(v, 4), COUNT),
    ("topology.random_failures.links", "links", lambda v: T.random_failures(4, 4, v), COUNT0),
    ("topology.random_failures.seed", "seed", lambda v: T.random_failures(4, 4, 1, seed=v), COUNT0),
    ("collectives.ring_all_reduce.size", "size", lambda v: C.ring_all_reduce(["h0", "h1"], v),
     COUNT - {"float"}),
    ("collectives.ring_all_reduce.nodes", "nodes", lambda v: C.ring_all_reduce(v, 100), ANY),
    ("collectives.all_to_all.packet", "packet", lambda v: C.all_to_all(["h0", "h1"], 100, packet=v),
     COUNT - {"float"}),
    ("collectives.all_to_all.header", "header", lambda v: C.all_to_all(["h0", "h1"], 100, header=v), COUNT0),
    ("collectives.all_to_all.order", "order", lambda v: C.all_to_all(["h0", "h1"], 100, order=v), CHOICE),
    ("collectives.all_to_all.barrier", "barrier", lambda v: C.all_to_all(["h0", "h1"], 100, barrier=v),
     ANY - {"bool"}),
    ("collectives.all_gather.tag", "tag", lambda v: C.all_gather(["h0", "h1"], 100, tag=v), TEXT),
    ("collectives.reduce_scatter.nodes", "nodes", lambda v: C.reduce_scatter(v, 100), ANY),
    ("collectives.pack.n", "n", lambda v: C.pack(v, 4, 4), COUNT),
    ("collectives.spread.over", "over", lambda v: C.spread(2, v, 4, 4), COUNT),
    ("collectives.placement_groups.name", "name", lambda v: C.placement_groups(v, 4, 4), ANY),
    ("collectives.read_fabric", "", lambda v: C.read_fabric(v), ANY),
    ("chakra.load", "prefix", lambda v: load(v), ANY - {"str", "path"}),
    ("chakra.info", "traces", lambda v: info(v), ANY),
    ("chakra.lower.traces", "traces", lambda v: lower(v, SC), ANY),
    ("chakra.lower.scenario", "scenario", lambda v: lower(traces(), v), ANY),
    ("chakra.lower.chunks", "chunks", lambda v: lower(traces(), SC, chunks=v), COUNT),
    ("chakra.rescale.traces", "traces", lambda v: rescale(v, 4), ANY),
    ("chakra.rescale.ranks", "ranks", lambda v: rescale(traces(), v), OPTIONAL),
    ("place.nodes", "nodes", lambda v: fabricsim.place(v, fabric="vela"), OPTIONAL),
    ("place.msg_mb", "msg_mb", lambda v: fabricsim.place(4, fabric="vela", msg_mb=v), NUMBER),
    ("place.max_evals", "max_evals", lambda v: fabricsim.place(4, fabric="vela", max_evals=v), OPTIONAL),
    ("place.budget_s", "budget_s", lambda v: fabricsim.place(4, fabric="vela", budget_s=v),
     NUMBER0 - {"none", "huge"}),  # 2^64 s is a budget, if a long one
    ("place.confirm_with", "confirm_with", lambda v: fabricsim.place(4, fabric="vela", confirm_with=v), ANY),
    ("nccl_tests.fabric", "fabric", lambda v: nccl_tests(v), ANY - {"str", "path"}),
    ("nccl_tests.collective", "collective", lambda v: nccl_tests(FABRIC, v), ANY),
    ("nccl_tests.minbytes", "minbytes", lambda v: nccl_tests(FABRIC, minbytes=v, maxbytes=1024), COUNT),
    ("nccl_tests.stepfactor", "stepfactor", lambda v: nccl_tests(FABRIC, stepfactor=v), COUNT),
    ("nccl.busbw_factor.ranks", "ranks", lambda v: busbw_factor("all_reduce", v), COUNT),
    ("train.plan.model", "model", lambda v: TR.plan(v, fabric=FABRIC), ANY),
    ("train.plan.fabric", "fabric", lambda v: TR.plan("gpt3-1.3b", fabric=v), TEXT),
    ("train.plan.tp", "tp", lambda v: TR.plan("gpt3-1.3b", fabric=FABRIC, tp=v), COUNT),
    ("train.plan.micro_batch", "micro_batch", lambda v: TR.plan("gpt3-1.3b", fabric=FABRIC, micro_batch=v), COUNT),
    ("train.plan.seq_len", "seq_len", lambda v: TR.plan("gpt3-1.3b", fabric=FABRIC, seq_len=v), OPTIONAL),
    ("train.model", "model", lambda v: TR.model(v), ANY),
    ("train.read_model", "path", lambda v: TR.read_model(v), ANY - {"str", "path"}),
    ("train.read_layer_times", "path", lambda v: TR.read_layer_times(v), ANY - {"str", "path"}),
    ("train.Parallel.tp", "tp", lambda v: TR.Parallel(tp=v), COUNT),
    ("chakra.Device.peak_flops", "peak_flops", lambda v: Device("x", v, 1e12, "a test"), NUMBER - {"huge"}),
    ("sweep.load_sweep", "path", lambda v: load_sweep(v), ANY - {"str", "path"}),
    ("sweep.Store", "folder", lambda v: Store(v), ANY - {"str", "path"}),
    ("report.ci95", "values", lambda v: ci95(v), ANY - {"list"}),
    ("ina.Instance.workers", "workers", lambda v: Instance(workers=v), COUNT),
    ("cpo.load", "source", lambda v: cpo_load(v), ANY - {"str", "path"}),
    # (a ClusterConfig checks types; the ranges, with the fabric, when it runs: ScenarioError naming the option)
    ("cluster.ClusterConfig.jobs", "jobs", lambda v: ClusterConfig(jobs=v), COUNT - {"neg", "zero", "huge"}),
    ("cluster.ClusterConfig.msg_mb", "msg_mb", lambda v: ClusterConfig(msg_mb=v), NUMBER - {"neg", "zero", "huge"}),
    ("RunRecord", "scalars", lambda v: fabricsim.RunRecord(v, {}), ANY - {"dict"}),
    ("RunRecord.values", "name", lambda v: record().values(v), ANY),
    ("RunRecord.frame", "table", lambda v: record().frame(v), ANY),
    ("RunRecord.flows", "limit", lambda v: record().flows(v), COUNT0 - {"none", "huge"}),
    ("routing.ftree", "ft", lambda v: ftree(v, []), ANY),
    ("routing.fors_route", "ft", lambda v: fors_route(v, []), ANY),
]

MISUSES = [pytest.param(call, param, BAD[kind], id=f"{cid}-{kind}")
           for cid, param, call, kinds in CASES for kind in sorted(kinds)]


@pytest.mark.parametrize("call, param, value", MISUSES)
def test_every_misuse_raises_a_fabricsim_error_naming_the_parameter(call, param, value):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(FabricsimError) as e:
            call(value)
    assert param in str(e.value), f"{type(e.value).__name__}: {e.value}"
    assert "\n" not in str(e.value)


def test_an_argument_error_is_also_a_value_and_type_error():
    """Code that caught the built-in exceptions before keeps working."""
    with pytest.raises(ValueError):
        C.pack(0, 4, 4)
    with pytest.raises(TypeError):
        C.pack("2", 4, 4)
    e = ArgumentError("n", "must be at least 1, got 0")
    assert (e.param, e.reason, str(e)) == ("n", "must be at least 1, got 0", "n: must be at least 1, got 0")


def same(a, b) -> bool:
    """Two records hold the same simulation (the wall time aside)."""
    drop = lambda r: {k: v for k, v in r.scalars.items() if k != "wall_s"}  # noqa: E731
    return drop(a) == drop(b) and a.flows() == b.flows()


def test_run_takes_a_path_as_well_as_a_scenario():
    """`fabricsim.run("x.toml")` was an AttributeError: a path is read as `load_scenario` reads it, and a missing
    file is a ScenarioError naming it."""
    by_path = fabricsim.run(str(EXAMPLE), max_events=5000)
    assert same(by_path, fabricsim.run(SC, max_events=5000))
    assert fabricsim.validate(EXAMPLE) == fabricsim.validate(SC)
    with pytest.raises(fabricsim.ScenarioError, match=r"^x\.toml: cannot read"):
        fabricsim.run("x.toml")


def test_numpy_scalars_are_accepted_as_numbers():
    """np.int64 and np.float64 stand for Python numbers everywhere, with the same results."""
    i, f = np.int64, np.float64
    assert same(fabricsim.run(SC, seed=i(3), max_events=i(2000), max_wall_s=f(60)),
                fabricsim.run(SC, seed=3, max_events=2000, max_wall_s=60))
    assert SC.with_seed(i(7)).seed == 7 and type(SC.with_seed(i(7)).seed) is int
    assert T.fat_tree(i(2), np.int32(3), f(1e10)) == T.fat_tree(2, 3, 10**10)
    assert T.rail_gpus(i(1), i(2), i(2)) == ["su0.s0.g0", "su0.s0.g1", "su0.s1.g0", "su0.s1.g1"]
    assert T.random_failures(i(4), i(4), i(1), seed=i(3)) == T.random_failures(4, 4, 1, seed=3)
    assert C.ring_all_reduce(["h0", ("h1", i(0))], i(1024), packet=i(512), header=np.int32(0)) == \
        C.ring_all_reduce(["h0", "h1"], 1024, packet=512)
    assert C.pack(i(2), i(4), i(4), start_rack=i(1)) == [5, 6]
    assert C.spread(i(2), i(2), i(4), i(4)) == [1, 5]
    doc = {"seed": i(2), "topology": {"kind": "dumbbell", "senders": i(2), "bottleneck_rate": f(1e8)}}
    assert fabricsim.scenario_from_dict(doc).header() == fabricsim.scenario_from_dict(
        {"seed": 2, "topology": {"kind": "dumbbell", "senders": 2, "bottleneck_rate": 1e8}}).header()
    assert len(rescale(traces(), i(8)).traces) == 8
    assert [r["size_bytes"] for r in nccl_tests(FABRIC, minbytes=i(1024), maxbytes=i(4096)).rows] == [1024, 2048, 4096]


@pytest.mark.parametrize("call, words", [
    (lambda: T.fat_tree(-1, 3, "100Gbps"), "m0"),
    (lambda: T.fat_tree(2, 3, "100Gbps", delay=math.nan), "delay"),
    (lambda: T.leaf_spine(2, 2, 2, "-1Gbps", "10Gbps"), "host_rate"),
    (lambda: T.dumbbell(0), "senders"),
    (lambda: C.pack(0, 4, 4), "n: must be at least 1"),
    (lambda: fabricsim.place(4, fabric="vela", max_evals=0), "max_evals: must be at least 1"),
    (lambda: fabricsim.place(4, fabric="vela", budget_s=math.nan), "budget_s: must be a finite number"),
    (lambda: fabricsim.run(SC, max_events=0), "max_events: must be at least 1"),
    (lambda: fabricsim.run(SC, max_events=-5), "max_events: must be at least 1, got -5"),
])
def test_the_nonsense_calls_are_refused(call, words):
    """Issue 33 found these accepted (or refused with a built-in exception): each is now a FabricsimError."""
    with pytest.raises(FabricsimError, match=words):
        call()


def test_duplicate_names_in_a_workload_are_refused():
    """A name is used once across messages, barriers and compute steps, as in a scenario file: the second "x" (or
    a name the scenario's own rows hold, "m0" in the example) is a ScenarioError naming the row."""
    wl = fabricsim.Workload(SC)
    with pytest.raises(fabricsim.ScenarioError, match=r"messages\[\d+\]\.name: 'x' already names"):
        wl.messages(["h0", "h0"], ["h1", "h1"], [10, 10], names=["x", "x"])
    wl = fabricsim.Workload(SC)
    own = SC.messages[0].name
    with pytest.raises(fabricsim.ScenarioError, match=rf"messages\[\d+\]\.name: '{own}' already names"):
        wl.messages("h0", "h1", 10, names=[own])
    wl = fabricsim.Workload(SC)
    wl.compute("h0", 5, names=["c"])
    with pytest.raises(fabricsim.ScenarioError, match=r"barriers\[0\]\.name: 'c' already names"):
        wl.barrier([], name="c")
