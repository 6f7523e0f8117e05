"""Python threads and one module: the GIL is released during forward (another thread runs Python
meanwhile), and threads calling one module at once each get the bits a lone call gets."""

import sys
import threading
import time

import numpy as np
import pytest
from support import SHAPES, oracle, random_inputs, random_weights, within

import myattn


def _stamps_inside(call):
    """Runs call() here while another thread stamps time.perf_counter() in a pure-Python loop;
    returns how many stamps fall strictly inside the call.

    The switch interval is set so long that the interpreter never takes the GIL from this thread
    by force: the other thread runs Python only while this one has released the GIL itself. A
    call that holds the GIL throughout therefore sees no stamp at all, however the OS schedules
    the threads; one that releases it sees the other thread's stamps unless the OS never ran that
    thread during the call."""
    stamps, stop = [], threading.Event()

    def other():
        counter = 0
        while not stop.is_set():
            for _ in range(100):
                counter += 1
            stamps.append(time.perf_counter())
            stop.wait(0.0002)  # gives the GIL back, so this thread gets it whenever it asks

    interval = sys.getswitchinterval()
    thread = threading.Thread(target=other)
    sys.setswitchinterval(1000.0)
    try:
        thread.start()
        while not stamps:
            time.sleep(0.001)
        start = time.perf_counter()
        call()
        end = time.perf_counter()
    finally:
        stop.set()
        sys.setswitchinterval(interval)
        thread.join()
    return sum(start < s < end for s in stamps)


def _hold_the_gil(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


@pytest.mark.parametrize("with_out", [False, True], ids=["allocating", "out="])
def test_the_gil_is_released_during_forward(with_out):
    # Many samples against one shared V: a long call on little memory (about 1 KiB a sample).
    q, k, L, d, o = 16, 16, 256, 256, 16
    rng = np.random.default_rng(20)
    attn = myattn.MyAttn(random_weights(rng, q, k, L, d, o), q)
    V = rng.standard_normal((1, L, d), dtype=np.float32)

    def inputs(B):
        return rng.standard_normal((B, 1, q), dtype=np.float32), rng.standard_normal((1, 1, k), dtype=np.float32), V

    # A batch for about 60 ms on this machine, whatever its ISA and load (timed after a first,
    # slower call).
    probe = inputs(512)
    seconds = []
    for _ in range(3):
        begin = time.perf_counter()
        attn.forward(*probe)
        seconds.append(time.perf_counter() - begin)
    B = int(np.clip(512 * 0.06 / min(seconds[1:]), 4096, 1 << 15))
    Q, K, _ = inputs(B)
    out = attn.forward(Q, K, V) if with_out else None

    # The harness itself: a call holding the GIL lets the other thread take no stamp.
    assert _stamps_inside(lambda: _hold_the_gil(0.02)) == 0
    # forward lets it run (three tries, for a loaded machine whose OS may not run the other
    # thread within one call; a forward holding the GIL would see no stamp in any of them).
    stamps = []
    while len(stamps) < 3 and not any(stamps):
        stamps.append(_stamps_inside(lambda: attn.forward(Q, K, V, out=out)))
    assert any(stamps), f"no Python ran in another thread during forward (B={B}): {stamps}"


def test_threads_share_one_module(isa):
    q, k, L, d, o = SHAPES["S"]
    rng = np.random.default_rng(21)
    weights = random_weights(rng, q, k, L, d, o)
    attn = myattn.MyAttn(weights, q, isa=isa)
    inputs = [random_inputs(rng, q, k, L, d, B) for B in (1, 2, 7, 33)]
    expected = [attn.forward(*x) for x in inputs]
    for x, (output, attn_weights) in zip(inputs, expected):
        y, w, y_bound, w_bound = oracle(weights, *x)
        within(output, y, y_bound)
        within(attn_weights, w, w_bound)
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
