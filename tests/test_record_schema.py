"""One record schema (issue 31): every view of a run record (numpy columns, frames, Arrow, Parquet, the --json rows,
the regression digests) follows the one table declared in crates/fabricsim-core/src/record_schema.rs, so a new
column is one row of that table."""

import json

import pytest

import fabricsim
from fabricsim import scenario_from_dict
from fabricsim.record import MISSING, SCHEMA, TABLES, arrow_schema, fields

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


@pytest.fixture(scope="module")
def rec():
    """Two messages, one of them cut to a 1-packet queue behind a 1 Gb/s bottleneck, retransmission off: received,
    dropped and missing values all occur."""
    return fabricsim.run(scenario_from_dict({
        "topology": {"kind": "custom",
                     "nodes": [{"name": "a", "kind": "host"}, {"name": "s", "kind": "switch"},
                               {"name": "b", "kind": "host"}],
                     "links": [{"a": "a", "b": "s", "rate": "10Gbps"}, {"a": "s", "b": "b", "rate": "1Gbps"}]},
        "queue": {"limit_packets": 1},
        "retransmit": {"max_retries": 0},
        "measure": {"queue_interval": "5us", "queues": ["s->b"]},
        "messages": [{"name": "m0", "src": "a", "dst": "b", "size": "4KB"},
                     {"name": "m1", "src": "a", "dst": "b", "size": "20KB"}]}))


def test_the_schema_is_well_formed():
    names = [f.name for f in SCHEMA]
    assert len(names) == len(set(names))
    assert TABLES[:3] == ("flows", "queues", "samples")
    for f in SCHEMA:
        assert f.description and f.source in ("stored", "derived", "row_name"), f.name
        assert f.dtype in ("uint8", "uint32", "uint64", "bool", "float64", "string"), f.name
        assert (f.json_key is None) == (f.json_form is None), f.name


def test_every_column_the_engine_writes_is_declared(rec):
    always = {f.name for f in SCHEMA if f.source == "stored" and not f.when}
    assert set(rec.columns) == always
    for f in SCHEMA:
        if f.name in rec.columns:
            assert rec.columns[f.name].dtype == f.dtype, f.name


@pytest.mark.parametrize("table", ["flows", "queues", "samples", "compute", "hosts", "timeline"])
def test_a_field_shows_in_every_view(rec, table):
    """Adding a row to the schema is enough: each field is a column of the frame and of the Arrow table (and so
    of Parquet), in the schema's order; each stored one has a digest; each with a json_key is in the rows."""
    have = [f for f in fields(table) if f.source != "stored" or f.name in rec.columns]
    assert list(rec.frame(table).columns) == [f.column for f in have]
    assert rec.to_arrow(table).schema.names == [f.column for f in have]
    digests = rec.digests()
    assert all(f.name in digests for f in have if f.source == "stored")
    keys = [f.json_key for f in have if f.json_key]
    if table == "flows":
        assert [list(r) for r in rec.flows()] == [keys] * rec.n_flows
        assert [list(r) for r in json.loads(rec.to_json())["flows"]] == [keys] * rec.n_flows
    if table == "queues":
        assert [list(r) for r in rec.queues(only_active=False)] == [keys] * len(rec.scalars["queue_names"])


def test_views_agree_value_for_value(rec):
    df, rows, t = rec.frame(), rec.flows(), rec.to_arrow().to_pylist()
    assert rec.values("flows.name") == list(df["name"]) == [r["name"] for r in rows] == ["m0", "m1"]
    assert rec.values("flows.complete_ps") == [r["complete_ps"] for r in t]
    assert [None if v is None else v * 1e-12 for v in rec.values("flows.complete_ps")] == [r["complete_s"] for r in rows]
    assert rec.values("flows.mean_delay_s") == [r["mean_delay_s"] for r in rows] == [r["mean_delay_s"] for r in t]
    assert rec.values("queues.name") == rec.scalars["queue_names"] == list(rec.frame("queues")["name"])
    assert rec.values("samples.port") == ["s->b"] * len(rec.columns["samples.port"])
    missing = rec.columns["flows.complete_ps"] == MISSING
    assert missing.any() and df["complete_ps"].isna().tolist() == missing.tolist()


def test_parquet_keeps_the_schema_with_units(rec, tmp_path):
    path = tmp_path / "flows.parquet"
    rec.to_parquet(path)
    schema = pq.read_schema(path)
    assert schema.metadata[b"fabricsim.table"] == b"flows"
    always = [f for f in fields("flows") if not f.when]  # a hybrid run adds skipped_packets
    for f in always:
        got = schema.field(f.column)
        assert got.metadata[b"unit"] == f.unit.encode() and got.metadata[b"description"] == f.description.encode()
        assert got.metadata[b"fabricsim.field"] == f.name.encode() and got.nullable == f.missing
    back = pq.read_table(path)
    assert back.equals(rec.to_arrow()) and back.schema.equals(arrow_schema("flows", [f.name for f in always]), check_metadata=True)
    assert back.column("complete_ps").null_count == int((rec.columns["flows.complete_ps"] == MISSING).sum()) > 0 and back.column("rx_bytes").to_pylist()[0] > 0
