"""The native Chakra ET reader and writer (fabricsim._core.read_chakra / write_chakra) on ASTRA-sim's example traces."""

import gzip
from pathlib import Path

import numpy as np
import pytest

from fabricsim import _core
from fabricsim.errors import SpecError

from test_chakra import DATA as EXAMPLES

pytestmark = pytest.mark.shared  # every test reads ASTRA-sim's example traces
COLLECTIVES = {"all_reduce": 0, "all_gather": 2, "reduce_scatter": 7, "all_to_all": 6}
COMM_COLL_NODE, COMP_NODE, COMM_SEND_NODE, COMM_RECV_NODE = 7, 4, 5, 6

DTYPES = {
    "id": np.uint64, "name": np.uint32, "node_type": np.uint8, "duration_micros": np.uint64,
    "comm_type": np.int32, "comm_size": np.uint64, "comm_src": np.int64, "comm_dst": np.int64, "comm_tag": np.int64,
    "pg_name": np.uint32, "num_ops": np.uint64, "tensor_size": np.uint64, "is_cpu_op": np.uint8,
    "data_dep_start": np.uint32, "data_deps": np.uint64, "ctrl_dep_start": np.uint32, "ctrl_deps": np.uint64,
    "extra_start": np.uint64, "extra": np.uint8,
}


def collective_files():
    return [(coll, npus, EXAMPLES / coll / f"{npus}npus_1MB" / f"{coll}.{rank}.et")
            for coll in COLLECTIVES for npus in (4, 8) for rank in range(npus)]


def ring_files():
    return [EXAMPLES / "custom_ring_allreduce" / "8npus_1MB" / f"custom_allreduce.{rank}.et" for rank in range(8)]


def test_dict_keys_and_dtypes():
    t = _core.read_chakra(str(EXAMPLES / "all_reduce" / "4npus_1MB" / "all_reduce.0.et"))
    assert set(t) == set(DTYPES) | {"version", "names", "meta_extra"}
    for key, dtype in DTYPES.items():
        assert isinstance(t[key], np.ndarray) and t[key].dtype == dtype and t[key].ndim == 1, key
    assert isinstance(t["names"], list) and isinstance(t["meta_extra"], bytes)


def test_first_file_matches_the_readme():
    t = _core.read_chakra(str(EXAMPLES / "all_reduce" / "4npus_1MB" / "all_reduce.0.et"))
    assert t["version"] == "0.0.4"
    assert len(t["id"]) == 1
    assert t["names"][t["name"][0]] == "all_reduce_4npus_1MB"
    assert t["node_type"][0] == COMM_COLL_NODE
    assert t["is_cpu_op"][0] == 0
    assert t["comm_type"][0] == 0
    assert t["comm_size"][0] == 1048576
    assert (t["comm_src"][0], t["comm_dst"][0], t["comm_tag"][0]) == (-1, -1, -1)
    assert t["pg_name"][0] == 2**32 - 1


@pytest.mark.parametrize("coll, npus, path", collective_files(), ids=lambda v: str(v).split("/")[-1] if isinstance(v, Path) else str(v))
def test_every_collective_example(coll, npus, path):
    t = _core.read_chakra(str(path))
    assert t["version"] == "0.0.4"
    assert t["names"][t["name"][0]] == f"{coll}_{npus}npus_1MB"
    assert list(t["node_type"]) == [COMM_COLL_NODE]
    assert (t["comm_type"][0], t["comm_size"][0], t["is_cpu_op"][0]) == (COLLECTIVES[coll], 1048576, 0)


@pytest.mark.parametrize("path", ring_files(), ids=lambda p: p.name)
def test_custom_ring(path):
    rank = int(path.name.split(".")[1])
    t = _core.read_chakra(str(path))
    assert len(t["id"]) == 35
    types = t["node_type"]
    assert ((types == COMM_SEND_NODE).sum(), (types == COMM_RECV_NODE).sum(), (types == COMP_NODE).sum()) == (14, 14, 7)
    assert set(t["comm_dst"][types == COMM_SEND_NODE]) == {(rank + 1) % 8}
    assert set(t["comm_src"][types == COMM_RECV_NODE]) == {(rank + 7) % 8}
    assert len(t["data_dep_start"]) == 36 and t["data_dep_start"][-1] == len(t["data_deps"])
    assert np.isin(t["data_deps"], t["id"]).all()
    assert b"schema" in t["meta_extra"]


def assert_same(a, b):
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], np.ndarray):
            assert a[key].dtype == b[key].dtype and np.array_equal(a[key], b[key]), key
        else:
            assert a[key] == b[key], key


@pytest.mark.parametrize("suffix", [".et", ".et.gz"])
def test_round_trip(tmp_path, suffix):
    for path in [EXAMPLES / "all_to_all" / "8npus_1MB" / "all_to_all.5.et", ring_files()[3]]:
        t = _core.read_chakra(str(path))
        out = tmp_path / f"copy{suffix}"
        _core.write_chakra(str(out), t)
        back = _core.read_chakra(str(out))
        assert_same(t, back)
        raw = gzip.decompress(out.read_bytes()) if suffix.endswith(".gz") else out.read_bytes()
        assert raw == path.read_bytes()


def test_write_minimal_columns_and_bad_columns(tmp_path):
    out = tmp_path / "mini.et"
    cols = {"id": np.array([0, 1], np.uint64), "name": np.array([0, 0], np.uint32), "names": ["x"],
            "node_type": np.array([COMP_NODE, COMM_COLL_NODE], np.uint8),
            "comm_size": np.array([0, 4096], np.uint64)}
    _core.write_chakra(str(out), cols)
    t = _core.read_chakra(str(out))
    assert list(t["comm_size"]) == [0, 4096] and list(t["comm_type"]) == [-1, -1] and t["version"] == ""
    with pytest.raises(SpecError) as e:
        _core.write_chakra(str(tmp_path / "bad.et"), {**cols, "id": np.array([3, 3], np.uint64)})
    assert "bad.et" in e.value.field and "duplicate" in e.value.reason
    assert not (tmp_path / "bad.et").exists()


def test_corrupt_files_raise_spec_error_naming_the_file(tmp_path):
    good = ring_files()[0].read_bytes()
    for name, data in [("truncated.et", good[:-7]), ("garbage.et", b"definitely not a protobuf stream"),
                       ("badgz.et.gz", gzip.compress(good)[:100])]:
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(SpecError) as e:
            _core.read_chakra(str(path))
        assert str(path) in e.value.field, e.value
        assert e.value.reason
    with pytest.raises(SpecError) as e:
        _core.read_chakra(str(tmp_path / "missing.et"))
    assert "missing.et" in e.value.field and "cannot read" in e.value.reason
