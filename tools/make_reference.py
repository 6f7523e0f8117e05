#!/usr/bin/python3
"""Export reference vectors for myattn from PyTorch.

Run with Debian's interpreter (it has python3-torch and numpy):

    /usr/bin/python3 tools/make_reference.py            # writes tests/data/
    /usr/bin/python3 tools/make_reference.py --out DIR  # somewhere else

The module is the article's ``MyAttn`` (README.md):
two ``nn.Linear`` layers, ``attn`` (q+k -> L) and ``attn_combine`` (q+d -> o),
and a forward doing cat -> linear -> softmax -> bmm -> cat -> linear.  The
article indexes ``Q[0]``/``K[0]`` (batch 1 only); as its Q1 answer advises,
the batched forward here concatenates on the last axis instead:

    cat((Q, K), -1)  [B,1,q+k] -> attn -> scores [B,1,L] -> softmax(dim=-1)
    -> bmm with V [B,L,d] -> [B,1,d] -> cat((Q, a), -1) [B,1,q+d]
    -> attn_combine -> output [B,1,o];  attn_weights returned as [B,L].

The article's literal batch-1 forward is kept as ``MyAttn.forward_article`` and
checked against the batched one on the ``article`` case.

Per case it writes three safetensors files into the output directory:

    <case>.weights.safetensors   attn.weight, attn.bias, attn_combine.weight,
                                 attn_combine.bias (F32, state_dict layout)
    <case>.inputs.safetensors    Q, K, V (F32).  A shared K is stored as
                                 [1,1,k], a shared V as [1,L,d]; PyTorch
                                 expands them (no copies) to B.
    <case>.expected.safetensors  output [B,1,o], attn_weights [B,L] (F32,
                                 float32 PyTorch), output_f64, attn_weights_f64
                                 (F64: the same module and the same F32 inputs,
                                 converted exactly to float64 and run in double)

and ``cases.txt`` listing the cases (see CASES_HEADER below).

It also writes the accuracy suite (tools/accuracy_cases.py) into ``accuracy/``
under the output directory: the same three files per case, the weights stored
as the case says (F32, F16, BF16 or F64), and in ``expected`` PyTorch's float32
``output`` and ``attn_weights`` beside the float64 truth, held as two float32s
each (``output_f64_hi`` + ``output_f64_lo``, likewise ``attn_weights_f64_*``:
48 bits, where one float32 would round the truth as much as the errors being
measured), plus its own ``cases.txt``.

The Python ``safetensors`` package is not needed: a small writer and reader
live in this file (8-byte little-endian header length, JSON header, raw
little-endian data).  Like ``safetensors.torch.save_file`` the data are laid
out by dtype alignment (8-byte types first), then by name, contiguously, and
the header is padded with spaces to a multiple of 8 so every tensor is
naturally aligned.  Every file is read back and compared bit for bit, and the
expected outputs are recomputed from the files as written.

Everything is deterministic: a fixed seed per case (torch.manual_seed), one
intra-op thread, torch.use_deterministic_algorithms(True).
"""

import argparse
import copy
import json
import os
import struct
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import accuracy_cases


# --------------------------------------------------------------------------
# The module, as the article defines it.
# --------------------------------------------------------------------------
class MyAttn(nn.Module):
    def __init__(self, query_size, key_size, value_size1, value_size2, output_size):
        super().__init__()
        self.query_size = query_size
        self.key_size = key_size
        self.value_size1 = value_size1   # L: number of value rows (words)
        self.value_size2 = value_size2   # d: width of a value row
        self.output_size = output_size
        self.attn = nn.Linear(query_size + key_size, value_size1)
        self.attn_combine = nn.Linear(query_size + value_size2, output_size)

    def scores(self, Q, K):
        """attn(cat((Q, K), -1)): [B,1,L] (exposed for the large-score checks)."""
        return self.attn(torch.cat((Q, K), dim=-1))

    def forward(self, Q, K, V):
        # Batched form of the article's forward (its Q1 answer: cat on dim -1).
        attn_scores = self.scores(Q, K)                       # [B,1,L]
        attn_weights = F.softmax(attn_scores, dim=-1)         # [B,1,L]
        attn_applied = torch.bmm(attn_weights, V)             # [B,1,d]
        output_cat = torch.cat((Q, attn_applied), dim=-1)     # [B,1,q+d]
        output = self.attn_combine(output_cat)                # [B,1,o]
        return output, attn_weights.squeeze(1)                # [B,1,o], [B,L]

    def forward_article(self, Q, K, V):
        # The article's code verbatim (batch 1 only).
        qk_cat = torch.cat((Q[0], K[0]), dim=-1)
        attn_scores = self.attn(qk_cat)
        attn_weights = F.softmax(attn_scores, dim=-1)
        attn_weights_expanded = attn_weights.unsqueeze(0)
        attn_applied = torch.bmm(attn_weights_expanded, V)
        output_cat = torch.cat((Q, attn_applied), dim=-1)
        output = self.attn_combine(output_cat)
        return output, attn_weights


