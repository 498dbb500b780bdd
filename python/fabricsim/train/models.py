"""Transformer models for the training-step model: presets named as engineers write them, or a small TOML file.

A model is a stack of `layers` decoder layers of hidden size h, with `heads` query heads and `kv_heads` key/value
heads of `head_dim` (h / heads by default), an MLP of hidden size `ffn` (SwiGLU: three h×ffn matrices; GELU:
two), an untied `vocab`×h output layer, and optionally a mixture of experts: `experts` routed experts of hidden
size `expert_ffn`, `top_k` of them per token, `shared_experts` always active, in every layer but the first
`dense_layers`.

Arithmetic (per token, forward; a backward pass costs twice its forward, Megatron-LM's convention; biases,
norms and the softmax are neglected):
- attention: Q and output projections 2·h·(heads·head_dim) parameters, K and V 2·h·(kv_heads·head_dim); the
  scores and their weighted sum over s tokens 4·s·heads·head_dim FLOPs (the full s×s product, as Narayanan et
  al. count it, not the causal half);
- MLP: 3·h·ffn parameters (SwiGLU) or 2·h·ffn (GELU); MoE: the router h·experts, and top_k + shared_experts
  experts of 3·h·expert_ffn each are active;
- output layer: h·vocab parameters;
- FLOPs = 2 × active parameters + the attention scores.
For GPT-3's shapes (ffn = 4h, heads·head_dim = h, GELU, no MoE) the model FLOPs of a step of B sequences
reduce to Narayanan et al. (SC'21, eq. 3 without recomputation): 72·B·s·l·h²·(1 + s/(6h) + V/(12·l·h));
tests/test_train.py checks it.

Sources of the presets: GPT-3 — Brown et al. 2020, Table 2.1 (13B's d_model is printed as 5140; 40 heads × 128 is
5120, which Megatron-LM's GPT-3 13B configuration uses; 1.3B's 24 heads × 128 is not its d_model 2048: 16 heads of
128, as Megatron-LM's 1.3B configuration); Llama 2 — Touvron et al. 2023 and the released
config.json files; Llama 3 / 3.1 — the released config.json files (8B, 70B, 405B); Mixtral 8x7B — Jiang et al.
2024 and its config.json; DeepSeek-V3 — DeepSeek-AI 2024 (arXiv:2412.19437) and its config.json, with
multi-head latent attention replaced by standard attention of the same hidden size and head count (4·h² = 205.5M
attention parameters per layer against MLA's 187M, +10%): hence "DeepSeek-V3-like".
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, fields, replace
from pathlib import Path

from ..errors import UserError


@dataclass(frozen=True)
class ModelSpec:
    """A decoder-only transformer (see the module docstring for the arithmetic). `seq_len` is the preset's
    training context, which `--seq-len` overrides."""

    name: str
    layers: int
    hidden: int
    ffn: int
    heads: int
    kv_heads: int
    vocab: int
    seq_len: int = 2048
    head_dim: int = 0
    """0: hidden / heads."""
    swiglu: bool = True
    experts: int = 0
    """Routed experts (0: a dense model)."""
    top_k: int = 0
    expert_ffn: int = 0
    shared_experts: int = 0
    dense_layers: int = 0
    """The first `dense_layers` layers of an MoE model have a dense MLP of size `ffn`."""
    source: str = ""

    @property
    def dh(self) -> int:
        return self.head_dim or self.hidden // self.heads

    @property
    def moe(self) -> bool:
        return self.experts > 0

    @property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers if self.moe else 0

    # ---- parameters ---------------------------------------------------------------------------------------

    @property
    def attention_params(self) -> int:
        """Q, K, V and output projections: 2·h·heads·dh + 2·h·kv_heads·dh."""
        return 2 * self.hidden * self.dh * (self.heads + self.kv_heads)

    def mlp_params(self, ffn: int) -> int:
        return (3 if self.swiglu else 2) * self.hidden * ffn

    @property
    def dense_mlp_params(self) -> int:
        return self.mlp_params(self.ffn)

    @property
    def expert_params(self) -> int:
        """One expert's parameters."""
        return self.mlp_params(self.expert_ffn)

    @property
    def router_params(self) -> int:
        return self.hidden * self.experts

    @property
    def params(self) -> int:
        """Every parameter: the layers, the input embedding and the (untied) output layer."""
        dense = self.layers - self.moe_layers
        moe = self.moe_layers * (self.router_params + (self.experts + self.shared_experts) * self.expert_params)
        return self.layers * self.attention_params + dense * self.dense_mlp_params + moe + 2 * self.vocab * self.hidden

    @property
    def active_params(self) -> int:
        """Parameters a token passes through (the top_k routed and the shared experts of an MoE layer)."""
        dense = self.layers - self.moe_layers
        moe = self.moe_layers * (self.router_params + (self.top_k + self.shared_experts) * self.expert_params)
        return self.layers * self.attention_params + dense * self.dense_mlp_params + moe + 2 * self.vocab * self.hidden

    # ---- FLOPs per token, forward -------------------------------------------------------------------------

    def attention_flops(self, seq_len: int) -> int:
        """Per token: 2 × the projections' parameters + 4·s·heads·dh for the scores and their weighted sum."""
        return 2 * self.attention_params + 4 * seq_len * self.heads * self.dh

    @property
    def dense_mlp_flops(self) -> int:
        return 2 * self.dense_mlp_params

    @property
    def moe_mlp_flops(self) -> int:
        """Per token: the router and the top_k + shared experts."""
        return 2 * (self.router_params + (self.top_k + self.shared_experts) * self.expert_params)

    @property
    def head_flops(self) -> int:
        """The output layer, per token: 2·h·V."""
        return 2 * self.hidden * self.vocab

    def forward_flops_per_token(self, seq_len: int) -> int:
        """Every layer and the output layer, one token, forward."""
        dense = self.layers - self.moe_layers
        return (self.layers * self.attention_flops(seq_len) + dense * self.dense_mlp_flops
                + self.moe_layers * self.moe_mlp_flops + self.head_flops)

    def step_flops(self, global_batch: int, seq_len: int) -> int:
        """Model FLOPs of one training step (forward and backward, no recomputation): 3 × forward."""
        return 3 * global_batch * seq_len * self.forward_flops_per_token(seq_len)


