// The machine's limits, measured here rather than taken from a data sheet: peak/fma/<isa>/<threads>
// runs independent FMA chains on every thread; peak/int8/<kernels>/<threads> the int8 step of the
// int8 kernels, AMX's tile step included (GOP/s: two per multiply-add, as FLOP/s counts an FMA);
// peak/read/<level>/<threads> sums a buffer held in L2 (half of each core's L2 per thread), in L3
// (half of it, split over the threads; l3_<N>MiB: smaller buffers beyond L2) or in memory (at
// least 1 GiB and 4 × L3), the sizes from the caches the library detects.
// tools/bench-report derives each forward's machine bound from them. peak/bf16/<probe>/<threads>
// compares the native bf16 dot product with converting bf16 to float on load (docs/tuning.md);
// peak/fork_join/<threads> what a parallel step costs beyond its work.
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "bench.hpp"
#include "cache_info.hpp"

#if defined(__x86_64__)
#include <immintrin.h>

#include "isa/amx_tiles.hpp"
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
    const char* counter = "GFLOP/s";
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

// The int8 steps of the kernels (src/isa/*.cpp): u8 x s8 products summed in fours into int32
// lanes, on independent chains.
#if defined(__x86_64__)
__attribute__((target("avx512f,avx512bw,avx512vnni"))) float dot_avx512vnni(std::int64_t steps, float seed) {
    constexpr int chains = 16;
    __m512i acc[chains];
    for (int j = 0; j < chains; ++j) acc[j] = _mm512_set1_epi32(int(seed) + j);
    const __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
    for (std::int64_t i = 0; i < steps; ++i)
#pragma GCC unroll 16
        for (int j = 0; j < chains; ++j) acc[j] = _mm512_dpbusd_epi32(acc[j], a, b);
    for (int j = 1; j < chains; ++j) acc[0] = _mm512_add_epi32(acc[0], acc[j]);
    alignas(64) std::int32_t lanes[16];
    _mm512_store_si512(lanes, acc[0]);
    return float(lanes[0]);
}

__attribute__((target("avx2,avxvnni"))) float dot_avx2vnni(std::int64_t steps, float seed) {
    constexpr int chains = 12;
    __m256i acc[chains];
    for (int j = 0; j < chains; ++j) acc[j] = _mm256_set1_epi32(int(seed) + j);
    const __m256i a = _mm256_set1_epi8(3), b = _mm256_set1_epi8(-2);
    for (std::int64_t i = 0; i < steps; ++i)
#pragma GCC unroll 12
        for (int j = 0; j < chains; ++j) acc[j] = _mm256_dpbusd_avx_epi32(acc[j], a, b);
    for (int j = 1; j < chains; ++j) acc[0] = _mm256_add_epi32(acc[0], acc[j]);
    alignas(32) std::int32_t lanes[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), acc[0]);
    return float(lanes[0]);
}

// Without VNNI: vpmaddubsw, vpmaddwd by ones, vpaddd per step. Their product does not depend on
// the chain, so the compiler would compute it once for the whole loop: `opaque` makes it treat
// the activations as new before every step (it emits no instruction).
template <class V>
inline void opaque(V& v) {
    asm("" : "+v"(v));
}

__attribute__((target("avx512f,avx512bw"))) float dot_avx512(std::int64_t steps, float seed) {
    constexpr int chains = 12;
    __m512i acc[chains];
    for (int j = 0; j < chains; ++j) acc[j] = _mm512_set1_epi32(int(seed) + j);
    __m512i a = _mm512_set1_epi8(3);
    const __m512i b = _mm512_set1_epi8(-2), ones = _mm512_set1_epi16(1);
    for (std::int64_t i = 0; i < steps; ++i)
#pragma GCC unroll 12
        for (int j = 0; j < chains; ++j) {
            opaque(a);
            acc[j] = _mm512_add_epi32(acc[j], _mm512_madd_epi16(_mm512_maddubs_epi16(a, b), ones));
        }
    for (int j = 1; j < chains; ++j) acc[0] = _mm512_add_epi32(acc[0], acc[j]);
    alignas(64) std::int32_t lanes[16];
    _mm512_store_si512(lanes, acc[0]);
    return float(lanes[0]);
}

