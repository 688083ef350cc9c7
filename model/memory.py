"""Training memory in bytes: model states (ZeRO's count) and activations (Korthikanti's count).

A plain function of a transformer's shape and the training setup, nothing measured:

    mem = training_memory(Setup(layers=32, hidden=4096, heads=32, seq=2048, micro_batch=1, vocab=32000,
                                ffn=11008, mlp="swiglu", dropout=False))
    mem.total / 1e9      # GB per device: parameters + gradients + optimiser states + activations

Model states, per parameter (Rajbhandari et al. 2020, §3.1): mixed precision keeps 16-bit weights (2 B)
and 16-bit gradients (2 B) and, for the optimiser, a float32 master copy (4 B) plus 4 B per float32
moment: Adam's two moments make K = 12, so 2 + 2 + 12 = 16 bytes per parameter. In plain float32 the
weights and gradients take 4 B each and there is no master copy: Adam again 4 + 4 + 8 = 16. ZeRO stage
1 splits the optimiser states over the data-parallel ranks, stage 2 the gradients too, stage 3 the
weights too.

Activations, per layer (Korthikanti et al. 2022, §4), counted tensor by tensor as values kept from the
forward pass for the backward pass, s sequence length, b micro-batch, h width, a heads, f the
feed-forward's hidden width; a value takes `act_bytes` (2 in 16 bits), a dropout mask 1 byte:

    attention   input, q, k, v, the output projection's input      5 sbh values
                the softmax's output                                 as^2 b values
                with dropout: its mask and output (as^2 b each),     1 + 2 bytes per as^2 b
                              the output dropout's mask              1 byte per sbh
    MLP         input                                                sbh values
                GELU: its input and output                           2 sbf values
                SwiGLU: gate and up projections' outputs, product    3 sbf values (the SiLU recomputed)
                with dropout: its mask                               1 byte per sbh
    norms       the two norms' inputs                                2 sbh values

With 16-bit values, dropout and a GELU MLP of width 4h this is Korthikanti's sbh(34 + 5as/h): attention
11sbh + 5as^2 b, MLP 19sbh, norms 4sbh. Tensor parallelism over t ranks divides everything but the
norms' inputs, the attention and MLP inputs and the two dropout masks (10sbh in their units); sequence
parallelism divides those too. Selective recomputation drops the as^2 b terms (recomputed); full
recomputation keeps only each layer's input (sbh values, their 2sbh). The one layer being recomputed,
the embeddings, the logits and temporary buffers are not counted (the formula's convention).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

PRECISIONS = ("mixed", "fp32")
OPTIMISERS = ("adam", "momentum", "sgd")
CHECKPOINTING = ("none", "selective", "full")
MLPS = ("gelu", "swiglu")
GB = 1e9


@dataclass(frozen=True)
class Setup:
    """A transformer's shape and how it is trained (one device's share)."""

    layers: int
    hidden: int  # h
    heads: int  # a
    seq: int  # s
    micro_batch: int  # b
    vocab: int
    ffn: int | None = None  # the feed-forward's hidden width f; None: 4h
    mlp: str = "gelu"  # "gelu": two matrices; "swiglu": SiLU-gated, three matrices
    dropout: bool = True
    norm_gains: bool = True  # a gain vector per norm (LLaMA's RMSNorm; the toy Decoder has none)
    precision: str = "mixed"  # "mixed": 16-bit weights, gradients, activations + float32 master; "fp32"
    optimiser: str = "adam"  # "adam" (two moments), "momentum" (one), "sgd" (none)
    checkpointing: str = "none"  # "none", "selective" (attention's as^2 b recomputed), "full"
    data_parallel: int = 1  # N_d, ranks the ZeRO stages split the model states over
    zero: int = 0  # ZeRO stage 0 (plain data parallelism) to 3
    tensor_parallel: int = 1  # t
    sequence_parallel: bool = False

    def __post_init__(self) -> None:
        for name, value, allowed in (("precision", self.precision, PRECISIONS),
                                     ("optimiser", self.optimiser, OPTIMISERS),
                                     ("checkpointing", self.checkpointing, CHECKPOINTING),
                                     ("mlp", self.mlp, MLPS)):  # fmt: skip
            if value not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
        for name in ("layers", "hidden", "heads", "seq", "micro_batch", "vocab", "data_parallel", "tensor_parallel"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.zero not in (0, 1, 2, 3):
            raise ValueError(f"zero must be a ZeRO stage 0 to 3, got {self.zero}")
        if self.ffn is not None and self.ffn < 1:
            raise ValueError(f"ffn must be at least 1, got {self.ffn}")

    @property
    def f(self) -> int:
        return 4 * self.hidden if self.ffn is None else self.ffn


def parameters(su: Setup) -> int:
    """Ψ of a pre-norm decoder: attention 4h^2, the feed-forward's 2 (GELU) or 3 (SwiGLU) h x f
    matrices, no biases, two norm gains per layer and a final one (if any), untied embedding and head."""
    mats = 2 if su.mlp == "gelu" else 3
    gains = su.hidden if su.norm_gains else 0
    per_layer = 4 * su.hidden * su.hidden + mats * su.hidden * su.f + 2 * gains
    return su.layers * per_layer + gains + 2 * su.vocab * su.hidden


def state_bytes_per_param(precision: str, optimiser: str) -> tuple[int, int, int]:
    """(weights, gradients, optimiser states) in bytes per parameter: ZeRO's 2 + 2 + K in mixed
    precision, K = 4 (master) + 4 per moment; 4 + 4 + 4 per moment in float32."""
    moments = {"adam": 2, "momentum": 1, "sgd": 0}[optimiser]
    if precision == "mixed":
        return 2, 2, 4 + 4 * moments
    return 4, 4, 4 * moments


def layer_terms(su: Setup) -> dict[str, tuple[float, float]]:
    """One layer's activation bytes by part, each as (x, y) in  x·sbh + y·as²b  (no parallelism, no
    recomputation), from the tensor-by-tensor list in the module docstring."""
    v = 2 if su.precision == "mixed" else 4  # bytes per activation value
    r = su.f / su.hidden
    mask = 1 if su.dropout else 0
    return {
        "attention": (5 * v + mask, v + (1 + v) * mask),
        "mlp": (v + (2 if su.mlp == "gelu" else 3) * r * v + mask, 0.0),
        "norms": (2 * v, 0.0),
    }


def layer_activation_bytes(su: Setup) -> float:
    """Bytes one layer keeps for the backward pass on one device, after tensor/sequence parallelism
    and the checkpointing mode (Korthikanti et al.'s §4-5 and Table 2, in general form)."""
    s, b, h, a, t = su.seq, su.micro_batch, su.hidden, su.heads, su.tensor_parallel
    v = 2 if su.precision == "mixed" else 4
    if su.checkpointing == "full":
        return v * s * b * h  # each layer's input (their Table 2: 2sbh, whatever t)
    terms = layer_terms(su)
    sbh = sum(x for x, _ in terms.values())
    as2b = 0.0 if su.checkpointing == "selective" else sum(y for _, y in terms.values())
    # kept whole on each tensor-parallel rank unless sequence-parallel: the norms' inputs, the attention
    # and MLP inputs and the two dropout masks
    whole = 2 * v + v + v + 2 * (1 if su.dropout else 0)
    if su.sequence_parallel:
        whole = 0
    return s * b * h * (whole + (sbh - whole) / t) + a * s * s * b * as2b / t


@dataclass(frozen=True)
class Memory:
    """Bytes per device, by part."""

    params: float
    grads: float
    optimiser: float
    activations: float
    n_params: int

    @property
    def states(self) -> float:
        return self.params + self.grads + self.optimiser

    @property
    def total(self) -> float:
        return self.states + self.activations

    def gb(self) -> dict[str, float]:
        return {"params": self.params / GB, "grads": self.grads / GB, "optimiser": self.optimiser / GB,
                "activations": self.activations / GB, "total": self.total / GB}  # fmt: skip


def training_memory(su: Setup) -> Memory:
    """Parameters, gradients, optimiser states and activations in bytes on one device."""
    n = parameters(su)
    w, g, k = state_bytes_per_param(su.precision, su.optimiser)
    nd = su.data_parallel
    opt = k * n / (nd if su.zero >= 1 else 1)
    grads = g * n / (nd if su.zero >= 2 else 1)
    params = w * n / (nd if su.zero >= 3 else 1)
    return Memory(params, grads, opt, su.layers * layer_activation_bytes(su), n)


# LLaMA-7B (Touvron et al. 2023, Table 2: 32 layers, width 4,096, 32 heads; feed-forward 11,008 and
# vocabulary 32,000 from its released config), SwiGLU, no dropout, RMSNorm gains, one 2,048-token sequence
LLAMA_7B = Setup(layers=32, hidden=4096, heads=32, seq=2048, micro_batch=1, vocab=32000, ffn=11008, mlp="swiglu",
                 dropout=False)  # fmt: skip


def as_formula(su: Setup) -> Setup:
    """The same shape as Korthikanti's formula assumes it: a GELU MLP of width 4h, with dropout."""
    return replace(su, ffn=4 * su.hidden, mlp="gelu", dropout=True)
