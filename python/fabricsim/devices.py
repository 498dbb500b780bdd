"""Accelerators for the roofline compute model: peak dense BF16 FLOP/s, HBM bandwidth and capacity, each with its source.

One table (`DEVICES`), read by the Chakra lowering (`fabricsim.chakra`) and the training-step model
(`fabricsim.train`). Figures are the vendors' datasheet values for dense (not 2:4 sparse) BF16 Tensor Core
math; what a kernel achieves is a separate efficiency, given where the device is used.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Device:
    """A GPU for the roofline model: peak dense BF16 FLOP/s, memory bandwidth (bytes/s) and memory (bytes), with
    the source of the figures."""

    name: str
    peak_flops: float
    mem_bw: float
    source: str
    memory: float = 80e9

    def __post_init__(self) -> None:
        from .checks import fields

        fields(self, positive=("peak_flops", "mem_bw", "memory"))


GB = 1e9
DEVICES = {
    "h100": Device("h100", 989e12, 3.35e12, "NVIDIA H100 SXM5 datasheet: 989 TFLOPS dense BF16 Tensor Core, 3.35 TB/s HBM3, 80 GB", 80 * GB),
    "h200": Device("h200", 989e12, 4.8e12, "NVIDIA H200 SXM datasheet: 1,979 TFLOPS BF16 with sparsity (989 dense), 4.8 TB/s HBM3e, 141 GB", 141 * GB),
    "b200": Device("b200", 2.25e15, 8.0e12, "NVIDIA HGX B200 datasheet: 4.5 PFLOPS BF16 per GPU with sparsity (2.25 dense), 8 TB/s HBM3e, 180 GB", 180 * GB),
    "a100": Device("a100", 312e12, 2.039e12, "NVIDIA A100 80GB SXM datasheet: 312 TFLOPS dense BF16 Tensor Core, 2,039 GB/s HBM2e, 80 GB", 80 * GB),
    "mi300x": Device("mi300x", 1307.4e12, 5.3e12, "AMD Instinct MI300X datasheet: 1,307.4 TFLOPS dense BF16, 5.3 TB/s HBM3, 192 GB", 192 * GB),
}
"""Device presets by name (`--device NAME`)."""


def device(name: str) -> Device:
    """The preset `name`; ValueError naming the known ones otherwise."""
    try:
        return DEVICES[name]
    except KeyError:
        raise ValueError(f"unknown device '{name}' (known: {', '.join(DEVICES)})") from None