__attribute__((target("avx2"))) float dot_avx2(std::int64_t steps, float seed) {
    constexpr int chains = 8;
    __m256i acc[chains];
    for (int j = 0; j < chains; ++j) acc[j] = _mm256_set1_epi32(int(seed) + j);
    __m256i a = _mm256_set1_epi8(3);
    const __m256i b = _mm256_set1_epi8(-2), ones = _mm256_set1_epi16(1);
    for (std::int64_t i = 0; i < steps; ++i)
#pragma GCC unroll 8
        for (int j = 0; j < chains; ++j) {
            opaque(a);
            acc[j] = _mm256_add_epi32(acc[j], _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), ones));
        }
    for (int j = 1; j < chains; ++j) acc[0] = _mm256_add_epi32(acc[0], acc[j]);
    alignas(32) std::int32_t lanes[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), acc[0]);
    return float(lanes[0]);
}

// AMX: the 32-row tile step of the AMX kernels, tdpbusd on 2 x 2 tiles of 16 x 16 int32 sums
// (four independent chains), activations and weights loaded once from pseudo-random bytes:
// zeroed tiles ran faster than any real data does.
__attribute__((target("amx-tile,amx-int8"))) float dot_avx512amx(std::int64_t steps, float seed) {
    static constexpr myattn::detail::TileConfig config = myattn::detail::tile_config(32);
    alignas(64) std::uint8_t bytes[4][16 * 64];
    std::uint32_t x = 2463534242u + static_cast<std::uint32_t>(seed);
    for (auto& tile : bytes)
        for (std::uint8_t& b : tile) {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            b = static_cast<std::uint8_t>(x);
        }
    _tile_loadconfig(&config);
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    _tile_loadd(4, bytes[0], 64);
    _tile_loadd(5, bytes[1], 64);
    _tile_loadd(6, bytes[2], 64);
    _tile_loadd(7, bytes[3], 64);
    for (std::int64_t i = 0; i < steps; ++i) {
        _tile_dpbusd(0, 4, 6);
        _tile_dpbusd(1, 4, 7);
        _tile_dpbusd(2, 5, 6);
        _tile_dpbusd(3, 5, 7);
    }
    alignas(64) std::int32_t sums[16 * 16];
    _tile_stored(0, sums, 64);
    _tile_release();
    return float(sums[0]);
}
#endif

/// The int8 steps this CPU runs, as FmaKernels: `flops_per_step` counts two ops per multiply-add.
std::vector<FmaKernel> int8_kernels() {
    std::vector<FmaKernel> k;
#if defined(__x86_64__)
    const myattn::CpuFeatures& f = myattn::cpu_features();
    // Constant operands: the compiler cannot fold the dot products, whose results it cannot know.
    if (f.amx_tile && f.amx_int8 && f.amx_granted)
        k.push_back({"avx512amx", 4 * 16 * 16 * 64 * 2, dot_avx512amx, "GOP/s"});
    if (f.avx512f && f.avx512bw && f.avx512_vnni) k.push_back({"avx512vnni", 16 * 64 * 2, dot_avx512vnni, "GOP/s"});
    if (f.avx512f && f.avx512bw) k.push_back({"avx512", 12 * 64 * 2, dot_avx512, "GOP/s"});
    if (f.avx2 && f.avx_vnni) k.push_back({"avx2vnni", 12 * 32 * 2, dot_avx2vnni, "GOP/s"});
    if (f.avx2) k.push_back({"avx2", 8 * 32 * 2, dot_avx2, "GOP/s"});
#endif
    return k;
}