def _gpt3(name: str, layers: int, hidden: int, heads: int) -> ModelSpec:
    return ModelSpec(name, layers, hidden, 4 * hidden, heads, heads, 50257, 2048, swiglu=False,
                     source="Brown et al. 2020, Table 2.1 (GPT-3), GELU MLP of 4h, vocabulary 50,257")


PRESETS: dict[str, ModelSpec] = {m.name: m for m in (
    _gpt3("gpt3-1.3b", 24, 2048, 16),
    _gpt3("gpt3-13b", 40, 5120, 40),
    _gpt3("gpt3-175b", 96, 12288, 96),
    ModelSpec("llama2-7b", 32, 4096, 11008, 32, 32, 32000, 4096, source="Llama 2 7B config.json"),
    ModelSpec("llama2-13b", 40, 5120, 13824, 40, 40, 32000, 4096, source="Llama 2 13B config.json"),
    ModelSpec("llama2-70b", 80, 8192, 28672, 64, 8, 32000, 4096, source="Llama 2 70B config.json (GQA, 8 KV heads)"),
    ModelSpec("llama3-8b", 32, 4096, 14336, 32, 8, 128256, 8192, source="Llama 3 8B config.json"),
    ModelSpec("llama3-70b", 80, 8192, 28672, 64, 8, 128256, 8192, source="Llama 3 70B config.json"),
    ModelSpec("llama3-405b", 126, 16384, 53248, 128, 8, 128256, 8192, source="Llama 3.1 405B config.json"),
    ModelSpec("mixtral-8x7b", 32, 4096, 14336, 32, 8, 32000, 4096, experts=8, top_k=2, expert_ffn=14336,
              source="Mixtral 8x7B config.json: 8 experts of 14,336, top-2, every layer"),
    ModelSpec("deepseek-v3", 61, 7168, 18432, 128, 128, 129280, 4096, experts=256, top_k=8, expert_ffn=2048,
              shared_experts=1, dense_layers=3,
              source="DeepSeek-V3 config.json: 256 routed experts of 2,048 + 1 shared, top-8, first 3 layers "
                     "dense (18,432); standard attention in place of MLA"),
)}
"""The model presets by name (`--model NAME`)."""

