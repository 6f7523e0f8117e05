// The registry: every implementation this source tree knows, one row per kernel set (an ISA at
// one precision, in one variant), best first.
//
// Everything that lists, names, checks or picks an ISA or a kernel set derives from this table:
// parse_isa and isa_name, cpu_runs, compiled_isas / runnable_isas and the best-first choice
// (dispatch.cpp, over the f32 rows: every ISA has one), MYATTN_ISA and set_isa, the kernels of
// each (ISA, precision) (the first row of that pair this CPU runs: e.g. int8 on avx512 with VNNI,
// else avx512's own int8 fallback, never another ISA's), the CLI's --isa and --precision, the
// benchmarks and, through them, tools/bench-report.
//
// A row states what CMake and the compiler cannot know: the CPU features the kernels need (as
// src/cpu_features.cpp detects them), the register file they were blocked for, the register
// tile that blocking must give (the kernel file static_asserts it against its Blocking), and the
// kernel ID. `kernels` is the table accessor of src/isa/<variant>.cpp when CMake compiled it
// (MYATTN_HAVE_<VARIANT>, one line of cmake/MyattnIsa.cmake), and null otherwise.
//
// Plain constant data with internal linkage: the per-ISA objects include it for their
// static_asserts without sharing any code with the baseline objects (docs/platforms.md).
// MYATTN_HAVE_<NAME> is defined for the library, its per-ISA objects, the tests and the
// benchmarks alike, so that all of them see the same rows.
//
// Adding an implementation: src/isa/<variant>.cpp (its table from make_table<...>()), its
// accessor's declaration and its row here, and one myattn_isa(...) line in cmake/MyattnIsa.cmake
// (plus an `Isa` or `Precision` enumerator if the public API does not name it yet).
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include "kernels/table.hpp"
#include "myattn/isa.hpp"
#include "myattn/precision.hpp"

