// How many samples one task runs at once.
#pragma once

#include <algorithm>
#include <cstddef>

#include "cache_info.hpp"
#include "myattn/parameters.hpp"

namespace myattn::detail {

/// Samples per tile. A tile's own data (Q, K and V rows, scores, output) should fit in half of
/// this core's L2, leaving the other half to the packed weights that every tile reads; and
/// there should be enough tiles for the threads to share (about 16 per batch, never fewer
/// than 8 samples each, since a tile is also the unit the kernels block over).
inline std::size_t rows_per_tile(const Dims& d, std::size_t batch) {
    const std::size_t per_sample_bytes =
        sizeof(float) * (d.query_size + d.key_size + d.value_size1 * (d.value_size2 + 1) + d.output_size);
    const std::size_t by_cache = std::max<std::size_t>(1, cache_sizes().l2 / 2 / per_sample_bytes);
    const std::size_t for_sharing = std::max<std::size_t>(8, batch / 16);
    return std::max<std::size_t>(1, std::min({by_cache, for_sharing, batch}));
}

} // namespace myattn::detail