_INT_KEYS = ("layers", "hidden", "ffn", "heads", "kv_heads", "vocab", "seq_len", "head_dim", "experts", "top_k",
             "expert_ffn", "shared_experts", "dense_layers")
_REQUIRED = ("layers", "hidden", "ffn", "heads", "vocab")


def read_toml(p: Path, what: str) -> dict:
    """The TOML document at `p`; UserError naming the file (and `what` it should be) if it cannot be read."""
    try:
        return tomllib.loads(p.read_text())
    except OSError as e:
        raise UserError(f"{p}: cannot read the {what}: {e.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise UserError(f"{p}: not a TOML {what}: {e}") from None


def read_model(path: str | Path) -> ModelSpec:
    """A custom model from a TOML file: `layers`, `hidden`, `ffn`, `heads`, `vocab` (required), `kv_heads`
    (default heads), `seq_len` (2048), `head_dim` (hidden / heads), `swiglu` (true), `experts`, `top_k`,
    `expert_ffn` (default ffn), `shared_experts`, `dense_layers` (0), `name`. UserError naming the file and the
    key on anything else."""
    from ..checks import path as a_path

    path = a_path(path, "path")
    p = Path(path)
    doc = read_toml(p, "model file")
    known = set(_INT_KEYS) | {"swiglu", "name"}
    for k in doc:
        if k not in known:
            raise UserError(f"{p}: {k}: unknown key (a model takes {', '.join(sorted(known))})")
    for k in _REQUIRED:
        if k not in doc:
            raise UserError(f"{p}: {k}: missing (required: {', '.join(_REQUIRED)})")
    vals: dict = {}
    for k in _INT_KEYS:
        if k in doc:
            v = doc[k]
            if isinstance(v, bool) or not isinstance(v, int):
                raise UserError(f"{p}: {k}: expected a whole number, got {v!r}")
            if v < (0 if k in ("head_dim", "experts", "top_k", "shared_experts", "dense_layers") else 1):
                raise UserError(f"{p}: {k}: must be {'≥ 0' if k in ('head_dim', 'experts', 'top_k', 'shared_experts', 'dense_layers') else '≥ 1'}, got {v}")
            vals[k] = v
    if "swiglu" in doc and not isinstance(doc["swiglu"], bool):
        raise UserError(f"{p}: swiglu: expected true or false, got {doc['swiglu']!r}")
    name = doc.get("name", p.stem)
    if not isinstance(name, str) or not name:
        raise UserError(f"{p}: name: expected a non-empty string")
    vals.setdefault("kv_heads", vals["heads"])
    if vals.get("experts"):
        vals.setdefault("top_k", 1)
        vals.setdefault("expert_ffn", vals["ffn"])
    m = ModelSpec(name=name, swiglu=doc.get("swiglu", True), source=str(p), **vals)
    problem = check_model(m)
    if problem:
        raise UserError(f"{p}: {problem}")
    return m


def check_model(m: ModelSpec) -> str | None:
    """What is inconsistent in `m` ('key: reason'), or None."""
    if not m.head_dim and m.hidden % m.heads:
        return f"hidden: {m.hidden} is not divisible by heads ({m.heads}); give head_dim"
    if m.heads % m.kv_heads:
        return f"kv_heads: heads ({m.heads}) is not a multiple of kv_heads ({m.kv_heads})"
    if m.experts and not 1 <= m.top_k <= m.experts:
        return f"top_k: must be 1..experts ({m.experts}), got {m.top_k}"
    if m.dense_layers > m.layers:
        return f"dense_layers: {m.dense_layers} is more than layers ({m.layers})"
    return None


def model(name_or_path: str) -> ModelSpec:
    """A preset by name, or a model TOML file by path."""
    from ..checks import text

    name_or_path = str(name_or_path) if isinstance(name_or_path, Path) else text(name_or_path, "model")
    if name_or_path in PRESETS:
        return PRESETS[name_or_path]
    if name_or_path.endswith(".toml") or Path(name_or_path).exists():
        return read_model(name_or_path)
    raise UserError(f"--model: unknown model '{name_or_path}' (presets: {', '.join(PRESETS)}; or a model .toml file)")


def with_seq_len(m: ModelSpec, seq_len: int | None) -> ModelSpec:
    return m if seq_len is None else replace(m, seq_len=seq_len)


MODEL_FIELDS = tuple(f.name for f in fields(ModelSpec))
