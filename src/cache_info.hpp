// Cache sizes of this CPU, for sizing tiles. Read once; values the OS does not report fall
// back to conservative sizes of current server cores.
#pragma once

#include <cstddef>

namespace myattn::detail {

struct CacheSizes {
    std::size_t l1d = 32 * 1024;  // bytes per core
    std::size_t l2 = 1024 * 1024; // bytes per core
};

const CacheSizes& cache_sizes();

} // namespace myattn::detail
