"""Every error the package documents: the type, and a message naming what is wrong."""

import os

import numpy as np
import pytest
from support import SHAPES, data_file, random_inputs, random_weights

import myattn

q, k, L, d, o = SHAPES["S"]


@pytest.fixture(scope="module")
def attn():
    return myattn.MyAttn(random_weights(np.random.default_rng(1), q, k, L, d, o), q)


@pytest.fixture(scope="module")
def inputs():
    return random_inputs(np.random.default_rng(2), q, k, L, d, 4)


def test_inputs_of_another_type(attn, inputs):
    Q, K, V = inputs
    with pytest.raises(TypeError, match=r"Q: expected a NumPy array or a CPU torch.Tensor of float32, got list"):
        attn.forward(Q.tolist(), K, V)
    with pytest.raises(TypeError, match=r"V: expected a NumPy array .* got str"):
        attn.forward(Q, K, "V")


def test_dtype_other_than_float32(attn, inputs):
    Q, K, V = inputs
    with pytest.raises(TypeError, match=r"K: expected dtype float32, got float64"):
        attn.forward(Q, K.astype(np.float64), V)
    with pytest.raises(TypeError, match=r"Q: expected dtype float32, got >f4"):
        attn.forward(Q.astype(">f4"), K, V)


def test_non_contiguous_inputs_are_refused_not_copied(attn, inputs):
    Q, K, V = inputs
    strided = np.zeros((4, L, 2 * d), np.float32)[:, :, ::2]
    with pytest.raises(ValueError, match=r"V: expected a C-contiguous array .*ascontiguousarray"):
        attn.forward(Q, K, strided)


def test_shapes_name_both_layouts(attn, inputs):
    Q, K, V = inputs
    with pytest.raises(myattn.ShapeError, match=r"Q: expected shape \[B, 1, 32\] or \[1, B, 32\], got \[4, 1, 16\]"):
        attn.forward(Q[:, :, :16].copy(), K, V)
    with pytest.raises(ValueError, match=r"Q: expected shape \[B, 1, 32\] or \[1, B, 32\], got \[2, 2, 32\]"):
        attn.forward(Q.reshape(2, 2, q), K, V)
    with pytest.raises(ValueError, match=r"Q: expected shape .*, got \[4, 32\]"):
        attn.forward(Q.reshape(4, q), K, V)
    with pytest.raises(ValueError, match=r"K: expected shape \[4, 1, 32\] or \[1, 1, 32\], got \[3, 1, 32\]"):
        attn.forward(Q, K[:3], V)
    with pytest.raises(ValueError, match=r"K: expected shape \[1, 4, 32\] or \[1, 1, 32\] \(as Q is \[1, B, q\]\), got \[4, 1, 32\]"):
        attn.forward(Q.reshape(1, 4, q), K, V[:1])
    with pytest.raises(ValueError, match=r"V: expected shape \[1, 32, 64\] \(as Q is \[1, B, q\]\), got \[4, 32, 64\]"):
        attn.forward(Q.reshape(1, 4, q), K.reshape(1, 4, k), V)
    with pytest.raises(ValueError, match=r"V: expected shape \[4, 32, 64\] or \[1, 32, 64\], got \[4, 16, 64\]"):
        attn.forward(Q, K, V[:, :16].copy())
    with pytest.raises(ValueError, match=r"Q: expected a tensor of rank 3, got rank 5"):
        attn.forward(Q.reshape(1, 1, 4, 1, q), K, V)


def test_torch_inputs(attn, inputs, torch):
    Q, K, V = (torch.from_numpy(x) for x in inputs)
    with pytest.raises(TypeError, match=r"Q, K and V must be all NumPy arrays or all torch tensors; got Q: Tensor, K: "):
        attn.forward(Q, inputs[1], V)
    with pytest.raises(TypeError, match=r"V: expected dtype torch.float32, got torch.float64"):
        attn.forward(Q, K, V.double())
    with pytest.raises(ValueError, match=r"K: expected a CPU tensor, got one on meta"):
        attn.forward(Q, torch.empty(4, 1, k, device="meta"), V)
    with pytest.raises(ValueError, match=r"V: expected a contiguous tensor .*\.contiguous\(\)"):
        attn.forward(Q, K, torch.zeros(4, 2 * d, L).transpose(1, 2)[:, :, :d])
    with pytest.raises(ValueError, match=r"K: expected a dense tensor, got layout torch.sparse_coo .*\.to_dense\(\)"):
        attn.forward(Q, K.to_sparse(), V)
    with pytest.raises(myattn.ShapeError, match=r"Q: expected shape"):
        attn.forward(Q[:, :, :16].contiguous(), K, V)


