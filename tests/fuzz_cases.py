"""The seeded mutation fuzzer's cases and its worker (tests/test_fuzz.py runs it).

`mutations(text, name, n)` draws n mutations of a shipped scenario file's text, the same ones on every machine
(random.Random seeded with the file's name): a value swapped for another type, a negative, zero, NaN or infinity,
an integer too big for 64 bits, an empty string, a bad unit ("1ps" where an interval goes, "5 parsecs"); a key
deleted, an unknown key, a table duplicated; the file truncated, replaced by binary garbage, or encoded as UTF-16;
the file switched to the UEC transport (`transport = "uec"`, issue 34), with or without [uec] keys set to values
in and out of their ranges (`UEC_VALUES`).

Run as a script (`python fuzz_cases.py CASES.json`), it is the worker: it runs every case's command line
in-process through `fabricsim.cli.main`, under an address-space limit, and prints one JSON line per case (a START
line first, so a case that kills the interpreter is still named). A crash of the worker is a finding.
"""

from __future__ import annotations

import json
import random
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SCENARIOS = sorted([*(ROOT / "examples").glob("*.toml"), *(ROOT / "experiments").rglob("*.toml")])
"""Every shipped scenario file (python/fabricsim/_data/examples is a link to examples/; experiments' sweep
files are fuzzed as `validate` reads them)."""

FABRICS = sorted((ROOT / "python" / "fabricsim" / "_data" / "fabrics").glob("*.toml"))
"""The built-in fabric files (`--fabric NAME`), fuzzed through `collective` and `nccl-tests`."""

VALUES = ["nan", "inf", "-inf", "-1", "0", "18446744073709551616", "9223372036854775807", "1e400", '""', '"1ps"',
          '"5 parsecs"', '"abc"', "true", "[]", "{}", "1.5", "-0.5", '"-1us"', '"\\u0000"', '"été"', '[1, "a"]',
          '"100 Gbps"', '"1e3us"', "{ x = 1 }", "1", "2", "64"]
"""The values a swap puts in place of a key's value."""

HAZARDS = ('"1ps"', "9223372036854775807")
"""Values whose cost depends on the size guard (a 1 ps throughput bin over a long run, 2^63 − 1 of anything):
until the engine estimates memory before allocating (issue 33's size guard), they may abort or exhaust memory,
so the CI subset leaves them out (test_fuzz.py's slow tests run them)."""

SLOW_RATE = re.compile(r"(?<!pull_)rate = (-?0|1\.5|true|-0\.5|-1)\b")
"""A link rate of a bit or so per second: a run's simulated time, and with it its throughput bins and queue
samples, grows without bound (link_failure.toml with fabric_rate = 1.5 allocated 3.3 GB of bins in 20,000
events). A size hazard too."""

UEC_VALUES = {
    "cc": ['"nscc"', '"rccc"', '"none"', '"dcqcn"'],
    "spray": ['"oblivious"', '"reps"', '"ecmp"', '"bitmap"'],
    "entropies": ["1", "2", "12", "64", "65536", "131072"],
    "trimming": ["true", "false", '"yes"'],
    "trim_size": ["10", "64", "5000"],
    "mtu": ["63", "65", "4150", "9000", "70000"],
    "header": ["64", "4150", "65535"],
    "ack_size": ["64", "70000"],
    "ack_every": ["1", "16384", '"16KiB"'],
    "ack_timer": ['"0us"', '"1ns"', '"1us"', '"2s"'],
    "rto": ['"auto"', '"0us"', '"1ns"', '"50us"', '"2s"'],
    "base_rtt": ['"auto"', '"0ns"', '"10us"'],
    "target_delay": ['"auto"', '"1ns"', '"5us"'],
    "max_window": ['"auto"', "4000", "4150", "525852", '"1MiB"'],
    "ecn_low": ['"auto"', "0", "50000", "100000"],
    "ecn_high": ['"auto"', "0", "50000", "100000"],
    "pull_packets": ["0", "4", "1025"],
    "pull_rate": ["0", "0.5", "1.0", "1.5"],
}
"""[uec]'s keys (crates/fabricsim-core/src/scenario/uec.rs) and the values a UEC mutation draws for them: the
edges of each range on both sides, besides any of VALUES."""

TOP_TRANSPORT = re.compile(r'(?m)\A((?:[ \t]*(?:#.*)?\n|[ \t]*[A-Za-z_]+[ \t]*=.*\n)*?)[ \t]*transport[ \t]*=[^\n]*')

KEY_VALUE = re.compile(r"""(?m)(?P<key>\b[A-Za-z_][A-Za-z0-9_]*)(?P<eq>[ \t]*=[ \t]*)(?P<value>"[^"\n]*"|'[^'\n]*'|"""
                       r"""\[[^\[\]\n]*\]|[-+0-9A-Za-z_.:]+)""")
TABLE = re.compile(r"(?m)^[ \t]*\[\[?[A-Za-z0-9_.\"' -]+\]\]?[ \t]*(#.*)?$")


@dataclass
class Mutation:
    """One mutated file: `kind` says what was done, `data` is the file's bytes."""

    kind: str
    data: bytes

    @property
    def hazard(self) -> bool:
        """Whether the size guard decides this mutation's cost (HAZARDS, SLOW_RATE)."""
        return any(f"= {v}" in self.kind for v in HAZARDS) or SLOW_RATE.search(self.kind) is not None


