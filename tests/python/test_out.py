"""forward(Q, K, V, out=(output, attn_weights)): written in place, the same objects returned,
bitwise the allocating call's result, and every misuse refused before anything is written."""

import numpy as np
import pytest
from support import SHAPES, random_inputs, random_weights

import myattn

q, k, L, d, o = SHAPES["S"]
B = 4


@pytest.fixture(scope="module")
def attn():
    return myattn.MyAttn(random_weights(np.random.default_rng(11), q, k, L, d, o), q)


@pytest.fixture(scope="module")
def inputs():
    return random_inputs(np.random.default_rng(12), q, k, L, d, B)


def article_layout(Q, K, V):
    """The same memory in the module's own layout: Q [1,B,q], K [1,B,k], one shared V [1,L,d]."""
    return Q.reshape(1, B, q), K.reshape(1, B, k), V[:1].copy()


def outputs(dim1):
    return (np.empty((1, B, o) if dim1 else (B, 1, o), np.float32), np.empty((B, L), np.float32))


@pytest.mark.parametrize("dim1", [False, True], ids=["batch first", "article layout"])
def test_numpy_out_is_written_and_returned(attn, inputs, dim1):
    Q, K, V = article_layout(*inputs) if dim1 else inputs
    expected = attn.forward(Q, K, V)
    out = outputs(dim1)
    for x in out:
        x.fill(np.nan)
    result = attn.forward(Q, K, V, out=out)
    assert result is out  # a tuple is returned as it came
    assert np.array_equal(out[0], expected[0]) and np.array_equal(out[1], expected[1])
    as_list = [np.zeros_like(out[0]), np.zeros_like(out[1])]
    result = attn(Q, K, V, out=as_list)  # the call operator too; a list comes back as a tuple
    assert isinstance(result, tuple) and result[0] is as_list[0] and result[1] is as_list[1]
    assert np.array_equal(as_list[0], expected[0]) and np.array_equal(as_list[1], expected[1])


@pytest.mark.parametrize("dim1", [False, True], ids=["batch first", "article layout"])
def test_torch_out_is_written_and_returned(attn, inputs, dim1, torch):
    Q, K, V = (torch.from_numpy(x) for x in (article_layout(*inputs) if dim1 else inputs))
    expected = attn.forward(Q, K, V)
    out = (torch.full(tuple(expected[0].shape), float("nan")), torch.full((B, L), float("nan")))
    pointers = [t.data_ptr() for t in out]
    result = attn.forward(Q, K, V, out=out)
    assert result is out and [t.data_ptr() for t in out] == pointers  # written in place, no copy
    assert torch.equal(out[0], expected[0]) and torch.equal(out[1], expected[1])


def test_numpy_out_errors(attn, inputs):
    Q, K, V = inputs
    good = outputs(False)
    with pytest.raises(TypeError, match=r"out: expected a tuple \(output, attn_weights\), got ndarray"):
        attn.forward(Q, K, V, out=good[0])
    with pytest.raises(ValueError, match=r"out: expected 2 tensors \(output, attn_weights\), got 3"):
        attn.forward(Q, K, V, out=(*good, good[1]))
    with pytest.raises(TypeError, match=r"out\[1\]: expected a NumPy array or a CPU torch.Tensor of float32, got list"):
        attn.forward(Q, K, V, out=(good[0], good[1].tolist()))
    with pytest.raises(TypeError, match=r"out\[0\]: expected dtype float32, got float64"):
        attn.forward(Q, K, V, out=(good[0].astype(np.float64), good[1]))
    with pytest.raises(ValueError, match=r"out\[1\]: expected a C-contiguous array"):
        attn.forward(Q, K, V, out=(good[0], np.empty((B, 2 * L), np.float32)[:, ::2]))
    read_only = good[1].copy()
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match=r"out\[1\]: expected a writable array, got a read-only one"):
        attn.forward(Q, K, V, out=(good[0], read_only))
    with pytest.raises(ValueError, match=r"out\[0\]: expected shape \[4, 1, 32\] \(output, as Q is \[B, 1, q\]\), got \[1, 4, 32\]"):
        attn.forward(Q, K, V, out=(good[0].reshape(1, B, o), good[1]))
    Qa, Ka, Va = article_layout(Q, K, V)
    with pytest.raises(ValueError, match=r"out\[0\]: expected shape \[1, 4, 32\] \(output, as Q is \[1, B, q\]\), got \[4, 1, 32\]"):
        attn.forward(Qa, Ka, Va, out=good)
    with pytest.raises(ValueError, match=r"out\[1\]: expected shape \[4, 32\] \(attn_weights, \[B, L\]\), got \[4, 1, 32\]"):
        attn.forward(Q, K, V, out=(good[0], good[0]))
    with pytest.raises(ValueError, match=r"out\[1\]: expected a tensor of rank 2, got rank 5"):
        attn.forward(Q, K, V, out=(good[0], np.empty((1, 1, 1, B, L), np.float32)))
    with pytest.raises(myattn.ShapeError, match=r"Q: expected shape"):  # Q is checked before out
        attn.forward(Q[:, :, :16].copy(), K, V, out=good)


