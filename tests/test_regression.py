"""Record regression: wire specs captured from `fabricsim reproduce all --quick` before the columnar-workload
restructuring give bit-identical records (sha256 of the canonical record, wall time excluded)."""

import gzip
import hashlib
import json
from pathlib import Path

import pytest

from fabricsim.engine import run_wire

CORPUS = sorted((Path(__file__).parent / "regression" / "corpus").glob("*.json.gz"))


def record_sha(raw: dict) -> str:
    rec = dict(raw)
    rec.pop("wall_s", None)
    return hashlib.sha256(json.dumps(rec, sort_keys=True).encode()).hexdigest()


def test_corpus_covers_both_engines_and_every_feature():
    kinds = [json.load(gzip.open(p)) for p in CORPUS]
    assert {k["fidelity"] for k in kinds} == {"packet", "flow"}
    assert any(k["spec"].get("tcp") for k in kinds) and any(k["spec"].get("sources") for k in kinds)
    assert any(k["spec"].get("barriers") for k in kinds)


@pytest.mark.parametrize("path", CORPUS, ids=[p.name.split(".")[0] for p in CORPUS])
def test_record_is_unchanged(path):
    case = json.load(gzip.open(path))
    rec = run_wire(case["spec"], case["fidelity"])
    assert record_sha(rec.legacy_dict()) == case["record_sha256"]
