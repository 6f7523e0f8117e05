// Cache sizes of this CPU, for sizing tiles and blocks. Read once; values the OS does not
// report fall back to conservative sizes of current server cores.
#pragma once

#include <cstddef>

namespace myattn::detail {

// Read by the driver's plan (src/forward_plan.hpp) and tiling (src/tiling.hpp); the register
// tile stays fixed per ISA at compile time (kernels/blocking.hpp).
struct CacheSizes {
    std::size_t l1d = 32 * 1024;       // bytes per core
    std::size_t l2 = 1024 * 1024;      // bytes per core
    std::size_t l3 = 32 * 1024 * 1024; // bytes, shared
};

const CacheSizes& cache_sizes();

} // namespace myattn::detail
