// Cache sizes of this CPU, for sizing tiles. Read once; values the OS does not report fall
// back to conservative sizes of current server cores.
#pragma once

#include <cstddef>

namespace myattn::detail {

// Only L2 is read (src/tiling.hpp); the register and L1 blocking is fixed per ISA at compile
// time (kernels/blocking.hpp).
struct CacheSizes {
    std::size_t l2 = 1024 * 1024; // bytes per core
};

const CacheSizes& cache_sizes();

} // namespace myattn::detail
