// Instruction-set selection. Kernels are compiled once per ISA; one is chosen at run time.
//
// The choice is made once, at first use: MYATTN_ISA (an isa_name) if set, else the best ISA
// this CPU runs. Asking for an ISA that is unknown, not compiled in, or not runnable
// here is an error (IsaError), never a silent fallback.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "myattn/export.hpp"

namespace myattn {

enum class Isa { scalar, avx2, avx512, neon };

/// "scalar", "avx2", "avx512", "neon".
[[nodiscard]] MYATTN_EXPORT std::string_view isa_name(Isa isa) noexcept;
/// What the ISA's kernels are: datatype, operation, register tile and ISA, e.g.
/// "f32-linear-8x32-avx512" (8 samples x 32 output features per Linear micro-kernel step).
[[nodiscard]] MYATTN_EXPORT std::string_view kernel_id(Isa isa) noexcept;
/// The inverse of isa_name; nullopt for an unknown name.
[[nodiscard]] MYATTN_EXPORT std::optional<Isa> parse_isa(std::string_view name) noexcept;

/// The names of `isas`, separated by `separator`, e.g. "avx512 avx2 scalar".
[[nodiscard]] MYATTN_EXPORT std::string to_string(std::span<const Isa> isas, std::string_view separator = " ");

/// ISAs whose kernels are in this build, best first.
[[nodiscard]] MYATTN_EXPORT std::vector<Isa> compiled_isas();
/// Compiled ISAs this CPU and OS can run, best first (scalar is always among them).
[[nodiscard]] MYATTN_EXPORT std::vector<Isa> runnable_isas();
/// The ISA new MyAttn objects use. The first call makes the choice; throws IsaError if
/// MYATTN_ISA names an ISA that cannot be used.
[[nodiscard]] MYATTN_EXPORT Isa active_isa();
/// Why active_isa() is what it is, in one human-readable sentence.
[[nodiscard]] MYATTN_EXPORT std::string active_isa_reason();
/// Force an ISA for the process (overrides MYATTN_ISA). Throws IsaError if it is not runnable.
MYATTN_EXPORT void set_isa(Isa isa);

/// CPU features relevant to dispatch, as detected (CPUID + XGETBV on x86).
struct CpuFeatures {
    bool avx2 = false;    // AVX2 and OS support for YMM state
    bool fma = false;     // FMA3
    bool avx512f = false; // AVX-512 Foundation and OS support for ZMM and opmask state
    bool avx512bw = false;
    bool avx512dq = false;
    bool avx512vl = false;
    bool avx512_vnni = false; // vpdpbusd on zmm (and AVX-512 state)
    bool avx_vnni = false;    // vpdpbusd on ymm, VEX-encoded (and AVX state)
    bool avx512_bf16 = false; // vdpbf16ps, vcvtne2ps2bf16 (and AVX-512 state)
    bool avx512_fp16 = false; // AVX512-FP16 (and AVX-512 state): Intel's cores from Sapphire Rapids on
    bool fp512 = false;       // AMD: AVX-512 runs on a 512-bit wide FP datapath (Zen 5's desktop and server cores)
    bool amx_tile = false;    // AMX tiles: ldtilecfg, tileloadd, tilestored (and the OS saves their state)
    bool amx_int8 = false;    // AMX tdpbusd: u8 x s8 tile dot products (and AMX tile state)
    bool amx_granted = false; // the OS lets this process use the AMX tile data (Linux: arch_prctl)
    bool neon = false;        // AArch64 Advanced SIMD (always present on AArch64)
    bool asimddp = false;     // AArch64 dot product: sdot, udot (HWCAP_ASIMDDP)
    bool arm_bf16 = false;    // AArch64 BF16: bfdot, bfmmla (HWCAP2_BF16)
};

/// The features of the CPU this process runs on.
[[nodiscard]] MYATTN_EXPORT const CpuFeatures& cpu_features();
/// Human-readable list in /proc/cpuinfo's names, e.g. "avx2 fma avx512f avx512bw avx512dq avx512vl avx512_vnni".
[[nodiscard]] MYATTN_EXPORT std::string to_string(const CpuFeatures& f);
/// Whether a CPU with features `f` has every feature `isa` needs (ignores whether it was
/// compiled in).
[[nodiscard]] MYATTN_EXPORT bool cpu_runs(Isa isa, const CpuFeatures& f) noexcept;

} // namespace myattn