// The bf16 probes. `dot`: vdpbf16ps, 16 chains, each instruction 32 multiply-adds (pairs of
// bf16 products into float lanes). `convert`: what the bf16 Linear does instead: per step, one
// vector of bf16 pairs loaded (from a 1 KiB buffer, L1-resident), widened by a shift and a mask
// into two float vectors, each fed to 8 FMAs (the AVX-512 tile: 8 samples x 2 vectors).
#if defined(__x86_64__)
__attribute__((target("avx512f,avx512bf16"))) float bf16_dot_avx512(std::int64_t steps, float seed) {
    constexpr int chains = 16;
    __m512 acc[chains];
    for (int j = 0; j < chains; ++j) acc[j] = _mm512_set1_ps(seed + float(j));
    const auto a = (__m512bh)_mm512_set1_epi16(0x3f80), b = (__m512bh)_mm512_set1_epi16(0x3586); // 1, ~1e-6
    for (std::int64_t i = 0; i < steps; ++i)
#pragma GCC unroll 16
        for (int j = 0; j < chains; ++j) acc[j] = _mm512_dpbf16_ps(acc[j], a, b);
    for (int j = 1; j < chains; ++j) acc[0] = _mm512_add_ps(acc[0], acc[j]);
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, acc[0]);
    float s = 0;
    for (float x : lanes) s += x;
    return s;
}

// GCC 12 warns falsely inside _mm512_slli_epi32 (docs/platforms.md).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
__attribute__((target("avx512f,fma"))) float bf16_convert_avx512(std::int64_t steps, float seed) {
    constexpr int rows = 8, buffer_vectors = 16;
    alignas(64) static std::uint32_t words[buffer_vectors * 16];
    for (std::uint32_t& w : words) w = 0x3f803f80u; // 1.0 in both halves
    __m512 acc[rows][2];
    for (int m = 0; m < rows; ++m) acc[m][0] = acc[m][1] = _mm512_set1_ps(seed + float(m));
    const __m512i high = _mm512_set1_epi32(int(0xffff0000u));
    for (std::int64_t i = 0; i < steps; ++i) {
        const __m512i u = _mm512_load_si512(words + i % buffer_vectors * 16);
        const __m512 w0 = _mm512_castsi512_ps(_mm512_slli_epi32(u, 16)),
                     w1 = _mm512_castsi512_ps(_mm512_and_si512(u, high));
#pragma GCC unroll 8
        for (int m = 0; m < rows; ++m) {
            const __m512 x = _mm512_set1_ps(1e-6f * float(m + 1));
            acc[m][0] = _mm512_fmadd_ps(x, w0, acc[m][0]);
            acc[m][1] = _mm512_fmadd_ps(x, w1, acc[m][1]);
        }
    }
    for (int m = 1; m < rows; ++m) acc[0][0] = _mm512_add_ps(acc[0][0], _mm512_add_ps(acc[m][0], acc[m][1]));
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, acc[0][0]);
    float s = 0;
    for (float x : lanes) s += x;
    return s;
}
#pragma GCC diagnostic pop
#endif

std::vector<FmaKernel> bf16_kernels() {
    std::vector<FmaKernel> k;
#if defined(__x86_64__)
    const myattn::CpuFeatures& f = myattn::cpu_features();
    if (f.avx512f && f.avx512_bf16) k.push_back({"dot-avx512bf16", 16 * 32 * 2, bf16_dot_avx512});
    if (f.avx512f && f.fma) k.push_back({"convert-avx512", 8 * 2 * 16 * 2, bf16_convert_avx512});
#endif
    return k;
}

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
    state.counters[kernel.counter] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsRate);
}

// Reads with the widest loads this CPU has, into 8 independent sums of vectors (add latency 4 ×
// 2 pipes), so that the loads, not the adds, limit the rate. n is a multiple of 128 floats.
struct ReadKernel {
    const char* isa;
    float (*run)(const float* p, std::size_t n);
};

#if defined(__x86_64__)
__attribute__((target("avx512f"))) float read_avx512(const float* p, std::size_t n) {
    __m512 acc[8];
    for (__m512& a : acc) a = _mm512_setzero_ps();
    for (std::size_t i = 0; i < n; i += 128)
#pragma GCC unroll 8
        for (int j = 0; j < 8; ++j) acc[j] = _mm512_add_ps(acc[j], _mm512_load_ps(p + i + 16 * j));
    for (int j = 1; j < 8; ++j) acc[0] = _mm512_add_ps(acc[0], acc[j]);
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, acc[0]);
    float s = 0;
    for (float x : lanes) s += x;
    return s;
}

