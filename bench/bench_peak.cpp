// The machine's limits, measured here rather than taken from a data sheet: peak/fma/<isa>/<threads>
// runs independent FMA chains on every thread, peak/read_bw/<threads> streams a 1 GiB buffer.
// tools/bench-report derives each forward's machine bound from them.
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <cstdint>

#include "bench.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

namespace myattn_bench {
namespace {

// FMAs per chain per call: about 10 ms at 3-4 GHz, long enough to hide the arena's start-up.
constexpr std::int64_t fma_steps = std::int64_t(1) << 22;

struct FmaKernel {
    const char* isa;
    int flops_per_step; // chains × lanes × 2
    float (*run)(std::int64_t steps, float seed);
};

// Each kernel keeps more independent accumulator chains than FMA latency × FMA pipes (4 × 2
// on Zen 4 and recent Intel cores, 4 × 4 on Neoverse V), so the pipes, not latency, limit it.
#if defined(__x86_64__)
__attribute__((target("avx512f,fma"))) float fma_avx512(std::int64_t steps, float seed) {
    constexpr int chains = 16;
    __m512 acc[chains];
    for (int j = 0; j < chains; ++j) acc[j] = _mm512_set1_ps(seed + float(j));
    const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-6f);
    for (std::int64_t i = 0; i < steps; ++i)
#pragma GCC unroll 16
        for (int j = 0; j < chains; ++j) acc[j] = _mm512_fmadd_ps(acc[j], a, b);
    for (int j = 1; j < chains; ++j) acc[0] = _mm512_add_ps(acc[0], acc[j]);
    // Not _mm512_reduce_add_ps: GCC 12 warns falsely inside it (docs/platforms.md).
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, acc[0]);
    float s = 0;
    for (float x : lanes) s += x;
    return s;
}

__attribute__((target("avx2,fma"))) float fma_avx2(std::int64_t steps, float seed) {
    constexpr int chains = 12; // of 16 YMM registers, leaving room for the two operands
    __m256 acc[chains];
    for (int j = 0; j < chains; ++j) acc[j] = _mm256_set1_ps(seed + float(j));
    const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-6f);
    for (std::int64_t i = 0; i < steps; ++i)
#pragma GCC unroll 12
        for (int j = 0; j < chains; ++j) acc[j] = _mm256_fmadd_ps(acc[j], a, b);
    for (int j = 1; j < chains; ++j) acc[0] = _mm256_add_ps(acc[0], acc[j]);
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, acc[0]);
    float s = 0;
    for (float x : lanes) s += x;
    return s;
}
#elif defined(__aarch64__)
float fma_neon(std::int64_t steps, float seed) {
    constexpr int chains = 24;
    float32x4_t acc[chains];
    for (int j = 0; j < chains; ++j) acc[j] = vdupq_n_f32(seed + float(j));
    const float32x4_t a = vdupq_n_f32(0.999999f), b = vdupq_n_f32(1e-6f);
    for (std::int64_t i = 0; i < steps; ++i)
#pragma GCC unroll 24
        for (int j = 0; j < chains; ++j) acc[j] = vfmaq_f32(b, acc[j], a);
    for (int j = 1; j < chains; ++j) acc[0] = vaddq_f32(acc[0], acc[j]);
    return vaddvq_f32(acc[0]);
}
#endif

std::vector<FmaKernel> fma_kernels() {
    std::vector<FmaKernel> k;
    const myattn::CpuFeatures& f = myattn::cpu_features();
#if defined(__x86_64__)
    if (f.avx512f && f.fma) k.push_back({"avx512", 16 * 16 * 2, fma_avx512});
    if (f.avx2 && f.fma) k.push_back({"avx2", 12 * 8 * 2, fma_avx2});
#elif defined(__aarch64__)
    if (f.neon) k.push_back({"neon", 24 * 4 * 2, fma_neon});
#endif
    return k;
}

void peak_fma(benchmark::State& state, FmaKernel kernel, int threads) {
    tbb::task_arena arena(threads);
    for (auto _ : state)
        arena.execute([&] {
            // static_partitioner: one index per thread of the arena.
            tbb::parallel_for(
                0, threads, [&](int i) { benchmark::DoNotOptimize(kernel.run(fma_steps, float(i))); },
                tbb::static_partitioner());
        });
    const double flops = double(state.iterations()) * threads * double(fma_steps) * kernel.flops_per_step;
    state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsRate);
}

constexpr std::size_t read_bytes = std::size_t(1) << 30;

// Allocated like the benchmarks' inputs (plain heap, 4 KiB pages) and written once, so that
// every page is mapped before the first timed pass.
const float* read_buffer() {
    static const std::vector<float> buffer(read_bytes / sizeof(float), 1.0f);
    return buffer.data();
}

// 32 independent sums: the compiler turns them into vector adds, and no add waits on the last.
float sum(const float* p, std::size_t n) {
    float acc[32] = {};
    for (std::size_t i = 0; i + 32 <= n; i += 32)
        for (std::size_t j = 0; j < 32; ++j) acc[j] += p[i + j];
    float s = 0;
    for (float a : acc) s += a;
    return s;
}

void peak_read_bw(benchmark::State& state, int threads) {
    const float* buffer = read_buffer();
    const std::size_t per_thread = read_bytes / sizeof(float) / std::size_t(threads);
    tbb::task_arena arena(threads);
    for (auto _ : state)
        arena.execute([&] {
            tbb::parallel_for(
                0, threads,
                [&](int i) { benchmark::DoNotOptimize(sum(buffer + std::size_t(i) * per_thread, per_thread)); },
                tbb::static_partitioner());
        });
    state.counters["GB/s"] =
        benchmark::Counter(double(state.iterations()) * double(read_bytes) * 1e-9, benchmark::Counter::kIsRate);
}

} // namespace

void register_peak() {
    for (const FmaKernel& k : fma_kernels())
        for (int t : thread_counts())
            benchmark::RegisterBenchmark(join({"peak/fma", k.isa, std::to_string(t)}).c_str(), peak_fma, k, t)
                ->UseRealTime();
    for (int t : thread_counts())
        benchmark::RegisterBenchmark(join({"peak/read_bw", std::to_string(t)}).c_str(), peak_read_bw, t)->UseRealTime();
}

} // namespace myattn_bench
