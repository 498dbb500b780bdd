"""Workload: messages, barriers, compute steps and collectives built in bulk as numpy columns, handed to the engine in one call.

A `Workload` is bound to a scenario (it resolves node names against its network). Every method appends in
bulk from arrays or scalars and returns *references*: uint32 ids that other rows may wait for (`after=`).
A reference encodes its kind in its top two bits (message delivered, message fully sent, barrier, compute
step), so a reference array can mix kinds. Units are explicit in the argument names: sizes in bytes,
times in picoseconds (`start_ps`, `delay_ps`, `duration_ps`).

Validation happens once, in the engine, over the columns; an error names the row (`messages[12345].dst`).
Name resolution happens here, vectorized: an unknown node name is reported with its row.
"""

from __future__ import annotations

from typing import Any, Iterable, NamedTuple, Sequence

import numpy as np

from .errors import ArgumentError, ScenarioError, SpecError
from .spec.base import bulk

U32 = np.uint32
_MSG, _SENT, _BARRIER, _COMPUTE = 0, 1 << 30, 2 << 30, 3 << 30
_INDEX = (1 << 30) - 1
NONE = np.iinfo(np.uint32).max

KINDS = ("all_to_all", "all_gather", "all_reduce", "reduce_scatter", "broadcast", "reduce")
ALGORITHMS = ("ring", "direct", "halving_doubling", "shift", "hierarchical")
ORDERS = ("sent", "delivered", "parallel")
DEFAULT_ALGORITHM = {"all_to_all": "direct"}
"""The algorithm a collective uses when none is given: ring, except all-to-all (direct)."""


class Deps(NamedTuple):
    """Dependencies of n rows in CSR form: `counts[i]` references of row i, all rows' references in `flat`."""

    counts: np.ndarray
    flat: np.ndarray


def sent(refs) -> np.ndarray:
    """Turn message references into "fully sent" references: wait until the message's last packet has been
    handed to its NIC, not until it is delivered."""
    r = np.asarray(refs, dtype=np.uint32)
    if np.any(r >> 30 != 0):
        raise ValueError("sent(): only message references can be waited for as sent")
    return r | U32(_SENT)


