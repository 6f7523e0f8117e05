// How many samples one task runs at once.
#pragma once

#include <algorithm>
#include <cstddef>

#include "myattn/parameters.hpp"

namespace myattn::detail {

/// Per-core L2 we plan for. Zen 4 and recent Intel server cores have 1-2 MiB; half of 1 MiB
/// leaves room for the packed weights, which every tile reads.
inline constexpr std::size_t l2_budget_bytes = 512 * 1024;

/// Samples per tile: as many as keep one tile's inputs and outputs (Q, K, V rows, weights,
/// output) within the L2 budget, but at least 1 and, so that threads have work to share,
/// no more than a 1/16 of the batch (down to tiles of 8).
inline std::size_t rows_per_tile(const Dims& d, std::size_t batch) {
    const std::size_t per_sample_bytes =
        sizeof(float) * (d.query_size + d.key_size + d.value_size1 * (d.value_size2 + 1) + d.output_size);
    const std::size_t by_cache = std::max<std::size_t>(1, l2_budget_bytes / per_sample_bytes);
    const std::size_t for_sharing = std::max<std::size_t>(8, batch / 16);
    return std::max<std::size_t>(1, std::min({by_cache, for_sharing, batch}));
}

} // namespace myattn::detail