def test_overlapping_outputs_are_refused(attn, inputs):
    Q, K, V = (x.copy() for x in inputs)
    before = [x.copy() for x in (Q, K, V)]
    weights = np.empty((B, L), np.float32)
    # q = o here, so Q itself has the output's shape: writing there would overwrite an input being read.
    with pytest.raises(myattn.ArgumentError, match=r"out: output: output buffer overlaps Q \(the outputs must not share memory"):
        attn.forward(Q, K, V, out=(Q, weights))
    block = np.empty(B * o + B * L - 1, np.float32)  # attn_weights starts inside output
    with pytest.raises(ValueError, match=r"out: .* overlaps"):
        attn.forward(Q, K, V, out=(block[: B * o].reshape(B, 1, o), block[B * o - 1 :].reshape(B, L)))
    with pytest.raises(ValueError, match=r"out: attn_weights: output buffer overlaps V"):
        attn.forward(Q, K, V, out=(np.empty((B, 1, o), np.float32), V.reshape(-1)[: B * L].reshape(B, L)))
    assert all(np.array_equal(x, y) for x, y in zip((Q, K, V), before))  # nothing written


def test_torch_out_errors(attn, inputs, torch):
    Q, K, V = (torch.from_numpy(x) for x in inputs)
    good = (torch.empty(B, 1, o), torch.empty(B, L))
    with pytest.raises(TypeError, match=r"out\[0\]: expected a torch.Tensor, as Q, K and V are, got ndarray"):
        attn.forward(Q, K, V, out=(np.empty((B, 1, o), np.float32), good[1]))
    with pytest.raises(TypeError, match=r"out\[1\]: expected a NumPy array, as Q, K and V are, got Tensor"):
        attn.forward(*inputs, out=(np.empty((B, 1, o), np.float32), good[1]))
    with pytest.raises(TypeError, match=r"out\[0\]: expected dtype torch.float32, got torch.float64"):
        attn.forward(Q, K, V, out=(good[0].double(), good[1]))
    with pytest.raises(ValueError, match=r"out\[1\]: expected a contiguous tensor"):
        attn.forward(Q, K, V, out=(good[0], torch.empty(L, B).t()))
    with pytest.raises(ValueError, match=r"out\[0\]: expected a CPU tensor, got one on meta"):
        attn.forward(Q, K, V, out=(torch.empty(B, 1, o, device="meta"), good[1]))
    with pytest.raises(ValueError, match=r"out\[1\]: expected a tensor that does not require grad"):
        attn.forward(Q, K, V, out=(good[0], torch.empty(B, L, requires_grad=True)))
    with pytest.raises(ValueError, match=r"out\[1\]: expected shape \[4, 32\] \(attn_weights, \[B, L\]\), got \[4, 31\]"):
        attn.forward(Q, K, V, out=(good[0], torch.empty(B, L - 1)))
    with pytest.raises(myattn.ArgumentError, match=r"out: output: output buffer overlaps Q"):
        attn.forward(Q, K, V, out=(Q, good[1]))
