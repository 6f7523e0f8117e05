"""The accuracy suite's cases: regimes where float32 rounding shows, for tests/test_accuracy.cpp.

Each case is a module (weights as stored in the file: F32, F16, BF16 or F64) and F32 inputs.
make_reference.py runs it through PyTorch twice, in float32 and in float64, and stores both;
the test holds myattn to 1.5x PyTorch float32's own error against the float64 truth
(docs/accuracy.md).  Sizes are odd on purpose and kept small; only the long-sum cases reach
thousands of inputs.  Each tensor has about 50 elements or more (B x o, B x L): the measure is a
maximum over them, and over a handful it would be one draw of the rounding, not a statistic.
"""

import math

import numpy as np
import torch

F64 = torch.float64

# name, regime, q, k, L, d, o, B, shared_k, shared_v, seed, stored weight dtype, option
CASES = [
    # Biases that dominate W x (|W x| near 1), both signs, 1e2 to 1e4: the scores' biases sit at
    # `option` (spread by 1 so the softmax is not one-hot), the combine's at +-1e2..1e4.
    ("bias_m500",          "bias",       32, 32, 32, 64, 32, 8, 0, 0, 2001, "F32", -500.0),
    ("bias_p1e4",          "bias",        7, 13, 11, 17,  5, 10, 0, 0, 2002, "F32", 1e4),
    ("bias_m1e4",          "bias",       65, 19, 70, 23, 47, 3, 0, 0, 2003, "F32", -1e4),
    ("bias_p250",          "bias",        3,  5, 33,  9, 31, 5, 0, 0, 2004, "F32", 250.0),
    ("bias_m2e3_shared",   "bias",      100, 60,  9, 40, 20, 9, 1, 1, 2005, "F32", -2e3),
    # Scores in the hundreds from W x itself (no max-subtraction would overflow), both signs.
    ("scores_32",          "scores",     32, 32, 32, 64, 32, 7, 0, 0, 2101, "F32", None),
    ("scores_odd",         "scores",     17,  9, 45, 13, 11, 5, 0, 0, 2102, "F32", None),
    ("scores_narrow",      "scores",     64,  3,  5,  7,  3, 16, 0, 0, 2103, "F32", None),
    # Every score of a sample equal (identical rows and biases): the weights are exactly 1/L.
    ("equal_7",            "equal",       5,  3,  7,  9,  4, 12, 0, 0, 2201, "F32", None),
    ("equal_32",           "equal",      32, 32, 32, 64, 32, 5, 0, 0, 2202, "F32", None),
    ("equal_33_at_300",    "equal",       1,  1, 33, 17,  2, 24, 0, 0, 2203, "F32", 300.0),
    # Long dot products: q + k and q + d in the thousands.
    ("long_1531",          "long",     1500, 31,  8,   9,  8, 8, 0, 0, 2301, "F32", None),
    ("long_3001",          "long",     1001, 2000, 6,   5, 10, 6, 1, 0, 2302, "F32", None),
    ("long_2300",          "long",     1100,  1,  5, 1200,  7, 9, 0, 1, 2303, "F32", None),
    # Heavy cancellation: Q = [r; r] against weights [w; -w + delta], |w| large, of both signs.
    ("cancel_1207",        "cancel",   1200,  7,  6,  9,  8, 8, 0, 0, 2401, "F32", None),
    ("cancel_130",         "cancel",    100, 30, 21, 17, 13, 5, 0, 0, 2402, "F32", None),
    ("cancel_tiny",        "cancel",      6,  1,  3,  2,  5, 16, 0, 0, 2403, "F32", None),
    # Inputs and weights over many orders of magnitude, a tenth of them subnormal.
    ("magnitudes_32",      "magnitudes", 32, 32, 32, 64, 32, 6, 0, 0, 2501, "F32", None),
    ("magnitudes_odd",     "magnitudes", 13,  7,  9, 21,  5, 10, 0, 0, 2502, "F32", None),
    ("magnitudes_wide",    "magnitudes", 70, 40, 17, 33, 19, 3, 0, 0, 2503, "F32", None),
    # Weights stored narrower or wider than float: converted on load, as PyTorch's .float().
    ("dtype_f16",          "dtypes",     32, 32, 32, 64, 32, 4, 0, 0, 2601, "F16", None),
    ("dtype_bf16",         "dtypes",      7, 13, 11, 17,  5, 10, 0, 0, 2602, "BF16", None),
    ("dtype_f64",          "dtypes",     65, 19, 70, 23, 47, 3, 0, 0, 2603, "F64", None),
    ("dtype_f16_bias",     "dtypes",      9, 24, 15,  8,  6, 8, 0, 0, 2604, "F16", -300.0),
]

