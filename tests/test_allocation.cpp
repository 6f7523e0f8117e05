// forward into caller buffers allocates nothing once a thread has run it: counted by replacing
// the global operator new in this test executable (and only in it).
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <new>
#include <utility>
#include <vector>

#include "myattn/myattn.hpp"
#include "shapes.hpp"

#ifdef MYATTN_WITH_TBB
#include <tbb/task_arena.h>
#endif

namespace {
std::atomic<long> allocations{0};

void* counted(std::size_t n, std::size_t align) {
    allocations.fetch_add(1, std::memory_order_relaxed);
    void* p = align > alignof(std::max_align_t) ? std::aligned_alloc(align, (n + align - 1) / align * align)
                                                : std::malloc(n ? n : 1);
    if (!p) throw std::bad_alloc();
    return p;
}
} // namespace

void* operator new(std::size_t n) { return counted(n, 0); }
void* operator new[](std::size_t n) { return counted(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) { return counted(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted(n, static_cast<std::size_t>(a)); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    try {
        return counted(n, 0);
    } catch (...) {
        return nullptr;
    }
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    try {
        return counted(n, static_cast<std::size_t>(a));
    } catch (...) {
        return nullptr;
    }
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t& t) noexcept {
    return operator new(n, a, t);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace {

struct Buffers {
    myattn::Dims d;
    std::size_t B;
    std::vector<float> Q, K, V, out, w;
    Buffers(const myattn::Dims& dims, std::size_t batch)
        : d(dims), B(batch), Q(B * d.query_size, 0.5f), K(B * d.key_size, -0.25f),
          V(B * d.value_size1 * d.value_size2, 1.0f), out(B * d.output_size), w(B * d.value_size1) {}
    void run(const myattn::MyAttn& attn) {
        attn.forward({Q.data(), {B, 1, d.query_size}}, {K.data(), {B, 1, d.key_size}},
                     {V.data(), {B, d.value_size1, d.value_size2}}, {out.data(), {B, 1, d.output_size}},
                     {w.data(), {B, d.value_size1}});
    }
};

long allocations_during(const myattn::MyAttn& attn, Buffers& x, int calls) {
    x.run(attn); // the first call on this thread may size its scratch
    const long before = allocations.load();
    for (int i = 0; i < calls; ++i) x.run(attn);
    return allocations.load() - before;
}

} // namespace

TEST_CASE("forward allocates nothing after the first call on a thread", "[allocation]") {
    // After the first call every lazily sized buffer has its size: the calls after it can only
    // repeat what the second one shows, and each costs seconds under qemu (tools/ci/old-cpus.sh).
    constexpr int calls = 3;
    // int8 on the small shapes only: its per-thread scratch for the quantized rows grows the same
    // way at any size, and T's calls are the costly ones under emulation.
    using myattn::Precision;
    const myattn::Dims odd{5, 7, 130, 3, 11};
    const std::pair<myattn::Dims, Precision> runs[] = {{myattn::detail::shape_S, Precision::f32},
                                                       {myattn::detail::shape_T, Precision::f32},
                                                       {odd, Precision::f32},
                                                       {myattn::detail::shape_S, Precision::int8},
                                                       {odd, Precision::int8}};
    for (const auto& [d, precision] : runs) {
        if (!myattn::kernel_id(myattn::active_isa(), precision)) continue;
        const myattn::MyAttn attn(myattn::Parameters::random(d, 1), precision);
        CAPTURE(d.to_string(), myattn::isa_name(attn.isa()), attn.kernel_id());
        for (std::size_t B : {1, 7, 300}) {
            Buffers x(d, B);
            CAPTURE(B);
#ifdef MYATTN_WITH_TBB
            // One thread, so no worker that has never run a tile can join later.
            tbb::task_arena arena(1);
            arena.execute([&] { CHECK(allocations_during(attn, x, calls) == 0); });
#else
            CHECK(allocations_during(attn, x, calls) == 0);
#endif
        }
    }
}

TEST_CASE("the counter sees allocations (the test above can fail)", "[allocation]") {
    const long before = allocations.load();
    auto* v = new std::vector<float>(100);
    delete v;
    CHECK(allocations.load() - before >= 2);
}