__attribute__((target("avx2"))) float read_avx2(const float* p, std::size_t n) {
    __m256 acc[8];
    for (__m256& a : acc) a = _mm256_setzero_ps();
    for (std::size_t i = 0; i < n; i += 64)
#pragma GCC unroll 8
        for (int j = 0; j < 8; ++j) acc[j] = _mm256_add_ps(acc[j], _mm256_load_ps(p + i + 8 * j));
    for (int j = 1; j < 8; ++j) acc[0] = _mm256_add_ps(acc[0], acc[j]);
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, acc[0]);
    float s = 0;
    for (float x : lanes) s += x;
    return s;
}
#elif defined(__aarch64__)
float read_neon(const float* p, std::size_t n) {
    float32x4_t acc[8];
    for (float32x4_t& a : acc) a = vdupq_n_f32(0);
    for (std::size_t i = 0; i < n; i += 32)
#pragma GCC unroll 8
        for (int j = 0; j < 8; ++j) acc[j] = vaddq_f32(acc[j], vld1q_f32(p + i + 4 * j));
    for (int j = 1; j < 8; ++j) acc[0] = vaddq_f32(acc[0], acc[j]);
    return vaddvq_f32(acc[0]);
}
#endif

// 32 independent sums: the compiler turns them into vector adds of the baseline ISA.
float read_baseline(const float* p, std::size_t n) {
    float acc[32] = {};
    for (std::size_t i = 0; i < n; i += 32)
        for (std::size_t j = 0; j < 32; ++j) acc[j] += p[i + j];
    float s = 0;
    for (float a : acc) s += a;
    return s;
}

ReadKernel read_kernel() {
    [[maybe_unused]] const myattn::CpuFeatures& f = myattn::cpu_features();
#if defined(__x86_64__)
    if (f.avx512f) return {"avx512", read_avx512};
    if (f.avx2) return {"avx2", read_avx2};
#elif defined(__aarch64__)
    if (f.neon) return {"neon", read_neon};
#endif
    return {"baseline", read_baseline};
}

constexpr std::size_t floats_per_line = 128; // the read kernels' step: 512 bytes
constexpr std::size_t mib = std::size_t(1) << 20;

std::size_t round_down(std::size_t floats) { return floats / floats_per_line * floats_per_line; }

struct ReadProbe {
    std::string level; // l2, l3_<MiB>MiB, l3 or dram
    std::size_t floats_per_thread;
};

/// The read probes of `threads` threads: half of each core's L2 per thread; half of the shared
/// L3, and, below it, buffers from twice the threads' L2 up in steps of 2 (how much of the L3 a
/// process really keeps varies, above all in a guest that shares it); memory, at least 1 GiB and
/// 4 × L3.
std::vector<ReadProbe> read_probes(int threads) {
    const myattn::detail::CacheSizes& c = myattn::detail::cache_sizes();
    const std::size_t t = std::size_t(threads), f = sizeof(float);
    std::vector<ReadProbe> probes{{"l2", round_down(c.l2 / 2 / f)}};
    std::size_t size = mib;
    while (size < 2 * c.l2 * t) size *= 2;
    for (; size < c.l3 / 2; size *= 2)
        probes.push_back({"l3_" + std::to_string(size / mib) + "MiB", round_down(size / f / t)});
    probes.push_back({"l3", round_down(c.l3 / 2 / f / t)});
    probes.push_back({"dram", round_down(std::max(1024 * mib, 4 * c.l3) / f / t)});
    return probes;
}

// One buffer for every probe, allocated like the benchmarks' inputs (plain heap pages) and
// written once, so that every page is mapped before the first timed pass. Each thread reads
// its own slice from the start; the smaller probes use the first floats of each slice.
const float* read_buffer() {
    static const std::vector<float> buffer = [] {
        std::size_t floats = 0;
        for (int t : thread_counts())
            for (const ReadProbe& p : read_probes(t))
                floats = std::max(floats, p.floats_per_thread * std::size_t(t) + floats_per_line);
        return std::vector<float>(floats, 1.0f);
    }();
    return buffer.data();
}