# --------------------------------------------------------------------------
# Minimal safetensors writer / reader.
# --------------------------------------------------------------------------
_DTYPES = {  # numpy dtype -> (safetensors name, alignment)
    np.dtype("float64"): ("F64", 8),
    np.dtype("float32"): ("F32", 4),
    np.dtype("float16"): ("F16", 2),
}
# BF16 has no numpy dtype: its raw bits travel as uint16.
_NP_OF = {"F64": np.dtype("<f8"), "F32": np.dtype("<f4"), "F16": np.dtype("<f2"), "BF16": np.dtype("<u2")}


def st_write(path, tensors, metadata=None):
    """tensors: dict name -> numpy array (float64, float32 or float16) or ("BF16", uint16 bits)."""
    items = []
    for name, arr in tensors.items():
        if isinstance(arr, tuple):
            st_name, arr = arr
            align = 2
        else:
            arr = np.asarray(arr)
            st_name, align = _DTYPES[arr.dtype]
        items.append((-align, name, st_name, arr))
    items.sort(key=lambda t: (t[0], t[1]))  # 8-byte types first, then by name
    header = {}
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    chunks, offset = [], 0
    for _, name, st_name, arr in items:
        raw = np.ascontiguousarray(arr, dtype=_NP_OF[st_name]).tobytes()
        header[name] = {"dtype": st_name, "shape": [int(s) for s in arr.shape],
                        "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    hjson = json.dumps(header, separators=(",", ":")).encode("utf-8")
    hjson += b" " * (-len(hjson) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hjson)))
        f.write(hjson)
        for c in chunks:
            f.write(c)