def mutations(text: str, name: str, n: int) -> list[Mutation]:
    """n seeded mutations of `text` (a scenario file named `name`). O(n · len(text))."""
    rnd = random.Random(f"fabricsim-fuzz:{name}")
    pairs = list(KEY_VALUE.finditer(text))
    tables = [m.group(0).split("#")[0].strip() for m in TABLE.finditer(text)]
    out: list[Mutation] = []
    ops = ["swap"] * 6 + ["delete", "unknown", "duplicate", "truncate", "garbage", "utf16", "empty", "unit", "uec", "uec"]
    while len(out) < n:
        if out and rnd.random() < 0.25 and out[-1].kind.startswith("swap"):
            # a second swap on top of the last one (two wrong values at once)
            twice = mutations_once(out[-1].data.decode(), rnd)
            if twice is not None:
                out.append(Mutation(f"{out[-1].kind}; {twice.kind}", twice.data))
                continue
        op = rnd.choice(ops)
        if op in ("swap", "unit", "delete") and pairs:
            m = rnd.choice(pairs)
            key, value = m.group("key"), m.group("value")
            if op == "delete":
                new, kind = text[:m.start()] + text[m.end():], f"delete {key}"
            else:
                if op == "unit" and value.startswith('"'):
                    number = re.match(r'"([0-9.]+)', value)
                    v = f'"{number.group(1) if number else "1"}{rnd.choice(["parsecs", "ps", "Gbps", "MiB", "xs", " us"])}"'
                else:
                    v = rnd.choice(VALUES)
                new, kind = text[:m.start("value")] + v + text[m.end("value"):], f"swap {key} = {v}"
            out.append(Mutation(kind, new.encode()))
        elif op == "unknown":
            at = rnd.choice([0] + [m.end() for m in TABLE.finditer(text)])
            out.append(Mutation("unknown key", (text[:at] + "\nbogus_key = 1\n" + text[at:]).encode()))
        elif op == "duplicate" and tables:
            t = rnd.choice(tables)
            out.append(Mutation(f"duplicate {t}", (text + f"\n{t}\n").encode()))
        elif op == "truncate":
            at = rnd.randrange(len(text))
            out.append(Mutation(f"truncate at {at}", text[:at].encode()))
        elif op == "garbage":
            out.append(Mutation("binary garbage", bytes(rnd.randrange(256) for _ in range(256))))
        elif op == "utf16":
            out.append(Mutation("utf-16", text.encode("utf-16")))
        elif op == "empty":
            out.append(Mutation("empty", b""))
        elif op == "uec":
            out.append(uec_mutation(text, rnd))
    return out


def uec_mutation(text: str, rnd: random.Random) -> Mutation:
    """`text` on the UEC transport: its top-level `transport` set to "uec" (or the key added before the first
    table), and 0 to 3 [uec] keys, each one of its own `UEC_VALUES` or, one time in four, any of `VALUES` (into the
    file's own [uec] table when it has one)."""
    top = TOP_TRANSPORT.match(text)
    new = (text[:top.end(1)] + 'transport = "uec"' + text[top.end():]) if top else 'transport = "uec"\n' + text
    keys = rnd.sample(sorted(UEC_VALUES), rnd.randrange(4))
    sets = [f"{k} = {rnd.choice(VALUES) if rnd.random() < 0.25 else rnd.choice(UEC_VALUES[k])}" for k in keys]
    if sets:
        body = "\n".join(sets) + "\n"
        at = re.search(r"(?m)^[ \t]*\[uec\][^\n]*\n", new)
        new = new[:at.end()] + body + new[at.end():] if at else new.rstrip("\n") + "\n\n[uec]\n" + body
    return Mutation("uec transport" + "".join(f"; [uec] {x}" for x in sets), new.encode())


def mutations_once(text: str, rnd: random.Random) -> Mutation | None:
    """One value swap in `text`, or None when it has no key = value."""
    pairs = list(KEY_VALUE.finditer(text))
    if not pairs:
        return None
    m = rnd.choice(pairs)
    v = rnd.choice(VALUES)
    return Mutation(f"swap {m.group('key')} = {v}", (text[:m.start("value")] + v + text[m.end("value"):]).encode())


def commands(path: str, fabric: bool = False) -> list[list[str]]:
    """The command lines a mutated file goes through: a scenario validate, a bounded run at packet and at flow
    fidelity, and the fabric's description; a fabric file a two-node collective at flow fidelity and
    nccl-tests."""
    if fabric:
        return [["collective", "--fabric", path, "--nodes", "1,2", "--size", "64KiB", "--seeds", "1", "--workers",
                 "0", "--fidelity", "flow", "--json"], ["nccl-tests", "--fabric", path, "--json"]]
    bounded = ["--json", "--max-events", "20000", "--max-wall", "1"]
    return [["validate", path], ["run", path, *bounded], ["run", path, "--fidelity", "flow", *bounded],
            ["topology", path, "--json"]]


def _limit_memory(gib: float) -> None:
    """Cap the worker's address space, so an allocation the size guard does not yet refuse fails fast."""
    import resource

    limit = int(gib * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def _worker(cases_file: str) -> None:
    import io
    import warnings

    from fabricsim.cli import main

    cases = json.loads(Path(cases_file).read_text())
    out = sys.__stdout__
    for case in cases:
        print(json.dumps({"start": case["id"]}), file=out, flush=True)
        buf_out, buf_err = io.StringIO(), io.StringIO()
        sys.stdout, sys.stderr = buf_out, buf_err
        try:
            with warnings.catch_warnings():
                rc = main(case["argv"])
        except BaseException as e:  # noqa: BLE001 - a finding, reported, not raised
            rc = f"raised {type(e).__name__}: {e}"
        finally:
            sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        print(json.dumps({"id": case["id"], "rc": rc, "stderr": buf_err.getvalue()[-4000:]}), file=out, flush=True)


if __name__ == "__main__":
    _limit_memory(float(sys.argv[2]) if len(sys.argv) > 2 else 3.0)
    _worker(sys.argv[1])
