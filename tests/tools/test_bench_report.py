"""tools/bench-report without running a benchmark: the CPU's file name, where each cell's data
comes from and its bound, the per-cell targets, the precision table's targets, the rows
tools/bench-torch writes, and the folder of reports with its summary. Standard library only (torch
is not imported); runs in well under a second."""
import importlib.machinery
import importlib.util
import json
import os
import sys
import tempfile
import types
import unittest

TOOL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools", "bench-report")
loader = importlib.machinery.SourceFileLoader("bench_report", TOOL)
br = importlib.util.module_from_spec(importlib.util.spec_from_loader("bench_report", loader))
loader.exec_module(br)
TORCH_TOOL = os.path.join(os.path.dirname(TOOL), "bench-torch")
torch_loader = importlib.machinery.SourceFileLoader("bench_torch", TORCH_TOOL)
bt = importlib.util.module_from_spec(importlib.util.spec_from_loader("bench_torch", torch_loader))
torch_loader.exec_module(bt)

EMERALD_RAPIDS = {"Vendor ID": "GenuineIntel", "Model name": "Intel(R) Xeon(R) Processor", "CPU family": "6",
                  "Model": "207", "Core(s) per socket": "2", "Socket(s)": "1", "Thread(s) per core": "1"}
# The shapes and work counts as myattn_bench writes them into its context (src/shapes.hpp).
SHAPES = {"S": "q=32 k=32 L=32 d=64 o=32", "T": "q=256 k=256 L=10 d=256 o=256",
          "X": "q=1024 k=1024 L=512 d=1024 o=1024"}
WORK = {"S": "flops=14336 bytes=8704 weights=20736", "T": "flops=277504 bytes=13352 weights=545832",
        "X": "flops=7340032 bytes=2101248 weights=12591104"}
CACHES = "l1d=49152 l2=2097152 l3=314572800"


def entry(name, seconds, **counters):
    """A median aggregate and one repetition, as Google Benchmark's JSON holds them."""
    base = {"run_name": name + "/real_time", "real_time": seconds * 1e9, "time_unit": "ns"}
    return [dict(base, name=name + "_median", run_type="aggregate", aggregate_name="median", **counters),
            dict(base, name=name, run_type="iteration", **counters)]


def results_json(path, forward, rows=(), context_extra=None):
    """forward: {(impl, shape, B, threads): seconds}; rows: [(name, seconds, counters)] of any
    other benchmark; the limits: 100 GFLOP/s per core, read 100 (L2), 30 (L3, 16 MiB), 20 (L3,
    half of it) and 10 (memory) GB/s per thread."""
    benchmarks = []
    for name, s, c in rows:
        benchmarks += entry(name, s, **c)
    for t in (1, 2):
        benchmarks += entry(f"peak/fma/avx512/{t}", 0.01, **{"GFLOP/s": 100.0 * t})
        for level, bw, mib in (("l2", 100.0, 1), ("l3_16MiB", 30.0, 16), ("l3", 20.0, 150), ("dram", 10.0, 1200)):
            benchmarks += entry(f"peak/read/{level}/{t}", 0.01, **{"GB/s": bw * t, "buffer_MiB": mib})
    for (impl, shape, b, t), s in forward.items():
        benchmarks += entry(f"forward/{impl}/{shape}/{b}/{t}", s)
    context = {"date": "2026-12-01T04:00:00+00:00", "myattn_caches": CACHES, "myattn_compiled_isas": "avx512,scalar",
               "myattn_runnable_isas": "avx512,scalar", "myattn_active_isa": "avx512",
               "myattn_kernels_avx512": "f32-linear-8x32-avx512", "plan_S": "fused",
               "plan_X": "layered: MC 120, NC 320, KC 768"}
    context.update({"shape_" + k: v for k, v in SHAPES.items()})
    context.update({"work_" + k: v for k, v in WORK.items()})
    context.update(context_extra or {})
    meta = {"mode": "quick", "repetitions": 3, "min_time": 0.05, "filter": ".", "lscpu": EMERALD_RAPIDS,
            "load_avg_start": [1.0, 1.0, 1.0], "load_avg_end": [2.0, 1.0, 1.0], "commit": "abc1234"}
    with open(path, "w") as f:
        json.dump({"context": context, "benchmarks": benchmarks, "bench_report": meta}, f)