namespace myattn::detail {

struct Implementation {
    Isa isa;
    /// The ISA's name (isa_name).
    std::string_view name;
    Precision precision;
    /// The kernel set: the ISA's name, or the ISA's name and the extension it uses
    /// ("avx512vnni"). The last word of the kernel ID.
    std::string_view variant;
    /// CPU features the kernels need, all of them; unused slots are null.
    std::array<bool CpuFeatures::*, 9> needs;
    /// A feature whose CPUs run these kernels slower than the next row of the same ISA and
    /// precision (measured: docs/tuning.md), so that a MyAttn skips them there; null if none.
    /// They still run there when asked for by row (the tests do).
    bool CpuFeatures::*slower_with = nullptr;
    /// Architectural vector registers the kernels are blocked for (0: no SIMD blocking).
    std::size_t registers;
    /// Tile of the Linear micro-kernel: MR samples x NR output features, in registers, or on
    /// AMX's tiles (16 rows), whose kernels finish 8 rows at a time in registers; AVX512-VNNI's
    /// 16 rows are two register tiles of 8 over each panel. MR is also the samples per group of
    /// the fused forward (AMX's table Linears take two tiles, 32 rows).
    std::size_t mr, nr;
    /// Datatype, operation, tile and variant of the kernels, as `myattn info` shows them.
    std::string_view kernel_id;
    const KernelTable& (*kernels)();
};

// The table accessor of each implementation, defined in src/isa/<name>.cpp when it is compiled.
const KernelTable& avx512_kernels();
const KernelTable& avx512amx_int8_kernels();
const KernelTable& avx512vnni_int8_kernels();
const KernelTable& avx512_int8_kernels();
const KernelTable& avx2_kernels();
const KernelTable& avx2vnni_int8_kernels();
const KernelTable& avx2_int8_kernels();
const KernelTable& neon_kernels();
const KernelTable& neondot_int8_kernels();
const KernelTable& neon_int8_kernels();
const KernelTable& scalar_kernels();
const KernelTable& scalar_int8_kernels();
const KernelTable& avx512bf16_bf16_kernels();
const KernelTable& avx512_bf16_kernels();
const KernelTable& avx2_bf16_kernels();
const KernelTable& neon_bf16_kernels();
const KernelTable& scalar_bf16_kernels();

namespace {

// clang-format off
constexpr Implementation implementations[] = {
    {.isa = Isa::avx512, .name = "avx512", .precision = Precision::f32, .variant = "avx512",
     .needs = {&CpuFeatures::avx512f, &CpuFeatures::avx512bw, &CpuFeatures::avx512dq, &CpuFeatures::avx512vl,
               &CpuFeatures::fma},
     .registers = 32, .mr = 8, .nr = 32, .kernel_id = "f32-linear-8x32-avx512",
#ifdef MYATTN_HAVE_AVX512
     .kernels = avx512_kernels},
#else
     .kernels = nullptr},
#endif
    // AMX (Sapphire Rapids on): the dot products of whole 64-byte blocks on tiles, the rest with VNNI.
    {.isa = Isa::avx512, .name = "avx512", .precision = Precision::int8, .variant = "avx512amx",
     .needs = {&CpuFeatures::avx512f, &CpuFeatures::avx512bw, &CpuFeatures::avx512dq, &CpuFeatures::avx512vl,
               &CpuFeatures::fma, &CpuFeatures::avx512_vnni, &CpuFeatures::amx_tile, &CpuFeatures::amx_int8,
               &CpuFeatures::amx_granted},
     .registers = 32, .mr = 16, .nr = 32, .kernel_id = "i8-linear-16x32-avx512amx",
#ifdef MYATTN_HAVE_AVX512AMX
     .kernels = avx512amx_int8_kernels},
#else
     .kernels = nullptr},
#endif
    {.isa = Isa::avx512, .name = "avx512", .precision = Precision::int8, .variant = "avx512vnni",
     .needs = {&CpuFeatures::avx512f, &CpuFeatures::avx512bw, &CpuFeatures::avx512dq, &CpuFeatures::avx512vl,
               &CpuFeatures::fma, &CpuFeatures::avx512_vnni},
     .registers = 32, .mr = 16, .nr = 32, .kernel_id = "i8-linear-16x32-avx512vnni",
#ifdef MYATTN_HAVE_AVX512VNNI
     .kernels = avx512vnni_int8_kernels},
#else
     .kernels = nullptr},
#endif
    // AVX-512 without VNNI (Skylake-X): vpmaddubsw, 7-bit activations.
    {.isa = Isa::avx512, .name = "avx512", .precision = Precision::int8, .variant = "avx512",
     .needs = {&CpuFeatures::avx512f, &CpuFeatures::avx512bw, &CpuFeatures::avx512dq, &CpuFeatures::avx512vl,
               &CpuFeatures::fma},
     .registers = 32, .mr = 8, .nr = 32, .kernel_id = "i8-linear-8x32-avx512",
#ifdef MYATTN_HAVE_AVX512
     .kernels = avx512_int8_kernels},
#else
     .kernels = nullptr},
#endif
    {.isa = Isa::avx2, .name = "avx2", .precision = Precision::f32, .variant = "avx2",
     .needs = {&CpuFeatures::avx2, &CpuFeatures::fma},
     .registers = 16, .mr = 6, .nr = 16, .kernel_id = "f32-linear-6x16-avx2",
#ifdef MYATTN_HAVE_AVX2
     .kernels = avx2_kernels},
#else
     .kernels = nullptr},
#endif
    {.isa = Isa::avx2, .name = "avx2", .precision = Precision::int8, .variant = "avx2vnni",
     .needs = {&CpuFeatures::avx2, &CpuFeatures::fma, &CpuFeatures::avx_vnni},
     .registers = 16, .mr = 6, .nr = 16, .kernel_id = "i8-linear-6x16-avx2vnni",
#ifdef MYATTN_HAVE_AVX2VNNI
     .kernels = avx2vnni_int8_kernels},
#else
     .kernels = nullptr},
