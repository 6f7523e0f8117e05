// How many samples one task runs at once.
#pragma once

#include <algorithm>
#include <cstddef>

#include "cache_info.hpp"
#include "myattn/parameters.hpp"

namespace myattn::detail {

/// Samples per tile, a multiple of the kernels' MR (the last tile may be shorter).
/// - Cache: a tile's reused data (Q and K rows, scores, `a`, output) fits in half of this
///   core's L2, the other half holding the packed weights that every tile reads. V is not
///   counted: each V row is read once, streamed, whatever the tile.
/// - Weights: every tile reads all packed weights once, so tiles as large as the cache allows
///   (shape X: 12.6 MB of weights from L3 per tile).
/// - Sharing: at least 4 tiles per thread when the batch allows, for load balance.
inline std::size_t rows_per_tile(const Dims& d, std::size_t batch, std::size_t mr, std::size_t threads) {
    const std::size_t per_sample_bytes =
        sizeof(float) * (d.query_size + d.key_size + d.value_size1 + d.value_size2 + d.output_size);
    const std::size_t by_cache = cache_sizes().l2 / 2 / per_sample_bytes;
    const std::size_t by_sharing = batch / (4 * std::max<std::size_t>(1, threads));
    const std::size_t rows = std::min(by_cache, by_sharing) / mr * mr;
    return std::min(batch, std::max(rows, mr));
}

} // namespace myattn::detail
