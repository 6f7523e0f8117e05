// ISA choice, split from CPU detection so tests can feed it made-up feature sets.
#pragma once

#include <span>
#include <string>

#include "kernels/table.hpp"
#include "myattn/isa.hpp"

namespace myattn::detail {

struct IsaChoice {
    Isa isa;
    std::string reason;
};

/// Picks the ISA: `forced` (MYATTN_ISA's value, or null when unset) if it names a compiled ISA
/// that `cpu` runs, else IsaError; without `forced`, the first of `compiled` (best first) that
/// `cpu` runs. Never returns an ISA the CPU lacks.
IsaChoice choose_isa(const CpuFeatures& cpu, std::span<const Isa> compiled, const char* forced);

/// The kernels of `isa`; throws IsaError if it is not runnable here.
const KernelTable& kernels_for(Isa isa);

} // namespace myattn::detail