#endif
    // AVX2 without AVX-VNNI (Haswell to Zen 3): vpmaddubsw, 7-bit activations.
    {.isa = Isa::avx2, .name = "avx2", .precision = Precision::int8, .variant = "avx2",
     .needs = {&CpuFeatures::avx2, &CpuFeatures::fma},
     .registers = 16, .mr = 6, .nr = 16, .kernel_id = "i8-linear-6x16-avx2",
#ifdef MYATTN_HAVE_AVX2
     .kernels = avx2_int8_kernels},
#else
     .kernels = nullptr},
#endif
    {.isa = Isa::neon, .name = "neon", .precision = Precision::f32, .variant = "neon",
     .needs = {&CpuFeatures::neon},
     .registers = 32, .mr = 8, .nr = 8, .kernel_id = "f32-linear-8x8-neon",
#ifdef MYATTN_HAVE_NEON
     .kernels = neon_kernels},
#else
     .kernels = nullptr},
#endif
    {.isa = Isa::neon, .name = "neon", .precision = Precision::int8, .variant = "neondot",
     .needs = {&CpuFeatures::neon, &CpuFeatures::asimddp},
     .registers = 32, .mr = 8, .nr = 8, .kernel_id = "i8-linear-8x8-neondot",
#ifdef MYATTN_HAVE_NEONDOT
     .kernels = neondot_int8_kernels},
#else
     .kernels = nullptr},
#endif
    // Without the dot product (Cortex-A72, A53): widening multiplies, 8-bit activations.
    {.isa = Isa::neon, .name = "neon", .precision = Precision::int8, .variant = "neon",
     .needs = {&CpuFeatures::neon},
     .registers = 32, .mr = 8, .nr = 8, .kernel_id = "i8-linear-8x8-neon",
#ifdef MYATTN_HAVE_NEON
     .kernels = neon_int8_kernels},
#else
     .kernels = nullptr},
#endif
    // bf16 on the native dot product (kernels/bf16_dot_linear.hpp), where it is faster than
    // converting: on AMD Zen 5 vdpbf16ps runs at twice the FMA's rate; on Intel's cores from
    // Sapphire Rapids on at half. Those are told by AVX512-FP16, which AMD's lack: not by AMX,
    // which virtual machines often hide.
    {.isa = Isa::avx512, .name = "avx512", .precision = Precision::bf16, .variant = "avx512bf16",
     .needs = {&CpuFeatures::avx512f, &CpuFeatures::avx512bw, &CpuFeatures::avx512dq, &CpuFeatures::avx512vl,
               &CpuFeatures::fma, &CpuFeatures::avx512_bf16},
     .slower_with = &CpuFeatures::avx512_fp16,
     .registers = 32, .mr = 8, .nr = 32, .kernel_id = "bf16-linear-8x32-avx512bf16",
#ifdef MYATTN_HAVE_AVX512BF16
     .kernels = avx512bf16_bf16_kernels},
#else
     .kernels = nullptr},
#endif
    // bf16: the float kernels over bf16 weights, converted on load (kernels/bf16.hpp; when the
    // native bf16 dot product is not faster: docs/tuning.md).
    {.isa = Isa::avx512, .name = "avx512", .precision = Precision::bf16, .variant = "avx512",
     .needs = {&CpuFeatures::avx512f, &CpuFeatures::avx512bw, &CpuFeatures::avx512dq, &CpuFeatures::avx512vl,
               &CpuFeatures::fma},
     .registers = 32, .mr = 8, .nr = 32, .kernel_id = "bf16-linear-8x32-avx512",
#ifdef MYATTN_HAVE_AVX512
     .kernels = avx512_bf16_kernels},
#else
     .kernels = nullptr},
#endif
    {.isa = Isa::avx2, .name = "avx2", .precision = Precision::bf16, .variant = "avx2",
     .needs = {&CpuFeatures::avx2, &CpuFeatures::fma},
     .registers = 16, .mr = 6, .nr = 16, .kernel_id = "bf16-linear-6x16-avx2",
#ifdef MYATTN_HAVE_AVX2
     .kernels = avx2_bf16_kernels},
#else
     .kernels = nullptr},
