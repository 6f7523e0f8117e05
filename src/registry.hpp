// The registry: every implementation this source tree knows, one row each, best first.
//
// Everything that lists, names, checks or picks an ISA derives from this table: parse_isa and
// isa_name, cpu_runs, compiled_isas / runnable_isas and the best-first choice (dispatch.cpp),
// MYATTN_ISA and set_isa, the CLI's --isa, the benchmarks and, through them, tools/bench-report.
//
// A row states what CMake and the compiler cannot know: the CPU features the kernels need (as
// src/cpu_features.cpp detects them), the register file they were blocked for, the register
// tile that blocking must give (the kernel file static_asserts it against its Blocking), and the
// kernel ID. `kernels` is the table accessor of src/isa/<name>.cpp when CMake compiled it
// (MYATTN_HAVE_<NAME>, one line of cmake/MyattnIsa.cmake), and null otherwise.
//
// Plain constant data with internal linkage: the per-ISA objects include it for their
// static_asserts without sharing any code with the baseline objects (docs/platforms.md).
// MYATTN_HAVE_<NAME> is defined for the library, its per-ISA objects, the tests and the
// benchmarks alike, so that all of them see the same rows.
//
// Adding an implementation: src/isa/<name>.cpp (its table from make_table<Arch, Isa::<name>>()),
// its accessor's declaration and its row here, and one myattn_isa(...) line in
// cmake/MyattnIsa.cmake (plus an `Isa` enumerator if the public API does not name it yet).
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include "kernels/table.hpp"
#include "myattn/isa.hpp"

namespace myattn::detail {

struct Implementation {
    Isa isa;
    std::string_view name;
    /// CPU features the kernels need, all of them; unused slots are null.
    std::array<bool CpuFeatures::*, 6> needs;
    /// Architectural vector registers the kernels are blocked for (0: no SIMD blocking).
    std::size_t registers;
    /// Register tile of the Linear micro-kernel: MR samples x NR output features.
    std::size_t mr, nr;
    /// Datatype, operation, tile and ISA of the kernels, as `myattn info` shows them.
    std::string_view kernel_id;
    const KernelTable& (*kernels)();
};

// The table accessor of each implementation, defined in src/isa/<name>.cpp when it is compiled.
const KernelTable& avx512_kernels();
const KernelTable& avx2_kernels();
const KernelTable& neon_kernels();
const KernelTable& scalar_kernels();

namespace {

// clang-format off
constexpr Implementation implementations[] = {
    {.isa = Isa::avx512, .name = "avx512",
     .needs = {&CpuFeatures::avx512f, &CpuFeatures::avx512bw, &CpuFeatures::avx512dq, &CpuFeatures::avx512vl,
               &CpuFeatures::fma},
     .registers = 32, .mr = 8, .nr = 32, .kernel_id = "f32-linear-8x32-avx512",
#ifdef MYATTN_HAVE_AVX512
     .kernels = avx512_kernels},
#else
     .kernels = nullptr},
#endif
    {.isa = Isa::avx2, .name = "avx2",
     .needs = {&CpuFeatures::avx2, &CpuFeatures::fma},
     .registers = 16, .mr = 6, .nr = 16, .kernel_id = "f32-linear-6x16-avx2",
#ifdef MYATTN_HAVE_AVX2
     .kernels = avx2_kernels},
#else
     .kernels = nullptr},
#endif
    {.isa = Isa::neon, .name = "neon",
     .needs = {&CpuFeatures::neon},
     .registers = 32, .mr = 8, .nr = 8, .kernel_id = "f32-linear-8x8-neon",
#ifdef MYATTN_HAVE_NEON
     .kernels = neon_kernels},
#else
     .kernels = nullptr},
#endif
    // The plain-loop reference in float, over unpacked weights: always compiled, runs anywhere.
    {.isa = Isa::scalar, .name = "scalar",
     .needs = {},
     .registers = 0, .mr = 1, .nr = 1, .kernel_id = "f32-linear-1x1-scalar",
     .kernels = scalar_kernels},
};
// clang-format on

/// The row of `isa` (every enumerator has one: see the static_assert below).
constexpr const Implementation& implementation(Isa isa) {
    for (const Implementation& i : implementations)
        if (i.isa == isa) return i;
    throw "an Isa without a registry row";
}

/// "f32-linear-<mr>x<nr>-<name>", checked at compile time so that an ID never contradicts the tile.
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
    constexpr std::string_view head = "f32-linear-";
    if (!s.starts_with(head)) return false;
    s.remove_prefix(head.size());
    if (!number(s, i.mr) || !s.starts_with('x')) return false;
    s.remove_prefix(1);
    if (!number(s, i.nr) || !s.starts_with('-')) return false;
    s.remove_prefix(1);
    return s == i.name;
}

consteval bool registry_consistent() {
    for (const Implementation& i : implementations)
        if (!id_matches_tile(i)) return false;
    for (Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512, Isa::neon})
        (void)implementation(isa); // fails to compile if a row is missing
    return implementations[std::size(implementations) - 1].isa == Isa::scalar;
}
static_assert(registry_consistent(), "every Isa has one row; kernel IDs match tiles; scalar comes last");

} // namespace
} // namespace myattn::detail
