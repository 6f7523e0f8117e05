"""Python threads calling one module at once (the GIL is released during forward): each gets
the bits a lone call gets."""

import threading

import numpy as np
from support import SHAPES, random_inputs, random_weights

import myattn


def test_threads_share_one_module(isa):
    q, k, L, d, o = SHAPES["S"]
    rng = np.random.default_rng(21)
    attn = myattn.MyAttn(random_weights(rng, q, k, L, d, o), q, isa=isa)
    inputs = [random_inputs(rng, q, k, L, d, B) for B in (1, 2, 7, 33)]
    expected = [attn.forward(*x) for x in inputs]
    failures = []
    start = threading.Barrier(len(inputs))

    def worker(i):
        start.wait()
        for _ in range(200):
            output, attn_weights = attn.forward(*inputs[i])
            if not (np.array_equal(output, expected[i][0]) and np.array_equal(attn_weights, expected[i][1])):
                failures.append(i)
                return

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
