"""The installed Python package, as a user runs it (tools/ci/install.sh):
    PYTHONPATH=SITE python3 check-installed-python.py SITE CLI WORKDIR
myattn must come from SITE (not from a build tree), and its forward must give the bits that the
installed CLI gives for weights it saved (no q passed to the CLI: it reads it from the file)."""

import json
import os
import struct
import subprocess
import sys

import numpy as np

import myattn

site, cli, work = (os.path.realpath(a) for a in sys.argv[1:4])
for module in (myattn, myattn._myattn):
    where = os.path.realpath(module.__file__)
    if not where.startswith(site + os.sep):
        sys.exit(f"{module.__name__} was imported from {where}, not from {site}")

q, k, L, d, o, B = 3, 5, 7, 4, 6, 2
rng = np.random.default_rng(0)
weights = {
    "attn.weight": rng.standard_normal((L, q + k), dtype=np.float32),
    "attn.bias": rng.standard_normal(L, dtype=np.float32),
    "attn_combine.weight": rng.standard_normal((o, q + d), dtype=np.float32),
    "attn_combine.bias": rng.standard_normal(o, dtype=np.float32),
}
inputs = {
    "Q": rng.standard_normal((B, 1, q), dtype=np.float32),
    "K": rng.standard_normal((B, 1, k), dtype=np.float32),
    "V": rng.standard_normal((1, L, d), dtype=np.float32),
}
paths = {name: os.path.join(work, name + ".safetensors") for name in ("weights", "inputs", "outputs")}
myattn.save(weights, paths["weights"], query_size=q)
myattn.save(inputs, paths["inputs"])
output, attn_weights = myattn.MyAttn(paths["weights"]).forward(inputs["Q"], inputs["K"], inputs["V"])

subprocess.run([cli, "run", "--weights", paths["weights"], "--inputs", paths["inputs"], "--output", paths["outputs"]],
               check=True)
with open(paths["outputs"], "rb") as f:
    raw = f.read()
(length,) = struct.unpack("<Q", raw[:8])
header = json.loads(raw[8 : 8 + length])
for name, got in (("output", output), ("attn_weights", attn_weights)):
    begin, end = header[name]["data_offsets"]
    want = np.frombuffer(raw[8 + length + begin : 8 + length + end], dtype="<f4").reshape(header[name]["shape"])
    if not np.array_equal(got, want):
        sys.exit(f"{name} from Python differs from the CLI's: {got} vs {want}")
print(f"myattn {myattn.__version__} from {site}: forward gives the CLI's bits (isa {myattn.info()['isa']})")
