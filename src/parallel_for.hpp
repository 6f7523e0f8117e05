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

#ifdef MYATTN_TSAN
/// The task body handed to TBB, which copies it into its task objects after the caller's
/// release (and again wherever a task splits), so a worker reads the copy before its acquire.
/// The copy's three pointers are therefore written and read as relaxed atomics: TSan orders
/// nothing by them (the annotations do that) and sees no plain access to race with.
template <class Body>
class AnnotatedBody {
  public:
    AnnotatedBody(const Body* body, char* spawned, char* finished) { store(body, spawned, finished); }
    AnnotatedBody(const AnnotatedBody& other) { store(load(other.body_), load(other.spawned_), load(other.finished_)); }
    AnnotatedBody& operator=(const AnnotatedBody&) = delete;

    void operator()(const tbb::blocked_range<std::size_t>& r) const {
        __tsan_acquire(load(spawned_));
        (*load(body_))(r);
        __tsan_release(load(finished_));
    }

  private:
    template <class T>
    static T* load(T* const& p) {
        return __atomic_load_n(&p, __ATOMIC_RELAXED);
    }
    void store(const Body* body, char* spawned, char* finished) {
        __atomic_store_n(&body_, body, __ATOMIC_RELAXED);
        __atomic_store_n(&spawned_, spawned, __ATOMIC_RELAXED);
        __atomic_store_n(&finished_, finished, __ATOMIC_RELAXED);
    }

    const Body* body_;
    char* spawned_;
    char* finished_;
};
#endif

/// body(range) over [0, n), ranges split by TBB.
template <class Body>
void parallel_for(std::size_t n, const Body& body) {
#ifdef MYATTN_TSAN
    char spawned = 0, finished = 0; // two sync objects: tasks do not synchronise with each other
    __tsan_release(&spawned);
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n), AnnotatedBody<Body>(&body, &spawned, &finished));
    __tsan_acquire(&finished);
#else
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n), body);
#endif
}

} // namespace myattn::detail