# Then PyTorch's errors against the float64 truth, output then attn_weights each, of: bf16
# autocast; quantize_dynamic's int8 Linears; float32 with the Linears' weights rounded to bf16;
# the same with V rounded to bf16 too (make_reference.torch_low_precision_errors).
CASES_HEADER = ("# name regime q k L d o B shared_k shared_v seed weight_dtype"
                " torch_bf16_output torch_bf16_attn_weights torch_int8_output torch_int8_attn_weights"
                " torch_bf16w_output torch_bf16w_attn_weights torch_bf16wv_output torch_bf16wv_attn_weights"
                " torch_bf16wx_output torch_bf16wx_attn_weights torch_bf16wxv_output torch_bf16wxv_attn_weights")


def _uniform(g, shape, bound):
    return (torch.rand(shape, generator=g, dtype=F64) * 2 - 1) * bound


def _randn(g, shape):
    return torch.randn(shape, generator=g, dtype=F64)


def _default_linear(g, out, inp):
    """nn.Linear's default init: U(-1/sqrt(in), 1/sqrt(in)) for the weight and the bias."""
    bound = 1 / math.sqrt(inp)
    return _uniform(g, (out, inp), bound), _uniform(g, (out,), bound)


def _spread(g, shape, lo, hi, subnormal_fraction):
    """randn * 10^U(lo, hi), with a fraction replaced by random subnormal floats."""
    x = _randn(g, shape) * torch.pow(10.0, lo + (hi - lo) * torch.rand(shape, generator=g, dtype=F64))
    sub = torch.rand(shape, generator=g, dtype=F64) < subnormal_fraction
    mantissa = torch.randint(1, 1 << 23, shape, generator=g).to(F64)
    sign = torch.where(torch.rand(shape, generator=g, dtype=F64) < 0.5, -1.0, 1.0)
    return torch.where(sub, sign * mantissa * 2.0**-149, x)


def build(regime, q, k, L, d, o, B, shared_k, shared_v, seed, option):
    """Returns (weights {name: float64 tensor, before storage rounding}, Q, K, V as float32)."""
    g = torch.Generator().manual_seed(seed)
    Bk, Bv = (1 if shared_k else B), (1 if shared_v else B)
    Q, K, V = _randn(g, (B, 1, q)), _randn(g, (Bk, 1, k)), _randn(g, (Bv, L, d))
    W1, b1 = _default_linear(g, L, q + k)
    W2, b2 = _default_linear(g, o, q + d)
    if regime == "bias":
        b1 = option + _randn(g, (L,))
        b2 = torch.where(torch.rand(o, generator=g, dtype=F64) < 0.5, -1.0, 1.0) * torch.pow(
            10.0, 2 + 2 * torch.rand(o, generator=g, dtype=F64))
    elif regime == "scores":
        # Q_b = t_b u + noise and every score row a u + small noise: scores a t_b, |a t_b| in
        # [100, 800] with either sign, apart by a few units within a sample.
        u = _randn(g, (q,))
        u /= u.norm()
        t = torch.where(torch.rand(B, generator=g, dtype=F64) < 0.5, -1.0, 1.0) * (10 + 70 * torch.rand(
            B, generator=g, dtype=F64))
        Q = t.view(B, 1, 1) * u + _randn(g, (B, 1, q))
        W1[:, :q] = 10 * u + 0.05 * _randn(g, (L, q))
    elif regime == "equal":
        W1 = W1[:1].expand(L, q + k).clone()
        b1 = torch.full((L,), b1[0].item() if option is None else option, dtype=F64)
    elif regime == "cancel":
        h = q // 2
        r = _randn(g, (B, 1, h))
        Q = torch.cat((r, r), dim=-1)
        for W, n in ((W1, L), (W2, o)):
            w = 10 * _randn(g, (n, h))
            W[:, :h] = w
            W[:, h:q] = -w + 1e-3 * _randn(g, (n, h))
    elif regime == "magnitudes":
        Q = _spread(g, (B, 1, q), -20, 1, 0.1)
        K = _spread(g, (Bk, 1, k), -20, 1, 0.1)
        V = _spread(g, (Bv, L, d), -25, 2, 0.1)
        W1, W2 = _spread(g, (L, q + k), -20, 0, 0.1), _spread(g, (o, q + d), -20, 0, 0.1)
        b1, b2 = _spread(g, (L,), -10, 0, 0.1), _spread(g, (o,), -10, 0, 0.1)
    elif regime == "dtypes":
        if option is not None:
            b1 = option + _randn(g, (L,))
    elif regime != "long":
        raise ValueError(regime)
    weights = {"attn.weight": W1, "attn.bias": b1, "attn_combine.weight": W2, "attn_combine.bias": b2}
    return weights, Q.float(), K.float(), V.float()


def stored(weights, dtype):
    """The weights as the file holds them, as float64 tensors: rounded (to nearest, ties to even)
    to the storage dtype, or kept as they are for F64."""
    to = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16, "F64": F64}[dtype]
    return {name: w.to(to).to(F64) for name, w in weights.items()}
