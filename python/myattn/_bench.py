"""python3 -m myattn bench: forward from Python against the same call looped in C++ and, when
torch is installed, against PyTorch eager running the article's module.

Each variant runs in rounds of a fixed number of calls, the variants alternating round by
round (the machine's noise falls on all of them alike); the median round gives the time per
call. "C++ loop" calls the same forward on the same arrays from C++, with the outputs
allocated once: the Python cost is the difference. The "out=" variants pass outputs allocated
once (forward(Q, K, V, out=...)), as a serving loop would. Each line also gives its ratio to the
NumPy call in the same run, which holds better than absolute times on a loaded machine.

--cpu-time times the calling thread's CPU time instead of the wall clock: on a loaded machine
the time the OS gives other processes then does not count. It covers the whole call only
when the call runs on the calling thread alone: pin the process to one CPU (taskset -c 1)
so that TBB and PyTorch use one thread.
"""

import time

import numpy as np

from . import MyAttn, info

SHAPES = {  # q, k, L, d, o
    "S": (32, 32, 32, 64, 32),
    "T": (256, 256, 10, 256, 256),
    "X": (1024, 1024, 512, 1024, 1024),
}


def _article_module(torch, sizes):
    """The article's module, batched along dimension 0 (Q [B,1,q]), as PyTorch eager runs it."""
    nn, F = torch.nn, torch.nn.functional

    class Article(nn.Module):
        def __init__(self, query_size, key_size, value_size1, value_size2, output_size):
            super().__init__()
            self.query_size, self.key_size, self.value_size1 = query_size, key_size, value_size1
            self.value_size2, self.output_size = value_size2, output_size
            self.attn = nn.Linear(query_size + key_size, value_size1)
            self.attn_combine = nn.Linear(query_size + value_size2, output_size)

        def forward(self, Q, K, V):
            attn_weights = F.softmax(self.attn(torch.cat((Q, K), -1)), dim=-1)
            output = self.attn_combine(torch.cat((Q, torch.bmm(attn_weights, V)), -1))
            return output, attn_weights.squeeze(1)

    return Article(*sizes).eval()


def _random_state_dict(rng, q, k, L, d, o):
    def uniform(fan_in, *shape):
        bound = 1 / np.sqrt(fan_in)
        return rng.uniform(-bound, bound, shape).astype(np.float32)

    return {
        "attn.weight": uniform(q + k, L, q + k),
        "attn.bias": uniform(q + k, L),
        "attn_combine.weight": uniform(q + d, o, q + d),
        "attn_combine.bias": uniform(q + d, o),
    }


def _calls_per_round(fn, round_s, clock):
    calls, elapsed = 1, 0.0
    while elapsed < round_s / 4:
        calls *= 2
        start = clock()
        fn(calls)
        elapsed = clock() - start
    return max(1, int(calls * round_s / elapsed))


def _python_loop(call):
    def loop(calls):
        for _ in range(calls):
            call()

    return loop


def _case(name, isa, precision, rounds, round_s, torch, clock):
    shape, batch = name.split("/")
    q, k, L, d, o = SHAPES[shape]
    B = int(batch)
    rng = np.random.default_rng(0)
    Q = rng.standard_normal((B, 1, q), dtype=np.float32)
    K = rng.standard_normal((B, 1, k), dtype=np.float32)
    V = rng.standard_normal((B, L, d), dtype=np.float32)

    variants = {}
    if torch is not None:
        torch.manual_seed(0)
        module = _article_module(torch, (q, k, L, d, o))
        attn = MyAttn.from_module(module, isa=isa, precision=precision)
        Qt, Kt, Vt = (torch.from_numpy(x) for x in (Q, K, V))

        def eager():
            with torch.no_grad():
                module(Qt, Kt, Vt)

        variants["PyTorch eager"] = _python_loop(eager)
        variants["myattn, torch tensors"] = _python_loop(lambda: attn.forward(Qt, Kt, Vt))
        out_t = tuple(torch.from_numpy(x) for x in attn.forward(Q, K, V))
        variants["myattn, torch, out="] = _python_loop(lambda: attn.forward(Qt, Kt, Vt, out=out_t))
    else:
        attn = MyAttn(_random_state_dict(rng, q, k, L, d, o), q, isa=isa, precision=precision)
    variants["myattn, NumPy arrays"] = _python_loop(lambda: attn.forward(Q, K, V))
    out_np = attn.forward(Q, K, V)
    variants["myattn, NumPy, out="] = _python_loop(lambda: attn.forward(Q, K, V, out=out_np))
    variants["C++ loop"] = lambda calls: attn._forward_loop(Q, K, V, calls)

    sizes = {v: _calls_per_round(fn, round_s, clock) for v, fn in variants.items()}
    per_call = {v: [] for v in variants}
    for _ in range(rounds):
        for v, fn in variants.items():
            start = clock()
            fn(sizes[v])
            per_call[v].append((clock() - start) / sizes[v])
    cpp = float(np.median(per_call["C++ loop"]))
    numpy_call = float(np.median(per_call["myattn, NumPy arrays"]))
    print(f"{name} (q k L d o = {q} {k} {L} {d} {o}, B = {B}), isa {attn.isa}, precision {attn.precision}")
    for v, times in per_call.items():
        t = float(np.median(times))
        spread = (max(times) - min(times)) / t * 100
        print(
            f"  {v:24s} {t * 1e6:10.2f} us/call   {t / cpp:6.3f}x the C++ loop   {t / numpy_call:6.3f}x NumPy"
            f"   (rounds spread {spread:.0f}%)"
        )


def run(args):
    try:
        import torch
    except ImportError:
        torch = None
        print("torch is not installed: PyTorch eager is not timed")
    i = info()
    clock = time.thread_time if args.cpu_time else time.perf_counter
    print(f"myattn {i['version']}, isa {args.isa or i['isa']}, cpu: {i['cpu_features']}")
    print("timed: " + ("this thread's CPU time" if args.cpu_time else "wall clock"))
    if torch is not None:
        print(f"torch {torch.__version__}, {torch.get_num_threads()} intra-op threads")
    for name in args.cases.split(","):
        _case(name.strip(), args.isa, args.precision, args.rounds, args.round_ms / 1000, torch, clock)
    return 0
