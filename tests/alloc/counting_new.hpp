// Heap accounting for myattn_reader_alloc_tests, whose operator new / delete count (counting_new.cpp).
#pragma once

#include <cstddef>

namespace myattn::test {

struct AllocationStats {
    std::size_t peak_bytes = 0;      // most bytes live at once that were allocated in the scope
    std::size_t largest_request = 0; // the largest single allocation asked for
    std::size_t allocations = 0;
};

/// Counts operator new / delete from construction to destruction (one scope at a time, and
/// not across threads that outlive it). Memory freed in the scope but allocated before it
/// only lowers the count, so peak_bytes never overstates.
class Counting {
  public:
    Counting();
    ~Counting();
    Counting(const Counting&) = delete;
    Counting& operator=(const Counting&) = delete;
    [[nodiscard]] AllocationStats stats() const;
};

} // namespace myattn::test
