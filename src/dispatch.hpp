// ISA choice, split from CPU detection so tests can feed it made-up feature sets.
#pragma once

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

/// The kernels of `isa`; throws IsaError if it is not runnable here.
const KernelTable& kernels_for(Isa isa);

} // namespace myattn::detail
