"""What the Python tests share: a small safetensors reader for tests/data, the test cases,
random inputs, and the float64 oracle with the error bound of tests/support/oracle.hpp."""

import json
import os
import struct

import numpy as np

DATA = os.environ.get("MYATTN_TEST_DATA", os.path.join(os.path.dirname(__file__), "..", "data"))
NAMES = ("attn.weight", "attn.bias", "attn_combine.weight", "attn_combine.bias")
SHAPES = {"S": (32, 32, 32, 64, 32), "odd": (3, 5, 33, 9, 31), "X": (1024, 1024, 512, 1024, 1024)}

_DTYPES = {"F32": "<f4", "F64": "<f8"}


def read_safetensors(path):
    """(dict name -> array, metadata dict)."""
    with open(path, "rb") as f:
        raw = f.read()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + length])
    metadata = header.pop("__metadata__", {})
    data = raw[8 + length :]
    tensors = {}
    for name, e in header.items():
        begin, end = e["data_offsets"]
        tensors[name] = np.frombuffer(data[begin:end], dtype=_DTYPES[e["dtype"]]).reshape(e["shape"]).copy()
    return tensors, metadata


def cases():
    """tests/data/cases.txt: dicts with name, q, k, L, d, o, B, shared_k, shared_v."""
    out = []
    with open(os.path.join(DATA, "cases.txt")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, *numbers = line.split()
            q, k, L, d, o, B, sk, sv, _seed = map(int, numbers)
            out.append(dict(name=name, q=q, k=k, L=L, d=d, o=o, B=B, shared_k=bool(sk), shared_v=bool(sv)))
    return out


def data_file(case, kind):
    return os.path.join(DATA, f"{case}.{kind}.safetensors")


def random_weights(rng, q, k, L, d, o):
    """nn.Linear's default initialisation, U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""

    def uniform(fan_in, *shape):
        bound = 1 / np.sqrt(fan_in)
        return rng.uniform(-bound, bound, shape).astype(np.float32)

    return dict(zip(NAMES, (uniform(q + k, L, q + k), uniform(q + k, L), uniform(q + d, o, q + d), uniform(q + d, o))))


def random_inputs(rng, q, k, L, d, B, shared_k=False, shared_v=False):
    Q = rng.standard_normal((B, 1, q), dtype=np.float32)
    K = rng.standard_normal((1 if shared_k else B, 1, k), dtype=np.float32)
    V = rng.standard_normal((1 if shared_v else B, L, d), dtype=np.float32)
    return Q, K, V


U = 2.0**-24
EXP_REL = 4 * 2.0**-23


def gamma(n, unit=U):
    return n * unit / (1 - n * unit)


def oracle(weights, Q, K, V):
    """(output [B,o], attn_weights [B,L], output bound, attn_weights bound), batch first with a
    shared K or V broadcast; the bound is tests/support/oracle.hpp's (each Linear sums its
    products, then adds the bias), vectorised."""
    W1, b1, W2, b2 = (weights[n].astype(np.float64) for n in NAMES)
    B, q = Q.shape[0], Q.shape[2]
    L, D = V.shape[1], V.shape[2]
    q64 = Q.reshape(B, q).astype(np.float64)
    k64 = np.broadcast_to(K.reshape(K.shape[0], K.shape[2]), (B, K.shape[2])).astype(np.float64)
    v64 = np.broadcast_to(V, (B, L, D)).astype(np.float64)
    x = np.concatenate([q64, k64], axis=1)
    n1 = x.shape[1]
    s = x @ W1.T + b1
    mag1 = np.abs(x) @ np.abs(W1).T
    s_abs = np.abs(s) + gamma(n1 + 1, 2.0**-53) * (mag1 + np.abs(b1))  # bounds the exact |score|
    eps = ((1 + U) * gamma(n1) * mag1 + U * s_abs).max(axis=1, initial=0.0)
    e = np.exp(s - s.max(axis=1, keepdims=True, initial=-np.inf))
    w = e / e.sum(axis=1, keepdims=True)
    w_rel = np.expm1(2 * eps) + EXP_REL + gamma(L) + 2 * U
    w_bound = w * w_rel[:, None] + 2.0**-126
    a = np.einsum("bl,bld->bd", w, v64)
    da = np.einsum("bl,bld->bd", w_bound, np.abs(v64)) + gamma(L) * np.einsum("bl,bld->bd", w, np.abs(v64))
    y = np.concatenate([q64, a], axis=1) @ W2.T + b2
    W2q, W2a = np.abs(W2[:, :q]), np.abs(W2[:, q:])
    mag2 = np.abs(q64) @ W2q.T + np.abs(a) @ W2a.T
    prop = da @ W2a.T
    y_abs = np.abs(y) + gamma(q + D + 1, 2.0**-53) * (mag2 + np.abs(b2))
    y_bound = (1 + U) * (prop + gamma(q + D) * (mag2 + prop)) + U * y_abs
    return y, w, y_bound, w_bound


def within(actual, expected, bound):
    """Every element within its bound; on failure, the worst ratio and where."""
    actual = np.asarray(actual, dtype=np.float64).reshape(np.shape(expected))
    excess = np.abs(actual - expected) / bound
    worst = np.unravel_index(np.argmax(excess), excess.shape) if excess.size else None
    assert excess.size == 0 or excess.max() <= 1, (
        f"error {excess[worst]:.3g}x the bound at {worst}: {actual[worst]!r} vs {expected[worst]!r}"
    )