class CpuNames(unittest.TestCase):
    def test_vendor_line_and_core(self):
        self.assertEqual(br.cpu_name(EMERALD_RAPIDS), "intel-xeon-emerald-rapids")
        self.assertEqual(br.cpu_title(EMERALD_RAPIDS), "Intel Xeon (Emerald Rapids, family 6 model 207)")
        zen4 = {"Vendor ID": "AuthenticAMD", "Model name": "AMD EPYC 9B14 96-Core Processor", "CPU family": "25",
                "Model": "17"}
        self.assertEqual(br.cpu_name(zen4), "amd-epyc-zen4")
        zen3 = dict(zen4, Model="1")
        self.assertEqual(br.cpu_name(zen3), "amd-epyc-zen3")

    def test_unknown_core_falls_back_to_the_model_name(self):
        self.assertEqual(br.cpu_name({"Vendor ID": "ARM", "Model name": "Neoverse-V2"}), "arm-neoverse-v2")
        self.assertEqual(br.cpu_name({"Vendor ID": "GenuineIntel", "Model name": "Intel(R) Core(TM) i7-1065G7 CPU "
                                      "@ 1.30GHz", "CPU family": "6", "Model": "126"}), "intel-core-i7-1065g7")
        self.assertEqual(br.cpu_name({}), "unknown-cpu")

    def test_a_guest_that_hides_features_gets_a_report_of_its_own(self):
        amx = "avx2 fma avx512f avx512_vnni amx_tile amx_int8 amx_granted"
        with tempfile.TemporaryDirectory() as d:
            base = "intel-xeon-emerald-rapids"
            self.assertEqual(br.report_name(d, base, set(amx.split())), base)  # no report yet
            with open(os.path.join(d, base + ".md"), "w") as f:
                f.write(f"# Performance\n\n## Machine\n\n- CPU features seen by myattn: {amx}\n")
            self.assertEqual(br.report_name(d, base, set(amx.split())), base)
            # A newer build that names one more feature refreshes the same report.
            self.assertEqual(br.report_name(d, base, set(amx.split()) | {"avx512_fp16"}), base)
            hidden = set("avx2 fma avx512f avx512_vnni avx512_fp16".split())
            self.assertEqual(br.report_name(d, base, hidden), base + "-without-amx")
            self.assertEqual(br.report_name(d, base, hidden - {"avx512_vnni"}), base + "-without-amx-avx512-vnni")
            self.assertEqual(br.report_name(d, base, set()), base)  # a run that does not say what it saw