def test_construction(tmp_path):
    weights = random_weights(np.random.default_rng(3), q, k, L, d, o)
    with pytest.raises(TypeError, match=r"a state_dict does not carry q: give query_size="):
        myattn.MyAttn(weights)
    with pytest.raises(TypeError, match=r"expected a state_dict .* or a path .*, got int"):
        myattn.MyAttn(3, q)
    with pytest.raises(KeyError, match=r'missing "enc.attn.weight"; it holds 4 entries: "attn.weight", '):
        myattn.MyAttn(weights, q, prefix="enc.")
    with pytest.raises(myattn.ShapeError, match=r"with q=64"):
        myattn.MyAttn(weights, 64)
    with pytest.raises(TypeError, match=r"attn.bias: expected a floating-point tensor, got dtype int64"):
        myattn.MyAttn({**weights, "attn.bias": np.arange(L)}, q)
    with pytest.raises(myattn.IsaError, match=r'isa: unknown ISA "sse9" \(compiled in: .*; runnable here: .*scalar'):
        myattn.MyAttn(weights, q, isa="sse9")
    for name in myattn.info()["compiled_isas"]:
        if name not in myattn.info()["runnable_isas"]:
            with pytest.raises(myattn.IsaError, match=name):
                myattn.MyAttn(weights, q, isa=name)
    with pytest.raises(ValueError, match=r"query_size: expected a size > 0, got -1"):
        myattn.MyAttn(weights, -1)
    with pytest.raises(TypeError, match=r"query_size: expected an int, got float"):
        myattn.MyAttn(weights, 32.0)
    with pytest.raises(TypeError, match=r"isa: expected a name such as 'avx2' or None, got int"):
        myattn.MyAttn(weights, q, isa=2)
    with pytest.raises(TypeError, match=r"prefix: expected a str, got NoneType"):
        myattn.MyAttn(weights, q, prefix=None)
    assert myattn.MyAttn(weights, np.int64(q)).dims["query_size"] == q
    with pytest.raises(TypeError, match=r"from_module: expected the article's nn.Module"):
        myattn.MyAttn.from_module(object())


def test_files(tmp_path):
    missing = str(tmp_path / "none.safetensors")
    with pytest.raises(myattn.FileError, match=r"none.safetensors: cannot open"):
        myattn.MyAttn(missing, q)
    assert issubclass(myattn.FileError, OSError)
    article = data_file("article", "weights")  # written without metadata: q is needed
    with pytest.raises(myattn.FileError, match=r"article.weights.safetensors: the file does not state q"):
        myattn.MyAttn(article)
    with pytest.raises(myattn.FileError, match=r'missing tensor "dec.attn.weight"; the file holds 4 tensors: '):
        myattn.MyAttn(article, q, prefix="dec.")
    saved = tmp_path / "w.safetensors"
    myattn.save(random_weights(np.random.default_rng(4), q, k, L, d, o), saved, query_size=q)
    with pytest.raises(myattn.FileError, match=r'query_size 16 was given, but the file\'s "myattn.query_size" is 32'):
        myattn.MyAttn(saved, 16)


def test_save_errors_leave_no_file(tmp_path):
    weights = random_weights(np.random.default_rng(5), q, k, L, d, o)
    target = tmp_path / "w.safetensors"
    target.write_bytes(b"previous")
    with pytest.raises(TypeError, match=r"step: expected a floating-point tensor, got dtype int64"):
        myattn.save({**weights, "step": np.arange(3)}, target)
    with pytest.raises(ValueError, match=r"'__metadata__' cannot name a tensor"):
        myattn.save({**weights, "__metadata__": weights["attn.bias"]}, target)
    with pytest.raises(ValueError, match=r"query_size=64 does not fit attn.weight \[32, 64\]"):
        myattn.save(weights, target, query_size=64)
    with pytest.raises(KeyError, match=r"must hold 'x.attn.weight'"):
        myattn.save(weights, target, query_size=q, prefix="x.")
    with pytest.raises(TypeError, match=r"expected an nn.Module or a state_dict, got int"):
        myattn.save(3, target)
    assert target.read_bytes() == b"previous" and os.listdir(tmp_path) == ["w.safetensors"]
    with pytest.raises(FileNotFoundError):
        myattn.save(weights, tmp_path / "no-such-dir" / "w.safetensors")