#endif
    {.isa = Isa::neon, .name = "neon", .precision = Precision::bf16, .variant = "neon",
     .needs = {&CpuFeatures::neon},
     .registers = 32, .mr = 8, .nr = 8, .kernel_id = "bf16-linear-8x8-neon",
#ifdef MYATTN_HAVE_NEON
     .kernels = neon_bf16_kernels},
#else
     .kernels = nullptr},
#endif
    // The plain-loop reference in float, over unpacked weights: always compiled, runs anywhere.
    {.isa = Isa::scalar, .name = "scalar", .precision = Precision::f32, .variant = "scalar",
     .needs = {},
     .registers = 0, .mr = 1, .nr = 1, .kernel_id = "f32-linear-1x1-scalar",
     .kernels = scalar_kernels},
    // The int8 reference (kernels/quantize.hpp, 8-bit activations), in plain loops.
    {.isa = Isa::scalar, .name = "scalar", .precision = Precision::int8, .variant = "scalar",
     .needs = {},
     .registers = 0, .mr = 1, .nr = 1, .kernel_id = "i8-linear-1x1-scalar",
     .kernels = scalar_int8_kernels},
    // The bf16 reference: the float loops over the weights rounded to bf16.
    {.isa = Isa::scalar, .name = "scalar", .precision = Precision::bf16, .variant = "scalar",
     .needs = {},
     .registers = 0, .mr = 1, .nr = 1, .kernel_id = "bf16-linear-1x1-scalar",
     .kernels = scalar_bf16_kernels},
};
// clang-format on

/// The row of `isa`'s `variant` at precision p (by default the ISA's f32 row, which every
/// enumerator has: see the static_assert below).
constexpr const Implementation& implementation(Isa isa, Precision p = Precision::f32, std::string_view variant = {}) {
    for (const Implementation& i : implementations)
        if (i.isa == isa && i.precision == p && i.variant == (variant.empty() ? i.name : variant)) return i;
    throw "no such registry row";
}

/// The datatype word of a kernel ID.
constexpr std::string_view dtype_word(Precision p) {
    return p == Precision::f32 ? "f32" : p == Precision::int8 ? "i8" : "bf16";
}

/// "<dtype>-linear-<mr>x<nr>-<variant>", the variant named after its ISA first, checked at
/// compile time so that an ID never contradicts the tile.
consteval bool id_matches_tile(const Implementation& i) {
    auto number = [](std::string_view& s, std::size_t n) {
        std::size_t digits = 1;
        for (std::size_t m = n; m >= 10; m /= 10) ++digits;
        if (s.size() < digits) return false;
        for (std::size_t k = digits; k-- > 0; n /= 10)
            if (s[k] != char('0' + n % 10)) return false;
        s.remove_prefix(digits);
        return true;
    };
    std::string_view s = i.kernel_id;
    const std::string_view dtype = dtype_word(i.precision);
    if (!s.starts_with(dtype)) return false;
    s.remove_prefix(dtype.size());
    constexpr std::string_view op = "-linear-";
    if (!s.starts_with(op)) return false;
    s.remove_prefix(op.size());
    if (!number(s, i.mr) || !s.starts_with('x')) return false;
    s.remove_prefix(1);
    if (!number(s, i.nr) || !s.starts_with('-')) return false;
    s.remove_prefix(1);
    return s == i.variant && i.variant.starts_with(i.name);
}

consteval bool registry_consistent() {
    for (const Implementation& i : implementations)
        if (!id_matches_tile(i)) return false;
    for (Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512, Isa::neon})
        (void)implementation(isa); // fails to compile if an f32 row is missing
    // The scalar rows come last, so that the best-first choice falls back to them.
    bool scalar_seen = false;
    for (const Implementation& i : implementations) {
        if (scalar_seen && i.isa != Isa::scalar) return false;
        scalar_seen = scalar_seen || i.isa == Isa::scalar;
    }
    return true;
}
static_assert(registry_consistent(), "every Isa has an f32 row; kernel IDs match tiles; scalar rows come last");

} // namespace
} // namespace myattn::detail