def st_read(path):
    """Returns (dict name -> numpy array, metadata dict or None). Strict checks."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise ValueError(f"{path}: too short")
    (n,) = struct.unpack("<Q", blob[:8])
    if 8 + n > len(blob):
        raise ValueError(f"{path}: header length {n} past end of file")
    header = json.loads(blob[8:8 + n].decode("utf-8"))
    data = blob[8 + n:]
    meta = header.pop("__metadata__", None)
    out, spans = {}, []
    for name, info in header.items():
        dt = _NP_OF[info["dtype"]]
        shape = tuple(info["shape"])
        begin, end = info["data_offsets"]
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if end - begin != count * dt.itemsize:
            raise ValueError(f"{path}: {name}: {end - begin} bytes for shape {shape}")
        if (8 + n + begin) % dt.itemsize:
            raise ValueError(f"{path}: {name} misaligned")
        out[name] = np.frombuffer(data, dtype=dt, count=count, offset=begin).reshape(shape)
        spans.append((begin, end))
    spans.sort()
    pos = 0
    for b, e in spans:
        if b != pos:
            raise ValueError(f"{path}: data not contiguous at {b}")
        pos = e
    if pos != len(data):
        raise ValueError(f"{path}: {len(data) - pos} trailing bytes")
    return out, meta


# --------------------------------------------------------------------------
# Cases.
# --------------------------------------------------------------------------
# name, q, k, L, d, o, B, shared_k, shared_v, seed, special
CASES = [
    ("article",               32, 32, 32, 64, 32,  1, 0, 0, 1001, None),
    ("batch4",                32, 32, 32, 64, 32,  4, 0, 0, 1002, None),
    ("batch17_shared_kv",     32, 32, 32, 64, 32, 17, 1, 1, 1003, None),
    ("shared_v_only",         32, 32, 32, 64, 32,  5, 0, 1, 1004, None),
    ("ones",                   1,  1,  1,  1,  1,  3, 0, 0, 1005, None),
    ("primes",                 7, 13, 11, 17,  5,  6, 0, 0, 1006, None),
    ("odd",                    3,  5, 33,  9, 31,  2, 0, 0, 1007, None),
    ("uneven",                65, 19, 70, 23, 47,  3, 0, 0, 1008, None),
    ("large_scores",          32, 32, 32, 64, 32,  8, 0, 0, 1009, +200.0),
    ("large_negative_scores", 32, 32, 32, 64, 32,  8, 0, 0, 1010, -200.0),
    ("batch0",                32, 32, 32, 64, 32,  0, 0, 0, 1011, None),
]

CASES_HEADER = "# name q k L d o B shared_k shared_v seed"

LARGE_WEIGHT_SCALE = 8.0  # attn.weight and attn.bias are multiplied by this


def make_case(name, q, k, L, d, o, B, shared_k, shared_v, seed, offset):
    torch.manual_seed(seed)
    # Same order as the article's test: Q, K, V, then the module.
    Q = torch.randn(B, 1, q)
    K = torch.randn(1 if shared_k else B, 1, k)
    V = torch.randn(1 if shared_v else B, L, d)
    model = MyAttn(q, k, L, d, o)  # nn.Linear default init under the seed
    model.eval()
    if offset is not None:
        # Large scores: scale the score layer and move every score by `offset`
        # (softmax is shift-invariant, so the distribution stays non-trivial),
        # and sharpen sample b by scaling its K, from x1/4 to x4.
        with torch.no_grad():
            model.attn.weight.mul_(LARGE_WEIGHT_SCALE)
            model.attn.bias.mul_(LARGE_WEIGHT_SCALE).add_(offset)
            if B > 0:
                K.mul_(torch.logspace(-2, 2, B, base=2.0).view(B, 1, 1))
    return model, Q, K, V


def run(model, Q, K, V, B):
    """Expands shared K/V (views, no copies) and runs the batched forward."""
    Ke = K.expand(B, 1, K.shape[2])
    Ve = V.expand(B, V.shape[1], V.shape[2])
    with torch.no_grad():
        out, w = model(Q, Ke, Ve)
        s = model.scores(Q, Ke).squeeze(1)
    return out, w, s


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(here, "..", "tests", "data"))
    args = ap.parse_args()
    outdir = os.path.normpath(args.out)
    os.makedirs(outdir, exist_ok=True)

    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)

    try:  # optional cross-check with the real package, if someone has it
        from safetensors.numpy import load_file as real_load
    except ImportError:
        real_load = None

    lines = [CASES_HEADER]
    total = 0
    for (name, q, k, L, d, o, B, sk, sv, seed, offset) in CASES:
        model, Q, K, V = make_case(name, q, k, L, d, o, B, sk, sv, seed, offset)
        out, w, s = run(model, Q, K, V, B)
        m64 = copy.deepcopy(model).double()
        out64, w64, s64 = run(m64, Q.double(), K.double(), V.double(), B)

        # ---- shape and sanity checks
        assert out.shape == (B, 1, o) and w.shape == (B, L), (out.shape, w.shape)
        assert out.dtype == torch.float32 and out64.dtype == torch.float64
        assert torch.isfinite(out).all() and torch.isfinite(w).all()
        if B > 0:
            assert torch.allclose(w64.sum(-1), torch.ones(B, dtype=torch.float64))
        if name == "article":
            with torch.no_grad():
                oa, wa = model.forward_article(Q, K, V)
            assert oa.shape == (1, 1, o) and wa.shape == (1, L)
            assert torch.allclose(oa, out, rtol=0, atol=1e-6), (oa - out).abs().max()
            assert torch.allclose(wa, w, rtol=0, atol=1e-7), (wa - w).abs().max()
            art_bitwise = torch.equal(oa, out) and torch.equal(wa, w)
        if offset is not None:
            s32 = s.numpy()
            assert np.abs(s32).max() >= 100.0, np.abs(s32).max()
            assert np.abs(s32).min() >= 100.0, np.abs(s32).min()
            with np.errstate(over="ignore", under="ignore", invalid="ignore"):
                naive = np.exp(s32)                     # no max subtraction
                naive_w = naive / naive.sum(-1, keepdims=True)
            # the naive softmax fails on every row: inf/inf or 0/0
            assert not np.isfinite(naive_w).any(axis=-1).any()
            wn = w.numpy()
            assert np.isfinite(wn).all()
            assert np.abs(wn.sum(-1) - 1).max() < 1e-5
            # non-trivial: every row spreads over >= 2 entries and none is one-hot
            assert ((wn > 1e-7).sum(-1) >= 2).all(), (wn > 1e-7).sum(-1)
            assert (wn.max(-1) < 1 - 1e-6).all(), wn.max(-1)

        # ---- write
        weights = {kk: v.detach().numpy().astype(np.float32)
                   for kk, v in model.state_dict().items()}
        assert sorted(weights) == ["attn.bias", "attn.weight",
                                   "attn_combine.bias", "attn_combine.weight"]
        inputs = {"Q": Q.numpy(), "K": K.numpy(), "V": V.numpy()}
        expected = {"output": out.numpy(), "attn_weights": w.numpy(),
                    "output_f64": out64.numpy(), "attn_weights_f64": w64.numpy()}
        meta = {"generator": "tools/make_reference.py", "case": name,
                "seed": seed, "torch": torch.__version__,
                "dims": f"q={q} k={k} L={L} d={d} o={o} B={B}",
                "shared_k": sk, "shared_v": sv}
        files = {"weights": (weights, None), "inputs": (inputs, meta),
                 "expected": (expected, meta)}
        for kind, (tensors, md) in files.items():
            path = os.path.join(outdir, f"{name}.{kind}.safetensors")
            st_write(path, tensors, md)
            total += os.path.getsize(path)
            # ---- read back, bit for bit
            back, bmeta = st_read(path)
            assert sorted(back) == sorted(tensors), (sorted(back), sorted(tensors))
            for tn, arr in tensors.items():
                b = back[tn]
                assert b.shape == arr.shape and b.dtype == arr.dtype, (tn, b.shape, b.dtype)
                assert b.tobytes() == np.ascontiguousarray(arr).tobytes(), tn
            assert bmeta == ({kk: str(v) for kk, v in md.items()} if md else None)
            if real_load is not None:
                rb = real_load(path)
                for tn, arr in tensors.items():
                    assert rb[tn].tobytes() == np.ascontiguousarray(arr).tobytes()

        # ---- recompute from the files as written
        wf, _ = st_read(os.path.join(outdir, f"{name}.weights.safetensors"))
        inf_, _ = st_read(os.path.join(outdir, f"{name}.inputs.safetensors"))
        ef, _ = st_read(os.path.join(outdir, f"{name}.expected.safetensors"))
        m2 = MyAttn(q, k, L, d, o)
        m2.load_state_dict({kk: torch.from_numpy(v.copy()) for kk, v in wf.items()})
        o2, w2, _ = run(m2, *(torch.from_numpy(inf_[t].copy()) for t in "QKV"), B)
        assert np.array_equal(o2.numpy(), ef["output"])
        assert np.array_equal(w2.numpy(), ef["attn_weights"])

        # ---- summary
        d_out = (out.double() - out64).abs().max().item() if B else 0.0
        d_w = (w.double() - w64).abs().max().item() if B else 0.0
        smax = s.abs().max().item() if B else 0.0
        shared = ("K" if sk else "") + ("V" if sv else "")
        extra = ""
        if name == "article":
            extra = f"  article-forward {'bit-identical' if art_bitwise else 'within 1e-6'}"
        if offset is not None:
            extra = (f"  scores in [{s.min().item():.1f}, {s.max().item():.1f}],"
                     f" max w/row {w.max(-1).values.min().item():.3f}"
                     f"..{w.max(-1).values.max().item():.3f}")
        print(f"{name:22s} q={q:<3d} k={k:<3d} L={L:<3d} d={d:<3d} o={o:<3d} B={B:<3d}"
              f" shared={shared or '-':2s} seed={seed}  max|s|={smax:7.2f}"
              f"  |f32-f64| out {d_out:.2e} w {d_w:.2e}{extra}")
        lines.append(f"{name} {q} {k} {L} {d} {o} {B} {sk} {sv} {seed}")

    total += write_cases(outdir, lines)
    print(f"{len(CASES)} cases, {3 * len(CASES) + 1} files, {total} bytes in {outdir}")
    write_accuracy(os.path.join(outdir, "accuracy"))
    return 0


def write_cases(outdir, lines):
    """Writes cases.txt, one line each; returns its size in bytes."""
    path = os.path.join(outdir, "cases.txt")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return os.path.getsize(path)


def as_stored(w, dtype):
    """A float64 tensor holding values of `dtype` exactly, as the file stores it."""
    if dtype == "BF16":
        return ("BF16", w.to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16))
    return w.to({"F32": torch.float32, "F16": torch.float16, "F64": torch.float64}[dtype]).numpy()


def rel_error(got, truth):
    """max |got - truth| / max |truth|, the accuracy suite's measure."""
    return ((got.double() - truth).abs().max() / truth.abs().max()).item()


