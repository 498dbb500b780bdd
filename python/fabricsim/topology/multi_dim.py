"""The `multi_dim` topology family: ASTRA-sim's multi-dimensional networks, each dimension a ring, fully connected or a switch per group of NPUs, routed dimension by dimension.

An ASTRA-sim network configuration (`topology: [Ring, Switch]`, `npus_count`, `bandwidth` in GB/s, `latency` in
ns) is read as this family by `fabricsim.spec.read_document` (the engine's `scenario/astra.rs`), so a `.yml` file
works wherever a fabric does (`--fabric Ring_8npus.yml`).
"""

from __future__ import annotations

from typing import Literal

from ..spec.base import LinkRate, PositiveInt, _Model
from ..spec.network import Network
from ..units import Duration
from .base import BuiltTopology, family_network


class Dimension(_Model):
    """One dimension of a `multi_dim` fabric: the NPUs that differ only in its coordinate form groups of `npus`,
    each joined as `shape` says with links of `rate` (each direction) and `delay`."""

    shape: Literal["ring", "fully_connected", "switch"]
    """"ring": each NPU linked to its two neighbours, with wrap-around (one link for 2 NPUs); "fully_connected": a
    link between every pair; "switch": every NPU linked to the group's switch (ASTRA-sim's Ring, FullyConnected,
    Switch)."""
    npus: PositiveInt
    """NPUs per group, at least 2 (the dimension's size)."""
    rate: LinkRate
    """Rate of each of the dimension's links, in each direction."""
    delay: Duration = 0
    """Propagation delay of each of the dimension's links (a switch dimension's path crosses two)."""


class MultiDimTopology(BuiltTopology):
    """NPUs on a grid of `dims` (dimension 0 fastest: NPU i sits at coordinate i mod n0 of dimension 0, i div n0
    mod n1 of dimension 1, ..., as ASTRA-sim numbers them). NPU i is host `npu{i}` on its own router `npu{i}.r`
    (an ASTRA-sim NPU forwards, a fabricsim host does not), which holds its links of every dimension; a switched
    dimension's groups have switches `d{k}.sw{g}`, g numbered in the order of the group's first NPU. Routing is
    dimension order (`DimensionOrderPolicy`), as ASTRA-sim's analytical backend routes: the first differing
    coordinate is corrected first, around a ring the shorter way (clockwise, towards larger coordinates, on a
    tie), through a group's switch, or directly when fully connected."""

    kind: Literal["multi_dim"]
    dims: list[Dimension]
    """The dimensions, first (fastest) first, e.g. [{shape = "switch", npus = 8, rate = "3.2Tbps"}, {shape =
    "ring", npus = 4, rate = "400Gbps", delay = "1us"}]."""
    npu_rate: LinkRate | None = None
    """Rate of each NPU's link to its router (no delay). Default: the sum of the NPU's links of every dimension
    (2 per ring, 1 per ring of 2, n − 1 fully connected, 1 to a switch), so it carries whatever they do at
    once."""


def multi_dim(dims: list[dict], npu_rate: int | str | None = None, switch_latency: int | str = 0,
              switch_model: str = "output_queued", input_buffer: int | str = 128 * 1024) -> Network:
    """A multi-dimensional fabric (see MultiDimTopology for names): `dims` a list of {shape, npus, rate, delay}.

    Nodes: hosts npu0..npuN−1, their routers in the same order, then the switches dimension by dimension.
    Links: host–router, then dimension by dimension, each router in NPU order to its next ring neighbour
    (coordinate + 1 mod n; for n = 2 from coordinate 0 only), to every member of its group with a larger
    coordinate, or to its group's switch. N + Σ_dims N/n·(n for a ring or switch, 1 for a ring of 2, n(n−1)/2
    fully connected) links. O(nodes + links)."""
    return family_network("multi_dim", locals())