class Bounds(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.json = os.path.join(self.dir.name, "r.json")
        results_json(self.json, {("avx512", "S", 64, 1): 10e-6, ("avx512", "S", 1024, 1): 300e-6,
                                 ("avx512", "X", 64, 1): 20e-3, ("avx512", "X", 64, 2): 10e-3,
                                 ("eigen", "X", 64, 1): 30e-3, ("onednn", "X", 64, 1): 40e-3,
                                 ("eigen", "X", 64, 2): 11e-3},
                     rows=[("peak/fork_join/2", 3e-6, {"overhead_us": 1.25})])
        context, meta, results = br.load(self.json)
        args = types.SimpleNamespace(name="cpu", json_path=self.json, cpu_time=False)
        self.report = br.Report(context, meta, results, args)

    def tearDown(self):
        self.dir.cleanup()

    def test_levels_follow_the_sizes_and_the_plan(self):
        s64, s1024, x64 = (self.report.bound(k) for k in (("S", 64, 1), ("S", 1024, 1), ("X", 64, 1)))
        # S at 64: 0.58 MB in all, within L2.
        self.assertEqual({lv for lv, n in s64.by_level.items() if n}, {"L2"})
        # At 1024: 8.9 MB, beyond L2, within L3; the fused plan's 127 further passes over the
        # 20 kB of weights, beside one group of 8 samples, from L2.
        self.assertEqual(s1024.by_level["L3"], 20736 + 1024 * 8704)
        self.assertEqual(s1024.by_level["L2"], 127 * 20736)
        self.assertEqual(s1024.kind, "L3")
        # 8.9 MB between two uses: the 16 MiB probe's rate, not the half-L3 one's.
        self.assertAlmostEqual(s1024.seconds, (20736 + 1024 * 8704) / 30e9)
        # X at 64 on the layered plan: one pass over the weights (64 <= MC), 147 MB in all: L3.
        self.assertEqual(self.report.passes(("X", 64, 1)), 1)
        self.assertAlmostEqual(x64.by_level["L3"], 12591104 + 64 * 2101248)
        self.assertEqual(x64.kind, "L3")
        self.assertAlmostEqual(x64.levels["L3"], (12591104 + 64 * 2101248) / 20e9)  # beyond 16 MiB

    def test_fork_and_join_beside_the_limits(self):
        # A parallel step's cost beyond its work, for the threads measured: none for one thread.
        self.assertIn("| Fork and join of a parallel step, beyond its work (µs) | — | 1.25 |",
                      "\n".join(self.report.limits()))

    def test_fused_passes_stream_the_weights_again(self):
        plan = br.plan_of("fused")
        w = {"weights": 12591104.0, "bytes": 2101248.0, "flops": 7340032.0}
        chunks = br.traffic(self.report.machine, w, plan, 8, 64, 1, br.weight_passes(plan, 8, 64))
        # 8 groups of 8: the first pass with the call's data, 7 more beside one group's 17 MB: L3.
        self.assertEqual([(lv, n) for lv, n, _ in chunks], [("L3", 12591104 + 64 * 2101248), ("L3", 7 * 12591104)])

    def test_targets_per_cell(self):
        checks = {c[0]: c for c in self.report.checks(("X", 64, 1))}
        self.assertTrue(checks["peer"][4])  # 20 ms against eigen's 30
        self.assertTrue(checks["1.25×"][4])  # 1.5×
        self.assertTrue(checks["weights"][4])
        self.assertIn("80 % L3", checks)
        two = {c[0]: c for c in self.report.checks(("X", 64, 2))}
        self.assertFalse(two["1.25×"][4])  # 1.1×
        self.assertIn("**miss**: 1.25×", self.report.cell_verdict(("X", 64, 2)))


class Precisions(unittest.TestCase):
    """The precision targets from made-up times, each met on one side of its goal or missed on the
    other; the FMA peak is 100 GFLOP/s per core (results_json)."""

    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.json = os.path.join(self.dir.name, "r.json")
        forward = {("avx512", "T", 64, 1): 200e-6, ("avx512-int8", "T", 64, 1): 70e-6,
                   ("avx512-bf16", "T", 64, 1): 150e-6, ("onednn-int8", "T", 64, 1): 90e-6,
                   ("onednn-bf16", "T", 64, 1): 120e-6, ("torch-int8", "T", 64, 1): 900e-6,
                   ("torch-bf16", "T", 64, 1): 400e-6, ("torch-f32", "T", 64, 1): 7e-3,
                   ("avx512", "S", 1, 1): 500e-9, ("avx512-int8", "S", 1, 1): 650e-9,
                   ("avx512", "X", 64, 1): 20e-3, ("avx512", "S", 1024, 1): 500e-6}
        rows = [("forward_bf16v/avx512-bf16/X/64/1", 12e-3, {}), ("forward_bf16v/avx512-bf16/S/1024/1", 400e-6, {}),
                ("forward_shared_v/avx512/X/64/1", 5e-3, {}), ("forward_shared_v/avx512-int8/X/64/1", 1.9e-3, {}),
                ("forward_shared_v/torch-int8/X/64/1", 30e-3, {}),
                # The int8 kernels' probe is avx512vnni: the faster avx512 one is not what they run.
                ("peak/int8/avx512vnni/1", 0.01, {"GOP/s": 400.0}), ("peak/int8/avx512/1", 0.01, {"GOP/s": 600.0}),
                ("peak/bf16/dot-avx512bf16/1", 0.01, {"GFLOP/s": 80.0}),
                ("peak/bf16/convert-avx512/1", 0.01, {"GFLOP/s": 150.0})]
        results_json(self.json, forward, rows, {"myattn_kernels_avx512-int8": "i8-linear-16x32-avx512vnni",
                                                "torch_version": "1.13", "torch_quantized_engine": "onednn"})
        context, meta, results = br.load(self.json)
        self.report = br.Report(context, meta, results, types.SimpleNamespace(name="cpu", json_path=self.json,
                                                                              cpu_time=False))
        self.checks = {(c[0], c[1]): c for c in self.report.precision_checks()}

    def tearDown(self):
        self.dir.cleanup()

    def met(self, shape, b, shared, target):
        return self.checks[((shape, b, shared), target)][4]

    def test_speed_ups_against_float32(self):
        self.assertTrue(self.met("T", 64, False, "int8 ≥ 2.5× f32 (compute-bound)"))  # 2.86×
        self.assertTrue(self.met("X", 64, True, "int8 ≥ 2.5× f32 (compute-bound)"))  # 2.63×, shared V
        self.assertTrue(self.met("X", 64, False, "bf16 (bf16 V) ≥ 1.6× f32 (memory-bound)"))  # 1.67×
        self.assertFalse(self.met("S", 1024, False, "bf16 (bf16 V) ≥ 1.6× f32 (memory-bound)"))  # 1.25×
        self.assertFalse(self.met("S", 1, False, "int8 ≤ 1.2× f32 time"))  # 1.3×
        # No int8 target on X/64 with V per sample (memory-bound), no bf16 one on T (compute-bound).
        self.assertNotIn((("X", 64, False), "int8 ≥ 2.5× f32 (compute-bound)"), self.checks)
        self.assertNotIn((("T", 64, False), "bf16 (bf16 V) ≥ 1.6× f32 (memory-bound)"), self.checks)

    def test_fraction_of_the_int8_peak(self):
        self.assertEqual(self.report.low_peak("int8"), ("avx512vnni", 400.0))
        self.assertEqual(self.report.low_peak("bf16"), ("convert-avx512", 150.0))
        # T/64: 64 × 272384 Linear ops at 400 GOP/s, 64 × 5120 other flops at 100 GFLOP/s, in 70 µs.
        want = 64 * (272384 / 400e9 + 5120 / 100e9) / 70e-6
        self.assertAlmostEqual(self.report.peak_fraction(("T", 64, False), 70e-6, "int8"), want)
        self.assertFalse(self.met("T", 64, False, "int8 ≥ 70 % of the int8 peak"))  # 67 %
        self.assertTrue(self.met("X", 64, True, "int8 ≥ 70 % of the int8 peak"))  # 88 %

    def test_against_the_peers_at_the_same_precision(self):
        self.assertTrue(self.met("T", 64, False, "int8 faster than oneDNN int8"))
        self.assertTrue(self.met("T", 64, False, "int8 faster than PyTorch quantize_dynamic"))
        self.assertFalse(self.met("T", 64, False, "bf16 faster than oneDNN bf16"))  # 150 µs against 120
        self.assertTrue(self.met("T", 64, False, "bf16 faster than PyTorch autocast bf16"))
        self.assertTrue(self.met("X", 64, True, "int8 faster than PyTorch quantize_dynamic"))
        # Absent peers are not checked.
        self.assertNotIn((("X", 64, True), "int8 faster than oneDNN int8"), self.checks)

    def test_table_and_record(self):
        text = "\n".join(self.report.precision_peers())
        self.assertIn("| T/64 | 200 µs | 70 µs | 150 µs | — | 2.86× | — | 90 µs (1.29×) |", text)
        self.assertIn("| X/64, shared V | 5 ms | 1.9 ms |", text)
        self.assertIn(f"Precision targets: {sum(c[4] for c in self.checks.values())} of {len(self.checks)} met", text)
        # Every cell's table: each precision against its own f32 and oneDNN's at the same precision.
        self.assertIn("| T | 64 | 1 | avx512 | int8 | `i8-linear-16x32-avx512vnni` | 70 µs | 200 µs | 2.86× | 90 µs | "
                      "1.29× |", "\n".join(self.report.precisions()))
        record = self.report.record()
        self.assertEqual(record["precision_targets"], [sum(c[4] for c in self.checks.values()), len(self.checks)])


class TorchRows(unittest.TestCase):
    def test_rows_read_as_benchmark_results(self):
        runs = [(3e-6, 2e-6, 100), (5e-6, 4e-6, 100), (4e-6, 3e-6, 100)]  # (wall, CPU, iterations)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "r.json")
            with open(path, "w") as f:
                json.dump({"context": {}, "benchmarks": bt.rows("forward/torch-int8/T/64/1", runs)}, f)
            _, _, results = br.load(path, cpu_time=True)
        r = results["forward/torch-int8/T/64/1"]
        self.assertAlmostEqual(r.seconds, 3e-6)  # the median CPU time: a 1-thread cell under --cpu-time

    def test_filter_as_myattn_bench_applies_it(self):
        row = bt.name("int8", "X", 64, True) + "/real_time"
        self.assertEqual(row, "forward_shared_v/torch-int8/X/64/1/real_time")
        self.assertTrue(bt.selected(".", row))
        self.assertTrue(bt.selected("X/64/1/", row))
        self.assertFalse(bt.selected("-torch", row))
        self.assertFalse(bt.selected("^forward/", row))

    def test_same_cells_as_the_report(self):
        self.assertEqual(bt.CELLS, br.PRECISION_CELLS)


class Folder(unittest.TestCase):
    def test_reports_accumulate_one_per_cpu(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "performance")
            os.makedirs(out)
            with open(os.path.join(out, "amd-epyc-zen4.md"), "w") as f:
                f.write("# old\n\n" + br.RECORD.format(json.dumps({"cpu": "AMD EPYC (Zen 4)", "faster": [22, 22]})))
            path = os.path.join(d, "r.json")
            results_json(path, {("avx512", "S", 64, 1): 10e-6, ("eigen", "S", 64, 1): 12e-6})
            argv = ["bench-report", "--from-json", path, "--output-dir", out]
            br.Report.plot = lambda self, p: open(p, "w").close()  # matplotlib's part is not tested here
            for _ in range(2):  # a second run refreshes the same file
                sys.argv = argv
                br.main()
            self.assertEqual(sorted(os.listdir(out)), ["README.md", "amd-epyc-zen4.md", "intel-xeon-emerald-rapids.md",
                                                       "intel-xeon-emerald-rapids.png"])
            with open(os.path.join(out, "README.md")) as f:
                summary = f.read()
            self.assertIn("[AMD EPYC (Zen 4)](amd-epyc-zen4.md)", summary)
            self.assertIn("[Intel Xeon (Emerald Rapids, family 6 model 207)](intel-xeon-emerald-rapids.md)", summary)
            self.assertIn("| 1 of 1 |", summary)  # faster than every peer in its one cell
            self.assertEqual(summary.count("](intel-xeon-emerald-rapids.md)"), 1)
            self.assertNotIn("(`intel-xeon-emerald-rapids`)", summary)  # one report of that CPU: its title is enough

            # The same CPU model under another name (a guest that hides some features): both
            # rows stay, told apart by their file names; other CPUs' rows as they were.
            sys.argv = argv + ["--name", "intel-xeon-emerald-rapids-without-amx"]
            br.main()
            with open(os.path.join(out, "README.md")) as f:
                summary = f.read()
            self.assertIn("(`intel-xeon-emerald-rapids`)", summary)
            self.assertIn("(`intel-xeon-emerald-rapids-without-amx`)", summary)
            self.assertIn("[AMD EPYC (Zen 4)](amd-epyc-zen4.md) |", summary)


if __name__ == "__main__":
    unittest.main()