def split_f64(t):
    """A float64 tensor as hi + lo, two float32 tensors (exact to about 2^-48 relative)."""
    hi = t.float()
    return hi.numpy(), (t - hi.double()).float().numpy()


# The runs torch_low_precision_errors makes, in the order of tests/data/accuracy/cases.txt's columns.
LOW_PRECISION_RUNS = ("bf16", "int8", "bf16w", "bf16wv", "bf16wx", "bf16wxv")


def torch_low_precision_errors(model, Q, K, V, B, out64, wt64):
    """PyTorch's low-precision runs of the float32 module, as its users would make them, and
    their errors against the float64 truth, (output, attn_weights) each:

    bf16     bf16 autocast;
    int8     dynamic int8 quantization of both Linears (fbgemm on x86);
    bf16w    float32, the Linears' weights rounded to bf16 (the biases kept): what the bf16
             precision computes, the floor that rounding alone sets;
    bf16wv   the same with V rounded to bf16 too (the bf16 precision given a bf16 V);
    bf16wx   float32, the weights and the Linears' inputs ([Q; K], [Q; a]) rounded to bf16: what
             the bf16 precision computes on the CPU's native bf16 dot product;
    bf16wxv  the same with V rounded to bf16 too.

    The bounds the bf16 and int8 precisions are held to (docs/accuracy.md)."""
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out_bf16, w_bf16, _ = run(model, Q, K, V, B)
    model_int8 = torch.ao.quantization.quantize_dynamic(copy.deepcopy(model), {nn.Linear}, dtype=torch.qint8)
    out_int8, w_int8, _ = run(model_int8, Q, K, V, B)
    model_bf16w = copy.deepcopy(model)
    with torch.no_grad():
        for layer in (model_bf16w.attn, model_bf16w.attn_combine):
            layer.weight.copy_(layer.weight.bfloat16().float())
    out_w, w_w, _ = run(model_bf16w, Q, K, V, B)
    out_wv, w_wv, _ = run(model_bf16w, Q, K, V.bfloat16().float(), B)
    out_wx, w_wx = run_rounded_inputs(model_bf16w, Q, K, V, B)
    out_wxv, w_wxv = run_rounded_inputs(model_bf16w, Q, K, V.bfloat16().float(), B)
    return {"bf16": (rel_error(out_bf16, out64), rel_error(w_bf16, wt64)),
            "int8": (rel_error(out_int8, out64), rel_error(w_int8, wt64)),
            "bf16w": (rel_error(out_w, out64), rel_error(w_w, wt64)),
            "bf16wv": (rel_error(out_wv, out64), rel_error(w_wv, wt64)),
            "bf16wx": (rel_error(out_wx, out64), rel_error(w_wx, wt64)),
            "bf16wxv": (rel_error(out_wxv, out64), rel_error(w_wxv, wt64))}


