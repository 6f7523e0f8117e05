// ISA choice, split from CPU detection so tests can feed it made-up feature sets.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "kernels/table.hpp"
#include "myattn/isa.hpp"
#include "registry.hpp"

namespace myattn::detail {

struct IsaChoice {
    Isa isa;
    std::string reason;
};

/// Whether a CPU with features `f` has every feature `impl` needs.
bool runs_on(const Implementation& impl, const CpuFeatures& f) noexcept;

/// The registry rows whose kernels are in this build, best first.
std::span<const Implementation> compiled_implementations();

/// Picks the ISA: `forced` (MYATTN_ISA's value, or null when unset) if it names one of
/// `compiled` that `cpu` runs, else IsaError; without `forced`, the first of `compiled` (best
/// first) that `cpu` runs. Never returns an ISA the CPU lacks.
IsaChoice choose_isa(const CpuFeatures& cpu, std::span<const Implementation> compiled, const char* forced);

/// The kernels a CPU with features `cpu` runs for `isa` at precision p: the first of `compiled`
/// (best first) of that ISA and precision that the CPU runs and is not known to run slower
/// (Implementation::slower_with), so an ISA without the extension of its best kernels falls
/// back to its own others. Null if the CPU cannot run `isa` at all or
/// no such kernels are compiled: never another ISA's.
const Implementation* choose_kernels(const CpuFeatures& cpu, std::span<const Implementation> compiled, Isa isa,
                                     Precision p) noexcept;

/// Float lanes of FMA a core with features `cpu` retires per cycle with `isa`'s vectors, which
/// paces the fused kernels' V requests (Blocking::prefetch_lines): 32 with AVX-512 where a core
/// has two 512-bit FMA pipes, which AVX512-FP16 says of Intel's (Sapphire Rapids and later) and
/// the FP512 datapath of AMD's (Zen 5); else 16 (two 256-bit pipes, or Zen 4's 512-bit operations
/// split in halves).
std::size_t fma_lanes_per_cycle(const CpuFeatures& cpu, Isa isa) noexcept;

/// The kernels of `isa` at precision p on this CPU; throws IsaError if the ISA is not runnable
/// here or has no kernels of that precision in this build.
const KernelTable& kernels_for(Isa isa, Precision p = Precision::f32);

} // namespace myattn::detail
