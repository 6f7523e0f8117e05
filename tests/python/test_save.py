"""myattn.save and loading what it wrote: from Python, from C++ through `myattn run`, with
the sizes in the metadata so that neither needs q."""

import subprocess

import numpy as np
import pytest
from support import NAMES, SHAPES, random_inputs, random_weights, read_safetensors

import myattn

q, k, L, d, o = SHAPES["odd"]


def test_round_trip_of_a_state_dict(tmp_path):
    weights = random_weights(np.random.default_rng(11), q, k, L, d, o)
    path = tmp_path / "w.safetensors"
    myattn.save(weights, path, query_size=q)
    tensors, metadata = read_safetensors(path)
    assert metadata == {
        "myattn.query_size": "3",
        "myattn.key_size": "5",
        "myattn.value_size1": "33",
        "myattn.value_size2": "9",
        "myattn.output_size": "31",
    }
    for name in NAMES:
        assert tensors[name].dtype == np.float32 and np.array_equal(tensors[name], weights[name])
    assert path.read_bytes()[8:16] == b'{"__meta'  # the header starts at 8, the data 8-aligned
    assert int.from_bytes(path.read_bytes()[:8], "little") % 8 == 0

    loaded = myattn.MyAttn(path)  # no q: the metadata has it
    assert loaded.dims == dict(query_size=q, key_size=k, value_size1=L, value_size2=d, output_size=o)
    assert myattn.MyAttn(str(path), q).dims == loaded.dims  # an agreeing q is fine
    Q, K, V = random_inputs(np.random.default_rng(12), q, k, L, d, 3)
    direct = myattn.MyAttn(weights, q).forward(Q, K, V)
    for a, b in zip(loaded.forward(Q, K, V), direct):
        assert np.array_equal(a, b)


def test_without_query_size_no_sizes_are_stored(tmp_path):
    weights = random_weights(np.random.default_rng(13), q, k, L, d, o)
    myattn.save(weights, tmp_path / "w.safetensors")
    _, metadata = read_safetensors(tmp_path / "w.safetensors")
    assert metadata == {}


def test_save_replaces_a_file_atomically(tmp_path):
    path = tmp_path / "w.safetensors"
    path.write_bytes(b"old")
    myattn.save(random_weights(np.random.default_rng(14), q, k, L, d, o), path, query_size=q)
    assert myattn.MyAttn(path).dims["query_size"] == q
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.safetensors"]


def test_a_module_nested_in_a_model(tmp_path, torch, article):
    torch.manual_seed(3)

    class Decoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = torch.nn.Embedding(10, q)
            self.attn = article(q, k, L, d, o)

    model = torch.nn.Module()
    model.decoder = Decoder()
    path = tmp_path / "model.safetensors"
    myattn.save(model, path)
    tensors, metadata = read_safetensors(path)
    assert sorted(tensors) == sorted(model.state_dict())
    assert metadata["myattn.decoder.attn.query_size"] == str(q)
    assert metadata["myattn.decoder.attn.output_size"] == str(o)
    attn = myattn.MyAttn(path, prefix="decoder.attn.")
    direct = myattn.MyAttn.from_module(model.decoder.attn)
    Q, K, V = random_inputs(np.random.default_rng(15), q, k, L, d, 2)
    for a, b in zip(attn.forward(Q, K, V), direct.forward(Q, K, V)):
        assert np.array_equal(a, b)

    myattn.save(model.decoder.attn, tmp_path / "attn.safetensors")  # the module alone: no prefix
    assert read_safetensors(tmp_path / "attn.safetensors")[1]["myattn.query_size"] == str(q)


@pytest.mark.parametrize("layout", ["batch first", "the article's"])
def test_myattn_run_loads_without_q(tmp_path, cli, layout):
    rng = np.random.default_rng(16)
    weights = random_weights(rng, q, k, L, d, o)
    nested = {"model.attn." + n: t for n, t in weights.items()}
    myattn.save(nested, tmp_path / "w.safetensors", query_size=q, prefix="model.attn.")
    B = 4
    Q, K, V = random_inputs(rng, q, k, L, d, B, shared_v=True)
    if layout == "the article's":
        Q, K = Q.reshape(1, B, q), K.reshape(1, B, k)
    myattn.save({"Q": Q, "K": K, "V": V}, tmp_path / "in.safetensors")
    run = subprocess.run(
        [cli, "run", "--weights", tmp_path / "w.safetensors", "--inputs", tmp_path / "in.safetensors",
         "--output", tmp_path / "out.safetensors", "--prefix", "model.attn."],
        capture_output=True, text=True,
    )
    assert run.returncode == 0, run.stderr
    out, _ = read_safetensors(tmp_path / "out.safetensors")
    want_output, want_weights = myattn.MyAttn(weights, q).forward(Q, K, V)
    assert out["output"].shape == want_output.shape == ((1, B, o) if layout == "the article's" else (B, 1, o))
    assert np.array_equal(out["output"], want_output) and np.array_equal(out["attn_weights"], want_weights)

    # A Q of another width is then reported as a shape error on Q, not as a q mismatch.
    myattn.save({"Q": np.zeros((1, 1, q + 1), np.float32), "K": K[:1, :1], "V": V}, tmp_path / "bad.safetensors")
    run = subprocess.run(
        [cli, "run", "--weights", tmp_path / "w.safetensors", "--inputs", tmp_path / "bad.safetensors",
         "--output", tmp_path / "bad-out.safetensors", "--prefix", "model.attn."],
        capture_output=True, text=True,
    )
    assert run.returncode != 0 and "Q: expected shape [B, 1, 3] or [1, B, 3], got [1, 1, 4]" in run.stderr
