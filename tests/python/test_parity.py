"""Parity with the article's module: the PyTorch cases of tests/data (stored, so no torch is
needed), shape X against the float64 oracle, and, where torch is installed, the module itself
on the seed shape, an odd shape and shape X. PyTorch's float32 result and ours are each within
the oracle's bound of the exact result, so within twice the bound of each other."""

import numpy as np
import pytest
from support import SHAPES, cases, data_file, oracle, random_inputs, random_weights, read_safetensors, within

import myattn

CASES = [c for c in cases()]


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_stored_pytorch_cases(isa, case):
    weights, _ = read_safetensors(data_file(case["name"], "weights"))
    inputs, _ = read_safetensors(data_file(case["name"], "inputs"))
    expected, _ = read_safetensors(data_file(case["name"], "expected"))
    attn = myattn.MyAttn(data_file(case["name"], "weights"), case["q"], isa=isa)
    assert attn.isa == isa
    Q, K, V = inputs["Q"], inputs["K"], inputs["V"]
    output, attn_weights = attn.forward(Q, K, V)
    B, o, L = case["B"], case["o"], case["L"]
    assert output.shape == (B, 1, o) and attn_weights.shape == (B, L)
    assert isinstance(output, np.ndarray) and output.dtype == np.float32
    y, w, y_bound, w_bound = oracle(weights, Q, K, V)
    within(output, expected["output"].astype(np.float64).reshape(B, o), 2 * y_bound)
    within(attn_weights, expected["attn_weights"].astype(np.float64), 2 * w_bound)
    within(output, y, y_bound)
    within(attn_weights, w, w_bound)

    if V.shape[0] == 1 or B == 1:  # the article's layout: the same memory, so the same bits
        out1, w1 = attn.forward(Q.reshape(1, B, -1), K.reshape(1, K.shape[0], -1), V)
        assert out1.shape == (1, B, o) and w1.shape == (B, L)
        assert np.array_equal(out1.reshape(B, 1, o), output) and np.array_equal(w1, attn_weights)


@pytest.mark.parametrize("B", [1, 3])
def test_shape_x_against_the_oracle(isa, B):
    q, k, L, d, o = SHAPES["X"]
    rng = np.random.default_rng(7 + B)
    weights = random_weights(rng, q, k, L, d, o)
    Q, K, V = random_inputs(rng, q, k, L, d, B)
    attn = myattn.MyAttn(weights, q, isa=isa)
    output, attn_weights = attn.forward(Q, K, V)
    y, w, y_bound, w_bound = oracle(weights, Q, K, V)
    within(output, y, y_bound)
    within(attn_weights, w, w_bound)


@pytest.mark.parametrize("shape", ["S", "odd", "X"])
@pytest.mark.parametrize("B", [1, 5])
def test_the_articles_module(isa, torch, article, shape, B):
    q, k, L, d, o = SHAPES[shape]
    torch.manual_seed(B)
    module = article(q, k, L, d, o)
    attn = myattn.MyAttn.from_module(module, isa=isa)
    assert attn.dims == dict(query_size=q, key_size=k, value_size1=L, value_size2=d, output_size=o)
    Q, K, V = torch.randn(1, B, q), torch.randn(1, B, k), torch.randn(1, L, d)
    with torch.no_grad():
        want_output, want_weights = module(Q, K, V)
    output, attn_weights = attn.forward(Q, K, V)
    assert isinstance(output, torch.Tensor) and isinstance(attn_weights, torch.Tensor)
    assert output.shape == want_output.shape == (1, B, o)
    assert attn_weights.shape == want_weights.shape == (B, L)
    for t in (output, attn_weights):  # torch's own tensors, each on memory of its own
        assert t.dtype == torch.float32 and t.device.type == "cpu" and t.is_contiguous() and t.requires_grad is False
    again = attn.forward(Q, K, V)
    assert again[0].data_ptr() not in (output.data_ptr(), attn_weights.data_ptr())
    assert torch.equal(again[0], output) and torch.equal(again[1], attn_weights)
    again[0].fill_(0)
    del again

    weights = {n: t.detach().numpy() for n, t in module.state_dict().items()}
    Qn, Kn = Q.numpy().reshape(B, 1, q), K.numpy().reshape(B, 1, k)
    _, _, y_bound, w_bound = oracle(weights, Qn, Kn, V.numpy())
    within(output.numpy().reshape(B, o), want_output.numpy().reshape(B, o).astype(np.float64), 2 * y_bound)
    within(attn_weights.numpy(), want_weights.numpy().astype(np.float64), 2 * w_bound)
