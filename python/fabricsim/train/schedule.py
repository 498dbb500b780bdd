"""Pipeline schedules as Megatron-LM runs them: the order in which one pipeline stage runs its forward and backward
passes.

A pass is (micro_batch, chunk, backward): `chunk` is the model chunk on the stage (0 unless interleaved). With p
stages, m micro-batches and V chunks per stage, virtual stage `chunk·p + stage` holds layers
[vs·L/(p·V), (vs+1)·L/(p·V)); a forward of virtual stage vs needs the forward of vs − 1 of the same micro-batch,
a backward of vs needs the backward of vs + 1 (the last virtual stage's backward needs its own forward).

- `1f1b` (Megatron-LM `forward_backward_pipelining_without_interleaving`): stage s runs min(p − s − 1, m)
  warm-up forwards, then alternates one forward and one backward, then the remaining backwards. With uniform
  stages and free communication a step takes (m + p − 1)·(t_f + t_b) and each stage idles (p − 1)·(t_f + t_b):
  the bubble fraction (p − 1)/(m + p − 1).
- `interleaved` (`forward_backward_pipelining_with_interleaving`, V chunks): forwards walk the chunks in
  groups of p micro-batches (k-th forward: chunk (k mod p·V) div p, micro-batch (k div p·V)·p + k mod p);
  backwards the same with the chunks reversed; warm-up (p − s − 1)·2 + (V − 1)·p forwards (all of them if that
  is at least m·V). Megatron requires m to be a multiple of p. The bubble shrinks to (p − 1)/(V·m + p − 1) of
  a step (Narayanan et al. 2021, §2.2.2).
"""

from __future__ import annotations

from typing import NamedTuple


class Pass(NamedTuple):
    micro_batch: int
    chunk: int
    backward: bool


def one_f_one_b(stages: int, micro_batches: int, stage: int) -> list[Pass]:
    """Stage `stage`'s passes in 1F1B order (one chunk)."""
    p, m, s = stages, micro_batches, stage
    warm = min(p - s - 1, m)
    out = [Pass(i, 0, False) for i in range(warm)]
    f, b = warm, 0
    while f < m:
        out.append(Pass(f, 0, False))
        out.append(Pass(b, 0, True))
        f += 1
        b += 1
    out.extend(Pass(i, 0, True) for i in range(b, m))
    return out


def interleaved(stages: int, micro_batches: int, chunks: int, stage: int) -> list[Pass]:
    """Stage `stage`'s passes in Megatron's interleaved 1F1B order (V = `chunks` model chunks per stage)."""
    p, m, v, s = stages, micro_batches, chunks, stage
    total = m * v

    def fwd(k: int) -> Pass:
        in_group = k % (p * v)
        return Pass((k // (p * v)) * p + k % p, in_group // p, False)

    def bwd(k: int) -> Pass:
        in_group = k % (p * v)
        return Pass((k // (p * v)) * p + k % p, v - 1 - in_group // p, True)

    warm = min((p - s - 1) * 2 + (v - 1) * p, total)
    out = [fwd(k) for k in range(warm)]
    f, b = warm, 0
    while f < total:
        out.append(fwd(f))
        out.append(bwd(b))
        f += 1
        b += 1
    out.extend(bwd(k) for k in range(b, total))
    return out


def schedule(kind: str, stages: int, micro_batches: int, chunks: int, stage: int) -> list[Pass]:
    """The passes of `stage` under `kind` ("1f1b" or "interleaved")."""
    if kind == "interleaved" and chunks > 1:
        return interleaved(stages, micro_batches, chunks, stage)
    return one_f_one_b(stages, micro_batches, stage)
