"""Fabrics as data (issue 31): the built-in fabrics are files (fabricsim/_data/fabrics/NAME.toml) that one generic
reader reads, a fabric file may carry the same [fabric] table (server numbering, NIC order, named placements), and
the study's shift all-reduce has an unambiguous name, its old one a deprecated alias."""

from __future__ import annotations

import json
import shutil
import warnings

import pytest

from conftest import TWO_HOSTS
from fabricsim.cli import main
from fabricsim.collectives import all_reduce, builtin_fabrics, read_fabric, shift_all_reduce
from fabricsim.collectives.fabrics import BUILTIN_DIR, default_fabric
from fabricsim.collectives.patterns import pattern_name
from fabricsim.errors import FabricsimWarning, ScenarioError


def test_the_built_in_fabrics_are_data_files():
    assert list(builtin_fabrics()) == ["vela", "a100_roce_2x8", "cpo_baseline", "h100_ib_2x8", "p4de_efa_2x8",
                                       "p5_efa_2x8"], "the default first, then by name"
    assert default_fabric() == "vela"
    vela = read_fabric("vela")
    assert vela.numbered and vela.nic_order == (0, 2, 1, 3) and len(vela.placements) == 22 + 12
    assert vela.doc["topology"]["input_buffer"] == "4MiB", "study 000's Table IV calibration, labelled in the file"
    assert "CALIBRATION" in (BUILTIN_DIR / "vela.toml").read_text()
    cpo = read_fabric("cpo_baseline")
    assert cpo.numbered and cpo.placements == {} and cpo.doc["topology"]["racks"] == 128
    with pytest.raises(ScenarioError, match="unknown fabric 'nope'.*vela, a100_roce_2x8, cpo_baseline"):
        read_fabric("nope")


def test_a_copy_of_a_built_in_fabric_is_the_same_fabric(tmp_path, capsys):
    # Nothing about vela is in the code: its file, copied, gives the same servers, NICs and placements.
    copy = tmp_path / "mine.toml"
    shutil.copy(BUILTIN_DIR / "vela.toml", copy)
    args = ["--placement", "6n_3_3", "--pattern", "all-to-all", "--size", "1MiB", "--seeds", "2", "--fidelity", "flow",
            "--workers", "0", "--json"]
    out = {}
    for fabric in ("vela", str(copy)):
        assert main(["collective", "--fabric", fabric, *args]) == 0
        out[fabric] = json.loads(capsys.readouterr().out)
    a, b = out["vela"], out[str(copy)]
    assert a.pop("fabric") == "vela" and b.pop("fabric") == str(copy)
    assert a == b and a["servers"] == [[1, 1, 1, 2, 2, 2]]


def test_a_fabric_file_names_its_own_placements(tmp_path, capsys):
    f = tmp_path / "two.toml"
    f.write_text('[fabric]\ndescription = "two hosts"\nplacements = { both = [["h0", "h1"]] }\n' + TWO_HOSTS)
    assert main(["collective", "--fabric", str(f), "--placement", "both", "--pattern", "all-to-all", "--size", "1KiB",
                 "--seeds", "1", "--workers", "0", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["servers"] == [["h0", "h1"]]
    assert read_fabric(str(f)).placement("both") == [["h0", "h1"]]


@pytest.mark.parametrize("table, field", [
    ('servers = "ids"', "fabric.servers"),
    ("nic_order = [0, 0]", "fabric.nic_order"),
    ('placements = { one = [["h0"]] }', "fabric.placements.one"),
    ("colour = 1", "fabric.colour"),
])
def test_a_bad_fabric_table_is_one_line_naming_the_file_and_field(tmp_path, capsys, table, field):
    f = tmp_path / "bad.toml"
    f.write_text(f"[fabric]\n{table}\n" + TWO_HOSTS)
    assert main(["collective", "--fabric", str(f), "--nodes", "1,2", "--seeds", "1", "--workers", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith(f"{f}: {field}: "), err


def test_all_reduce_is_renamed_shift_all_reduce_and_the_old_name_warns(capsys):
    args = ["--placement", "4n_2r", "--size", "1MiB", "--seeds", "1", "--fidelity", "flow", "--workers", "0", "--json"]
    assert main(["collective", *args]) == 0
    new = capsys.readouterr()
    assert new.err == "" and json.loads(new.out)["patterns"] == ["shift-all-reduce"], "the default"
    assert main(["collective", "--pattern", "all-reduce", *args]) == 0
    old = capsys.readouterr()
    assert json.loads(old.out) == json.loads(new.out)
    assert old.err.strip() == ("fabricsim collective: --pattern all-reduce is deprecated (study 000's shift algorithm; "
                               "a scenario's all_reduce is a ring); use --pattern shift-all-reduce")
    with pytest.warns(FabricsimWarning, match="'all-reduce' is deprecated.*use 'shift-all-reduce'"):
        assert pattern_name("all-reduce") == "shift-all-reduce"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert pattern_name("ring-all-reduce") == "ring-all-reduce"
    nodes = ["h0", "h1", "h2"]
    with pytest.warns(FabricsimWarning, match="use shift_all_reduce"):
        assert all_reduce(nodes, 1000) == shift_all_reduce(nodes, 1000)
