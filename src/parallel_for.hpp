// tbb::parallel_for over [0, n), told to ThreadSanitizer when it is on.
//
// Debian's libtbb.so is not instrumented, so TSan cannot see that each task runs after the
// call that spawned it and that the call returns after every task; without these annotations
// it reports every buffer a task writes and its caller then reads. The remaining reports come
// from TBB's own headers and atomics and are suppressed by tools/tsan.supp (docs/contract.md).
#pragma once

#include <cstddef>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#if defined(__SANITIZE_THREAD__)
#define MYATTN_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define MYATTN_TSAN 1
#endif
#endif

#ifdef MYATTN_TSAN
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace myattn::detail {

/// body(range) over [0, n), ranges split by TBB.
template <class Body>
void parallel_for(std::size_t n, const Body& body) {
#ifdef MYATTN_TSAN
    char spawned = 0, finished = 0; // two sync objects: tasks do not synchronise with each other
    __tsan_release(&spawned);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n), [&](const tbb::blocked_range<std::size_t>& r) {
        __tsan_acquire(&spawned);
        body(r);
        __tsan_release(&finished);
    });
    __tsan_acquire(&finished);
#else
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n), body);
#endif
}

} // namespace myattn::detail