void peak_read(benchmark::State& state, ReadKernel kernel, std::size_t n, int threads) {
    const std::size_t bytes = n * sizeof(float);
    // The slices start on a 64-byte line, as the aligned loads need.
    const float* base = read_buffer();
    base += (64 - reinterpret_cast<std::uintptr_t>(base) % 64) % 64 / sizeof(float);
    // A cache-sized slice is read several times per iteration (about 32 MiB per thread), so that
    // the arena's start-up does not count.
    const std::size_t passes = std::max<std::size_t>(1, 32 * mib / bytes);
    tbb::task_arena arena(threads);
    for (auto _ : state)
        arena.execute([&] {
            tbb::parallel_for(
                0, threads,
                [&](int i) {
                    const float* p = base + std::size_t(i) * n;
                    for (std::size_t r = 0; r < passes; ++r) benchmark::DoNotOptimize(kernel.run(p, n));
                },
                tbb::static_partitioner());
        });
    const double total = double(bytes) * double(threads);
    state.counters["GB/s"] =
        benchmark::Counter(double(state.iterations()) * double(passes) * total * 1e-9, benchmark::Counter::kIsRate);
    state.counters["buffer_MiB"] = total / double(mib);
    state.SetLabel(kernel.isa);
}

// A dependent chain of integer steps (a multiply and an add each): work that takes the same time
// on any thread and that the compiler cannot shorten.
std::uint64_t chain(std::uint64_t x, int steps) {
    for (int i = 0; i < steps; ++i) {
        x = x * 6364136223846793005u + 1442695040888963407u;
        benchmark::DoNotOptimize(x);
    }
    return x;
}

constexpr int chain_steps = 1024; // about a microsecond: a task of a small batch's size

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// What a parallel step costs beyond its work: each iteration runs a tbb::parallel_for of one
// chain per thread (the library's own partitioner), in an arena of `threads`, as a forward on
// that many threads does. overhead_us = the time per call minus one chain's time on the calling
// thread alone: the spawn, the other threads taking their tasks, and the join.
void peak_fork_join(benchmark::State& state, int threads) {
    tbb::task_arena arena(threads);
    arena.execute([&] {
        constexpr int alone_runs = 2000;
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < alone_runs; ++i) benchmark::DoNotOptimize(chain(std::uint64_t(i), chain_steps));
        const double alone = seconds_since(t0) / alone_runs;
        const auto t1 = std::chrono::steady_clock::now();
        for (auto _ : state)
            tbb::parallel_for(tbb::blocked_range<int>(0, threads), [](const tbb::blocked_range<int>& r) {
                for (int i = r.begin(); i < r.end(); ++i)
                    benchmark::DoNotOptimize(chain(std::uint64_t(i), chain_steps));
            });
        const double per_call = seconds_since(t1) / double(state.iterations());
        state.counters["overhead_us"] = (per_call - alone) * 1e6;
        state.counters["work_us"] = alone * 1e6;
    });
}

} // namespace

void register_peak() {
    for (const FmaKernel& k : fma_kernels())
        for (int t : thread_counts())
            benchmark::RegisterBenchmark(join({"peak/fma", k.isa, std::to_string(t)}).c_str(), peak_fma, k, t)
                ->UseRealTime();
    for (const FmaKernel& k : int8_kernels())
        for (int t : thread_counts())
            benchmark::RegisterBenchmark(join({"peak/int8", k.isa, std::to_string(t)}).c_str(), peak_fma, k, t)
                ->UseRealTime();
    for (const FmaKernel& k : bf16_kernels())
        for (int t : thread_counts())
            benchmark::RegisterBenchmark(join({"peak/bf16", k.isa, std::to_string(t)}).c_str(), peak_fma, k, t)
                ->UseRealTime();
    for (int t : thread_counts())
        if (t > 1)
            benchmark::RegisterBenchmark(join({"peak/fork_join", std::to_string(t)}).c_str(), peak_fork_join, t)
                ->UseRealTime();
    const ReadKernel read = read_kernel();
    for (int t : thread_counts())
        for (const ReadProbe& p : read_probes(t))
            benchmark::RegisterBenchmark(join({"peak/read", p.level, std::to_string(t)}).c_str(), peak_read, read,
                                         p.floats_per_thread, t)
                ->UseRealTime();
}

} // namespace myattn_bench
