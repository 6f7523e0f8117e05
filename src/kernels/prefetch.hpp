// A stream of cache lines to request ahead, a few per step of a compute-bound loop.
//
// The fused forward hands the Linear micro-kernel the V rows of its next group of samples,
// after their Q and K rows where the batch comes from memory: a few byte ranges, in order.
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
    /// A range of bytes to request.
    struct Bytes {
        const char* begin;
        const char* end;
    };
    /// The next line of the range being requested, and that range's end.
    const char* next = nullptr;
    const char* end = nullptr;
    /// The ranges not yet begun, in order, held by the caller (the next group's Q, K and V).
    const Bytes* rest = nullptr;
    const Bytes* rest_end = nullptr;
    /// Lines per step of a full register tile (Blocking::prefetch_lines for this CPU's FMA rate).
    std::size_t full_step = 1;
    /// Lines per step of the loop that steps it now (paced()).
    std::size_t per_step = 1;

    /// The stream of ranges [first, last), which must outlive it, full_step lines a step.
    PrefetchStream(const Bytes* first, const Bytes* last, std::size_t lines)
        : rest(first), rest_end(last), full_step(lines), per_step(lines) {}

    /// This stream, paced for a loop whose steps take work / full_work of a full tile's step:
    /// full_step in that proportion, at least one line. A narrower or shorter tile's steps take
    /// fewer cycles, and the same lines per step would crowd the fill buffers its own loads
    /// need (shape T's 10 scores: docs/tuning.md).
    template <std::size_t work, std::size_t full_work>
    [[nodiscard]] PrefetchStream paced() const {
        PrefetchStream s = *this;
        const std::size_t lines = full_step * work / full_work;
        s.per_step = lines > 1 ? lines : 1;
        return s;
    }

    /// Requests the next per_step cache lines of the stream, as many as are left.
    inline void step() {
        for (std::size_t i = 0; i < per_step; ++i) {
            if (next >= end) {
                if (rest == rest_end) return;
                next = rest->begin, end = rest->end;
                ++rest;
            }
            __builtin_prefetch(next, 0, 1);
            next += 64;
        }
    }
};

/// The stream of nothing: compiles to no code at all in the loops that take it (B = 1 and
/// the last group of a batch, which have no next group, and the per-kernel entry points).
struct NoPrefetch {
    template <std::size_t work, std::size_t full_work>
    [[nodiscard]] NoPrefetch paced() const {
        return {};
    }
    inline void step() {}
};

} // namespace
} // namespace myattn::detail