def run_rounded_inputs(model, Q, K, V, B):
    """The batched forward with each Linear's input rounded to bf16 (the weights as model has
    them): output, attn_weights."""
    def rounded(t):
        return t.bfloat16().float()
    Ke = K.expand(B, 1, K.shape[2])
    Ve = V.expand(B, V.shape[1], V.shape[2])
    with torch.no_grad():
        w = F.softmax(model.attn(torch.cat((rounded(Q), rounded(Ke)), dim=-1)), dim=-1)
        out = model.attn_combine(torch.cat((rounded(Q), rounded(torch.bmm(w, Ve))), dim=-1))
    return out, w.squeeze(1)


def write_accuracy(outdir):
    os.makedirs(outdir, exist_ok=True)
    lines = [accuracy_cases.CASES_HEADER]
    total = 0
    for (name, regime, q, k, L, d, o, B, sk, sv, seed, dtype, option) in accuracy_cases.CASES:
        master, Q, K, V = accuracy_cases.build(regime, q, k, L, d, o, B, sk, sv, seed, option)
        w64 = accuracy_cases.stored(master, dtype)
        model = MyAttn(q, k, L, d, o)
        # Float32 PyTorch gets the weights as myattn does: the stored values, rounded to float.
        model.load_state_dict({n: w.float() for n, w in w64.items()})
        m64 = MyAttn(q, k, L, d, o).double()
        m64.load_state_dict(w64)
        out, w, s = run(model, Q, K, V, B)
        out64, wt64, s64 = run(m64, Q.double(), K.double(), V.double(), B)
        assert torch.isfinite(out).all() and torch.isfinite(w).all(), name
        assert torch.isfinite(out64).all() and torch.isfinite(wt64).all(), name
        low = torch_low_precision_errors(model, Q, K, V, B, out64, wt64)

        weights = {n: as_stored(wv, dtype) for n, wv in w64.items()}
        inputs = {"Q": Q.numpy(), "K": K.numpy(), "V": V.numpy()}
        out_hi, out_lo = split_f64(out64)
        w_hi, w_lo = split_f64(wt64)
        expected = {"output": out.numpy(), "attn_weights": w.numpy(),
                    "output_f64_hi": out_hi, "output_f64_lo": out_lo,
                    "attn_weights_f64_hi": w_hi, "attn_weights_f64_lo": w_lo}
        meta = {"generator": "tools/make_reference.py", "case": name, "regime": regime,
                "seed": seed, "torch": torch.__version__, "weights": dtype,
                "dims": f"q={q} k={k} L={L} d={d} o={o} B={B}", "shared_k": sk, "shared_v": sv}
        for kind, tensors, md in (("weights", weights, None), ("inputs", inputs, meta),
                                  ("expected", expected, meta)):
            path = os.path.join(outdir, f"{name}.{kind}.safetensors")
            st_write(path, tensors, md)
            total += os.path.getsize(path)
            back, _ = st_read(path)
            for tn, arr in tensors.items():
                raw = arr[1] if isinstance(arr, tuple) else arr
                assert back[tn].tobytes() == np.ascontiguousarray(raw).tobytes(), (path, tn)
        # The split truth is the truth to far better than the errors it measures.
        assert rel_error(torch.from_numpy(out_hi).double() + torch.from_numpy(out_lo).double(), out64) < 2.0**-45

        print(f"{name:18s} {regime:10s} q={q:<4d} k={k:<4d} L={L:<3d} d={d:<4d} o={o:<3d} B={B:<2d}"
              f" {dtype:4s} scores [{s64.min().item():9.1f}, {s64.max().item():9.1f}]"
              f"  torch error (output, attn_weights): f32 {rel_error(out, out64):.2e} {rel_error(w, wt64):.2e}"
              + "".join(f"  {p} {low[p][0]:.2e} {low[p][1]:.2e}" for p in LOW_PRECISION_RUNS))
        errors = " ".join(f"{e:.6e}" for p in LOW_PRECISION_RUNS for e in low[p])
        lines.append(f"{name} {regime} {q} {k} {L} {d} {o} {B} {sk} {sv} {seed} {dtype} {errors}")
    total += write_cases(outdir, lines)
    print(f"{len(accuracy_cases.CASES)} accuracy cases, {total} bytes in {outdir}")


if __name__ == "__main__":
    sys.exit(main())
