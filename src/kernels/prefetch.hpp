// A stream of cache lines to request ahead, a few per step of a compute-bound loop.
//
// The fused forward hands the Linear micro-kernel the V rows of its next group of samples.
// Spread over the Linear's steps, the requests keep memory busy while the FMAs run; issued in
// one burst before the group they queued behind each other and stalled the loads that
// followed (docs/tuning.md has the measurements). Locality 1 (prefetcht2 on x86): measured
// best on Zen 4, ahead of 3 (t0) and 0 (nta).
#pragma once

#include <cstddef>

namespace myattn::detail {
namespace {

/// A loop that steps the stream steps a local copy and hands it back afterwards: the stream
/// arrives by reference, and the loop's vector loads may alias anything, so through the
/// reference GCC stores the cursor back every step.
struct PrefetchStream {
    const char* next = nullptr;
    const char* end = nullptr;

    /// Requests the next `lines` cache lines of the stream, as many as are left.
    template <std::size_t lines>
    inline void step() {
        for (std::size_t i = 0; i < lines; ++i)
            if (next < end) {
                __builtin_prefetch(next, 0, 1);
                next += 64;
            }
    }
};

/// The stream of nothing: compiles to no code at all in the loops that take it (B = 1 and
/// the last group of a batch, which have no next group, and the per-kernel entry points).
struct NoPrefetch {
    template <std::size_t lines>
    inline void step() {}
};

} // namespace
} // namespace myattn::detail