class Workload:
    """Columns of messages, barriers and compute steps over the network of `scenario`, starting with the
    scenario's own `[[messages]]`, `[[barriers]]`, `[[compute]]` and `[[collectives]]` (lowered by the engine's
    reader, `Scenario.columns()`).

    Cost: appending n rows is O(n) numpy work; `columns()` concatenates once. Memory ≈ 60 bytes per message
    plus 4 bytes per dependency."""

    def __init__(self, scenario):
        if not (callable(getattr(scenario, "columns", None)) and hasattr(scenario, "topology")):
            raise ArgumentError("scenario", f"expected a fabricsim.Scenario, got {type(scenario).__name__}")
        bulk(self._init)(scenario)

    def _init(self, scenario) -> None:
        """`__init__` with the cyclic collector paused (a large fabric's node list is ~10^5 objects)."""
        self._scenario = scenario
        self._nodes_of: tuple[list[str], np.ndarray] | None = None
        self._at: dict[str, int] | None = None
        self._m: dict[str, list[np.ndarray]] = {k: [] for k in
                                                 ("src", "src_nic", "dst", "dst_nic", "size", "packet", "header",
                                                  "start_ps", "delay_ps", "path")}
        self._n_msgs = 0
        self._n_barriers = 0
        self._compute_host: list[np.ndarray] = []
        self._compute_ps: list[np.ndarray] = []
        self._n_compute = 0
        # Dependencies per kind, as (row counts, flat refs) chunks in row order.
        self._deps: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {"msg": [], "barrier": [], "compute": []}
        self._streams: dict[int, int] = {}
        self._names: list[str] = []
        self._named: dict[str, list[tuple[int, int, int]]] = {"msg": [], "barrier": [], "compute": []}
        self._used: set[str] | None = None  # the names in use, built on the first naming
        self._paths: list[Sequence[int]] = []
        self._seeded_names: dict[str, np.ndarray] = {}
        self._scenario_rows = (id(scenario.messages), id(scenario.barriers), id(scenario.compute), id(scenario.collectives))
        if scenario.has_workload_rows or scenario.streams:
            self._seed(scenario.columns())
        self.n_own = self.n_added

    @property
    def _node_names(self) -> list[str]:
        """The network's node names in index order (the network is built when rows are first added by name)."""
        return self._network_nodes()[0]

    @property
    def _host(self) -> np.ndarray:
        """Whether each node is a host."""
        return self._network_nodes()[1]

    def _network_nodes(self) -> tuple[list[str], np.ndarray]:
        if self._nodes_of is None:
            nodes = bulk(self._scenario.topology.network)().nodes
            self._nodes_of = ([n.name for n in nodes], np.array([n.kind == "host" for n in nodes], dtype=bool))
        return self._nodes_of

    # ---- resolution -----------------------------------------------------------------------------------

    def _nodes(self, v, field: str, n: int, base: int = 0) -> np.ndarray:
        """Node names or indices → uint32 indices of length n; unknown names name their row. `field` is
        "kind.key" and a bad row r is reported as `kind[base + r].key`."""
        kind, _, key = field.partition(".")
        row_field = lambda r: f"{kind}[{base + r}].{key}" if key else f"{kind}[{base + r}]"  # noqa: E731
        a = np.asarray(v)
        if a.ndim == 0:
            a = np.full(n, a.item() if a.dtype.kind in "iu" else a.item(), dtype=a.dtype if a.dtype.kind in "iu" else object)
        if len(a) != n:
            raise self._err(f"{field}", f"has {len(a)} rows; expected {n}")
        if a.dtype.kind in "iu":
            if n and (a.min() < 0 or a.max() >= len(self._node_names)):
                row = int(np.argmax((a < 0) | (a >= len(self._node_names))))
                raise self._err(row_field(row), f"node index {a[row]} out of range (0..{len(self._node_names)})")
            return a.astype(U32)
        at = self._name_index()
        idx = np.fromiter((at.get(x, -1) for x in a.tolist()), dtype=np.int64, count=len(a))
        if n and idx.min() < 0:
            row = int(np.argmax(idx < 0))
            raise self._err(row_field(row), f"unknown node {str(a[row])!r}")
        return idx.astype(U32)

    def _name_index(self) -> dict[str, int]:
        """Node name → index, built once."""
        if self._at is None:
            self._at = {n: i for i, n in enumerate(self._node_names)}
        return self._at

    def _err(self, field: str, reason: str) -> ScenarioError:
        return ScenarioError(self._scenario.source, field, reason)

    def _ints(self, v, field: str, n: int, dtype, default=None, base: int = 0) -> np.ndarray:
        """An integer column (scalar broadcast), non-negative and within dtype; errors name the row
        (`kind[base + r].key` for `field` = "kind.key")."""
        kind, _, key = field.partition(".")
        row_field = lambda r: f"{kind}[{base + r}].{key}"  # noqa: E731
        if v is None:
            v = default
        a = np.asarray(v)
        if a.ndim == 0:
            a = np.full(n, a.item())
        if len(a) != n:
            raise self._err(field, f"has {len(a)} rows; expected {n}")
        if a.dtype.kind not in "iu" and not (a.dtype.kind == "f" and n and np.all(np.mod(a, 1) == 0)) and n:
            raise self._err(field, f"expected integers, got dtype {a.dtype}")
        if n:
            if a.min() < 0:
                row = int(np.argmax(a < 0))
                raise self._err(row_field(row), f"must be >= 0, got {a[row]}")
            if a.max() > np.iinfo(dtype).max:
                row = int(np.argmax(a > np.iinfo(dtype).max))
                raise self._err(row_field(row), f"{a[row]} is too large")
        return a.astype(dtype)

    def _refs(self, after, field: str, n: int, sent_only: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Per-row dependencies → (counts per row, flat refs). `after` is None, one reference (all rows wait
        for it), a 1-D array of one reference per row (NONE = no dependency), or a sequence of per-row
        sequences, or a CSR pair `Deps(counts, flat)` (counts per row, flat references)."""
        if after is None:
            return np.zeros(n, dtype=U32), np.zeros(0, dtype=U32)
        if isinstance(after, Deps):
            if len(after.counts) != n or int(after.counts.sum()) != len(after.flat):
                raise self._err(field, f"CSR dependencies do not match the {n} rows")
            counts, flat = after.counts.astype(U32), after.flat.astype(U32)
            if sent_only:
                if (flat >> 30 != 0).any():
                    raise self._err(field, "after_sent takes message references only")
                flat = flat | U32(_SENT)
            return counts, flat
        if isinstance(after, (int, np.integer)):
            counts = np.ones(n, dtype=U32)
            flat = np.full(n, after, dtype=U32)
        else:
            a = after if isinstance(after, np.ndarray) else None
            if a is None:
                try:
                    a = np.asarray(after, dtype=np.int64)
                    if a.ndim != 1:
                        a = None
                except (ValueError, TypeError):
                    a = None
            if a is not None and a.ndim == 1:
                if len(a) != n:
                    raise self._err(field, f"has {len(a)} rows; expected {n}")
                a = a.astype(np.int64)
                keep = a != NONE
                counts = keep.astype(U32)
                flat = a[keep].astype(U32)
            else:
                rows = list(after)
                if len(rows) != n:
                    raise self._err(field, f"has {len(rows)} rows; expected {n}")
                counts = np.fromiter((len(r) for r in rows), dtype=U32, count=n)
                flat = np.fromiter((x for r in rows for x in r), dtype=np.int64).astype(U32)
        if sent_only:
            bad = flat >> 30 != 0
            if bad.any():
                raise self._err(field, "after_sent takes message references only")
            flat = flat | U32(_SENT)
        return counts, flat

    # ---- building -------------------------------------------------------------------------------------

    def messages(self, src, dst, size, *, src_nic=0, dst_nic=0, packet_size=1024, header=0, start_ps=0, delay_ps=0,
                 after=None, after_sent=None, paths: Sequence[Sequence[int] | None] | None = None,
                 names: Sequence[str] | None = None) -> np.ndarray:
        """Append messages (one per element of `size`; scalars broadcast). `src`/`dst` are node names or
        indices; `size` payload bytes; `packet_size` payload bytes per packet; `header` bytes per packet.
        A message starts `delay_ps` after the later of `start_ps` and its dependencies (`after`: references
        it waits to be delivered/completed; `after_sent`: message references it waits to be fully sent).
        `paths` gives each row an explicit path (node indices from source host to destination host, or None
        for the forwarding tables). Returns the new messages' references."""
        size_a = np.asarray(size)
        lens = [len(x) for x in (size_a, np.asarray(src, dtype=object), np.asarray(dst, dtype=object)) if x.ndim == 1]
        n = lens[0] if lens else 1
        base = self._n_msgs
        f = f"messages[{base}:]"
        new: dict[str, np.ndarray] = {}
        new["size"] = self._ints(size_a, "messages.size", n, np.uint64, base=base)
        new["src"] = self._nodes(src, "messages.src", n, base)
        new["dst"] = self._nodes(dst, "messages.dst", n, base)
        new["src_nic"] = self._ints(src_nic, "messages.src_nic", n, U32, base=base)
        new["dst_nic"] = self._ints(dst_nic, "messages.dst_nic", n, U32, base=base)
        new["packet"] = self._ints(packet_size, "messages.packet_size", n, U32, base=base)
        new["header"] = self._ints(header, "messages.header", n, U32, base=base)
        new["start_ps"] = self._ints(start_ps, "messages.start_ps", n, np.uint64, base=base)
        new["delay_ps"] = self._ints(delay_ps, "messages.delay_ps", n, np.uint64, base=base)
        new["path"] = np.full(n, NONE, dtype=U32)
        new_paths: list[Sequence[int]] = []
        if paths is not None:
            paths = list(paths)
            if len(paths) != n:
                raise self._err("messages.paths", f"has {len(paths)} rows; expected {n}")
            for r, p in enumerate(paths):
                if p is not None:
                    new["path"][r] = len(self._paths) + len(new_paths)
                    new_paths.append(p)
        c1, r1 = self._refs(after, f + ".after", n)
        c2, r2 = self._refs(after_sent, f + ".after_sent", n, sent_only=True)
        if len(r2):
            counts = c1 + c2
            # Interleave per row: a row's delivered deps, then its sent deps.
            cum = lambda c: np.concatenate([np.zeros(1, np.int64), np.cumsum(c, dtype=np.int64)])  # noqa: E731
            o1, o2 = cum(c1), cum(c2)
            flat = np.empty(len(r1) + len(r2), dtype=U32)
            starts = cum(counts)[:-1]
            pos1 = np.repeat(starts, c1) + (np.arange(len(r1), dtype=np.int64) - np.repeat(o1[:-1], c1))
            pos2 = np.repeat(starts + c1, c2) + (np.arange(len(r2), dtype=np.int64) - np.repeat(o2[:-1], c2))
            flat[pos1] = r1
            flat[pos2] = r2
        else:
            counts, flat = c1, r1
        if names is not None and len(list(names)) != n:
            raise self._err("messages.names", f"has {len(list(names))} rows; expected {n}")
        for k, v in new.items():
            self._m[k].append(v)
        self._paths.extend(new_paths)
        self._deps["msg"].append((counts, flat))
        if names is not None:
            self._name("msg", base, names, n)
        self._n_msgs += n
        return np.arange(base, base + n, dtype=U32)

    def path(self, nodes: Sequence[str | int]) -> int:
        """Register an explicit path (node names or indices, from source host to destination host); returns
        its id for `set_paths`."""
        self._paths.append([int(x) for x in self._nodes(np.asarray(list(nodes), dtype=object if isinstance(nodes[0], str) else np.int64), "path", len(nodes))])
        return len(self._paths) - 1

    def set_paths(self, refs, path_ids) -> None:
        """Send the messages `refs` along explicit paths (ids from `path`)."""
        refs = np.asarray(refs, dtype=np.int64)
        ids = np.broadcast_to(np.asarray(path_ids, dtype=np.int64), refs.shape)
        col = np.concatenate(self._m["path"]) if len(self._m["path"]) > 1 else self._m["path"][0]
        col[refs] = ids
        self._m["path"] = [col]

    def barrier(self, after=(), name: str | None = None) -> int:
        """Append one barrier completing when every reference in `after` has; returns its reference."""
        refs = np.asarray(list(after) if not isinstance(after, np.ndarray) else after, dtype=np.int64).astype(U32)
        self._deps["barrier"].append((np.array([len(refs)], dtype=U32), refs))
        b = self._n_barriers
        if name is not None:
            self._name("barrier", b, [name], 1)
        self._n_barriers += 1
        return _BARRIER | b

    def barriers(self, after: "Sequence[Sequence[int]] | Deps") -> np.ndarray:
        """Append one barrier per row of `after` (lists of references, or a `Deps` CSR); returns their references."""
        n = len(after.counts) if isinstance(after, Deps) else len(after)
        counts, flat = self._refs(after if isinstance(after, Deps) else list(after), f"barriers[{self._n_barriers}:].after", n)
        self._deps["barrier"].append((counts, flat))
        b = self._n_barriers
        self._n_barriers += n
        return np.arange(b, b + n, dtype=U32) | U32(_BARRIER)

    def compute(self, host, duration_ps, *, after=None, names: Sequence[str] | None = None) -> np.ndarray:
        """Append compute steps (one per element of `duration_ps`): a delay local to `host` that messages,
        barriers and other steps may wait for. A host runs one step at a time unless `streams` says more;
        ready steps wait in workload order. Returns the steps' references."""
        d = np.asarray(duration_ps)
        n = 1 if d.ndim == 0 else len(d)
        hosts = self._nodes(host, "compute.host", n, self._n_compute)
        if n and not self._host[hosts].all():
            row = int(np.argmax(~self._host[hosts]))
            raise self._err(f"compute[{self._n_compute + row}].host", f"'{self._node_names[hosts[row]]}' is a switch; compute runs on hosts")
        self._compute_host.append(hosts)
        self._compute_ps.append(self._ints(d, "compute.duration_ps", n, np.uint64, base=self._n_compute))
        self._deps["compute"].append(self._refs(after, f"compute[{self._n_compute}:].after", n))
        base = self._n_compute
        if names is not None:
            self._name("compute", base, names, n)
        self._n_compute += n
        return (np.arange(base, base + n, dtype=U32) | U32(_COMPUTE))

    def streams(self, host, count: int) -> None:
        """Let `host` run `count` compute steps at once (default 1)."""
        h = int(self._nodes(host, "streams.host", 1)[0])
        if count < 1:
            raise self._err("streams.count", f"must be >= 1, got {count}")
        self._streams[h] = int(count)

    def collective(self, kind: str, ranks: Iterable, size: int, *, algorithm: str | None = None, packet_size: int = 1024,
                   header: int = 0, chunks: int = 1, order: str | None = None, ag_order: str | None = None,
                   barrier: bool = False, root: int = 0, start_ps: int = 0, after=None, local: int = 0,
                   inter: str = "ring") -> int:
        """Append a collective generated in the engine: `kind` over `ranks` (endpoints: node name, or
        (node, nic) pairs), `size` bytes per rank (docs/guide/collectives.md lists each kind and algorithm).
        `algorithm` defaults to ring (direct for all_to_all). Returns a barrier reference completing when
        every message of the collective is delivered."""
        algorithm = algorithm or DEFAULT_ALGORITHM.get(kind, "ring")
        ranks = list(ranks)
        pairs = [(r, 0) if isinstance(r, (str, int, np.integer)) else tuple(r) for r in ranks]
        names = np.asarray([p[0] for p in pairs], dtype=object if any(isinstance(p[0], str) for p in pairs) else np.int64)
        nodes = self._nodes(names, "collective.ranks", len(pairs))
        eps = [(int(v), int(p[1])) for v, p in zip(nodes.tolist(), pairs)]
        spec = {"kind": kind, "algorithm": algorithm, "ranks": eps, "size_bytes": int(size), "packet_bytes": int(packet_size),
                "header_bytes": int(header), "chunks": int(chunks), "order": order, "ag_order": ag_order,
                "barrier": bool(barrier), "root": int(root), "start_ps": int(start_ps), "local": int(local),
                "inter": inter,
                "after": [int(x) for x in np.atleast_1d(np.asarray(after if after is not None else [], dtype=np.int64))]}
        from . import _core

        try:
            cols = _core.expand_collective(_json(spec), self._n_msgs, self._n_barriers, self._n_compute)
        except SpecError as e:
            where = f"collective ({kind}, {algorithm})"
            raise self._err(e.field.replace("collectives[0]", where) if e.field else where, e.reason) from None
        n = len(cols["size"])
        m0 = self._n_msgs
        for k in ("src", "src_nic", "dst", "dst_nic", "size", "packet", "header", "start_ps", "delay_ps", "path"):
            self._m[k].append(cols[k])
        ps, pred = cols["pred_start"], cols["pred"]
        counts = np.diff(ps).astype(U32)
        self._deps["msg"].append((counts[:n], pred[: ps[n]]))
        nb = int(cols["n_barriers"])
        for j in range(nb):
            self._deps["barrier"].append((counts[n + j: n + j + 1], pred[ps[n + j]: ps[n + j + 1]]))
        self._n_msgs += n
        self._n_barriers += nb
        return self.barrier(np.arange(m0, m0 + n, dtype=U32))

    def collective_many(self, kind: str, ranks: Iterable, size: int, after: Deps, *, algorithm: str | None = None,
                        packet_size: int = 1024, header: int = 0, chunks: int = 1, order: str | None = None,
                        barrier: bool = False, root: int = 0) -> tuple[np.ndarray, int]:
        """Append len(after.counts) copies of one collective, copy q waiting for row q of `after`: the engine
        expands it once and the copies are tiled with numpy (O(copies × its size), no Python per copy).
        Returns (first message of each copy, messages per copy). No completion barrier is appended."""
        algorithm = algorithm or DEFAULT_ALGORITHM.get(kind, "ring")
        k = len(after.counts)
        ranks = list(ranks)
        pairs = [(r, 0) if isinstance(r, (str, int, np.integer)) else tuple(r) for r in ranks]
        names = np.asarray([p[0] for p in pairs], dtype=object if any(isinstance(p[0], str) for p in pairs) else np.int64)
        nodes = self._nodes(names, "collective.ranks", len(pairs))
        spec = {"kind": kind, "algorithm": algorithm, "ranks": [(int(v), int(p[1])) for v, p in zip(nodes.tolist(), pairs)],
                "size_bytes": int(size), "packet_bytes": int(packet_size), "header_bytes": int(header), "chunks": int(chunks),
                "order": order, "barrier": bool(barrier), "root": int(root), "after": [_COMPUTE]}
        from . import _core

        try:
            cols = _core.expand_collective(_json(spec), 0, 0, 0)
        except SpecError as e:
            raise self._err(f"collective ({kind}, {algorithm})", e.reason) from None
        nm, nb = len(cols["size"]), int(cols["n_barriers"])
        ps, pred = cols["pred_start"].astype(np.int64), cols["pred"].astype(np.int64)
        m_base = self._n_msgs + nm * np.arange(k, dtype=np.int64)
        b_base = self._n_barriers + nb * np.arange(k, dtype=np.int64)

        def shifted(refs: np.ndarray) -> np.ndarray:
            """Copies of internal references, copy q's offset by its own messages and barriers."""
            tag, idx = refs >> 30, refs & _INDEX
            t, i = np.tile(tag, k), np.tile(idx, k)
            off = np.where(t <= 1, np.repeat(m_base, len(refs)), np.repeat(b_base, len(refs)))
            return ((t << 30) | (i + off)).astype(U32)

        for key in ("src", "src_nic", "dst", "dst_nic", "size", "packet", "header", "start_ps", "delay_ps", "path"):
            self._m[key].append(np.tile(cols[key], k))
        self._deps["msg"].append((np.tile(np.diff(ps[: nm + 1]), k).astype(U32), shifted(pred[: ps[nm]])))
        # Barrier rows: the entry barrier (row 0) takes each copy's own dependencies; the rest are internal.
        bcounts = np.diff(ps[nm:])
        internal = pred[ps[nm] + bcounts[0]:]
        acount = after.counts.astype(np.int64)
        cnt2d = np.tile(bcounts, (k, 1)).astype(np.int64)
        cnt2d[:, 0] = acount
        seg = acount + len(internal)
        seg_start = np.concatenate([np.zeros(1, np.int64), np.cumsum(seg)])[:-1]
        flat = np.empty(int(seg.sum()), dtype=U32)
        a_start = np.concatenate([np.zeros(1, np.int64), np.cumsum(acount)])[:-1]
        if len(after.flat):
            flat[np.repeat(seg_start, acount) + (np.arange(len(after.flat)) - np.repeat(a_start, acount))] = after.flat
        if len(internal):
            flat[np.repeat(seg_start + acount, len(internal)) + np.tile(np.arange(len(internal)), k)] = shifted(internal)
        self._deps["barrier"].append((cnt2d.ravel().astype(U32), flat))
        self._n_msgs += nm * k
        self._n_barriers += nb * k
        return m_base, nm

    def _reserve_barrier_block(self, n: int) -> int:
        """Append n barriers whose dependencies are set later by replacing the returned chunk."""
        self._deps["barrier"].append((np.zeros(n, dtype=U32), np.zeros(0, dtype=U32)))
        self._n_barriers += n
        return len(self._deps["barrier"]) - 1

    def _name(self, kind: str, base: int, names: Sequence[str], n: int) -> None:
        """Name rows base..base+n of `kind`; a name is a non-empty string used once across messages, barriers
        and compute steps (the scenario's own included), as in a scenario file. O(n) after the first call's
        O(named rows)."""
        names = list(names)
        table = {"msg": "messages", "barrier": "barriers", "compute": "compute"}[kind]
        if len(names) != n:
            raise self._err(f"{table}.names", f"has {len(names)} rows; expected {n}")
        if self._used is None:
            self._used = {self._names[int(k)] for col in self._seeded_names.values() for k in col[col != NONE].tolist()}
            self._used.update(self._names[k0 + i] for rows in self._named.values() for _, k0, cnt in rows
                              for i in range(cnt))
        for i, x in enumerate(names):
            if not isinstance(x, str) or not x:
                raise self._err(f"{table}[{base + i}].name", f"expected a non-empty string, got {x!r}")
            if x in self._used:
                raise self._err(f"{table}[{base + i}].name", f"'{x}' already names another message, barrier or "
                                "compute step")
            self._used.add(x)
        k0 = len(self._names)
        self._names.extend(names)
        self._named[kind].append((base, k0, n))

    # ---- the scenario's own rows ----------------------------------------------------------------------

    def _seed(self, c: dict[str, Any]) -> None:
        """Start from the scenario's own rows as the engine's reader lowered them (`_core.scenario_columns`):
        messages, then barriers (a named collective's completion barrier among them), then compute steps, the
        collectives' own messages, streams, paths and names. Rows appended later continue their numbering.
        O(rows)."""
        n_m, n_b, n_c = int(c["n_messages"]), int(c["n_barriers"]), int(c["n_compute"])
        for k in self._m:
            self._m[k].append(c[k])
        self._n_msgs, self._n_barriers, self._n_compute = n_m, n_b, n_c
        self._compute_host.append(c["compute_host"])
        self._compute_ps.append(c["compute_ps"])
        self._streams = dict(zip(c["streams_host"].tolist(), c["streams_count"].tolist()))
        ps, pred = c["pred_start"], c["pred"]
        counts = np.diff(ps).astype(U32) if len(ps) else np.zeros(n_m + n_b + n_c, dtype=U32)
        for kind, lo, hi in (("msg", 0, n_m), ("barrier", n_m, n_m + n_b), ("compute", n_m + n_b, n_m + n_b + n_c)):
            if hi > lo:
                flat = pred[ps[lo]:ps[hi]] if len(ps) else np.zeros(0, dtype=U32)
                self._deps[kind].append((counts[lo:hi], flat))
        starts = c["path_start"]
        self._paths = [c["path_nodes"][starts[k]:starts[k + 1]].tolist() for k in range(len(starts) - 1)]
        self._names = list(c["names"])
        self._seeded_names = {kind: c[key] for kind, key in (("msg", "msg_name"), ("barrier", "barrier_name"),
                                                              ("compute", "compute_name")) if len(c[key])}

    # ---- hand-over ------------------------------------------------------------------------------------

    @property
    def n_messages(self) -> int:
        return self._n_msgs

    @property
    def n_added(self) -> int:
        """Rows of every kind appended so far (a cached scenario workload is reused only while unchanged)."""
        return self._n_msgs + self._n_barriers + self._n_compute + len(self._streams)

    def belongs_to(self, scenario) -> bool:
        """Whether this workload was built on `scenario` (or a copy differing only in seed or fidelity)."""
        rows = (id(scenario.messages), id(scenario.barriers), id(scenario.compute), id(scenario.collectives))
        return rows == self._scenario_rows and scenario.topology == self._scenario.topology

    def columns(self) -> dict[str, Any]:
        """The columns the engine reads (numpy arrays of fixed dtypes; see `fabricsim._core.run`)."""
        cat = lambda chunks, dt: np.concatenate(chunks).astype(dt, copy=False) if chunks else np.zeros(0, dtype=dt)  # noqa: E731
        out: dict[str, Any] = {}
        dts = {"src": U32, "src_nic": U32, "dst": U32, "dst_nic": U32, "size": np.uint64, "packet": U32,
               "header": U32, "start_ps": np.uint64, "delay_ps": np.uint64, "path": U32}
        for k, dt in dts.items():
            out[k] = cat(self._m[k], dt)
        out["n_barriers"] = self._n_barriers
        out["compute_host"] = cat(self._compute_host, U32)
        out["compute_ps"] = cat(self._compute_ps, np.uint64)
        out["streams_host"] = np.fromiter(self._streams.keys(), dtype=U32, count=len(self._streams))
        out["streams_count"] = np.fromiter(self._streams.values(), dtype=U32, count=len(self._streams))
        counts = [c for kind in ("msg", "barrier", "compute") for c, _ in self._deps[kind]]
        flats = [f for kind in ("msg", "barrier", "compute") for _, f in self._deps[kind]]
        if any(len(f) for f in flats):
            ps = np.zeros(self._n_msgs + self._n_barriers + self._n_compute + 1, dtype=np.uint64)
            np.cumsum(cat(counts, np.uint64), out=ps[1:])
            if ps[-1] > np.iinfo(U32).max:
                raise self._err("workload", "more than 2^32 dependencies")
            out["pred_start"] = ps.astype(U32)
            out["pred"] = cat(flats, U32)
        if self._paths:
            out["path_start"] = np.concatenate([[0], np.cumsum([len(p) for p in self._paths])]).astype(U32)
            out["path_nodes"] = np.fromiter((x for p in self._paths for x in p), dtype=U32, count=int(out["path_start"][-1]))
        if self._names:
            out["names"] = self._names
            for kind, total, key in (("msg", self._n_msgs, "msg_name"), ("barrier", self._n_barriers, "barrier_name"),
                                     ("compute", self._n_compute, "compute_name")):
                if self._named[kind] or kind in self._seeded_names:
                    col = np.full(total, NONE, dtype=U32)
                    seeded = self._seeded_names.get(kind)
                    if seeded is not None:
                        col[:len(seeded)] = seeded
                    for base, k0, cnt in self._named[kind]:
                        col[base: base + cnt] = np.arange(k0, k0 + cnt, dtype=U32)
                    out[key] = col
        return out


def _json(d: dict) -> str:
    import json

    return json.dumps(d)
