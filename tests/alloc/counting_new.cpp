// Replaces the global operator new / delete of the myattn_reader_alloc_tests executable (only that
// one: replacing them is process-wide, so they live in a binary of their own) with versions
// that count, while a Counting scope is open, the bytes live and their peak.
#include "counting_new.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>

namespace myattn::test {
namespace {

std::atomic<bool> active{false};
std::atomic<long long> live{0}, peak{0};
std::atomic<std::size_t> largest{0}, count{0};

// Each block carries its requested size in a prefix, so the count is of bytes asked for,
// the same under every allocator (glibc, ASan's).
constexpr std::size_t prefix = alignof(std::max_align_t);

void note(long long bytes) {
    if (!active.load(std::memory_order_relaxed)) return;
    const long long now = live.fetch_add(bytes, std::memory_order_relaxed) + bytes;
    long long old = peak.load(std::memory_order_relaxed);
    while (now > old && !peak.compare_exchange_weak(old, now, std::memory_order_relaxed)) {
    }
    if (bytes <= 0) return;
    const auto size = static_cast<std::size_t>(bytes);
    std::size_t big = largest.load(std::memory_order_relaxed);
    while (size > big && !largest.compare_exchange_weak(big, size, std::memory_order_relaxed)) {
    }
    count.fetch_add(1, std::memory_order_relaxed);
}

/// `offset` bytes before the block hold its size; `offset` is also how far the block is from
/// what malloc returned.
void* finish(void* raw, std::size_t offset, std::size_t size) {
    if (raw == nullptr) throw std::bad_alloc();
    auto* block = static_cast<char*>(raw) + offset;
    std::memcpy(block - sizeof(std::size_t), &size, sizeof size);
    note(static_cast<long long>(size));
    return block;
}

void* allocate(std::size_t size) {
    if (size > std::size_t{1} << 62) throw std::bad_alloc();
    return finish(std::malloc(size + prefix), prefix, size);
}

void* allocate_aligned(std::size_t size, std::align_val_t align) {
    const std::size_t a = std::max(static_cast<std::size_t>(align), prefix);
    if (size > std::size_t{1} << 62) throw std::bad_alloc();
    return finish(std::aligned_alloc(a, (size + a + a - 1) / a * a), a, size);
}

void release(void* p, std::size_t offset) noexcept {
    if (p == nullptr) return;
    auto* block = static_cast<char*>(p);
    std::size_t size;
    std::memcpy(&size, block - sizeof(std::size_t), sizeof size);
    note(-static_cast<long long>(size));
    std::free(block - offset);
}

void release(void* p) noexcept { release(p, prefix); }

void release_aligned(void* p, std::align_val_t align) noexcept {
    release(p, std::max(static_cast<std::size_t>(align), prefix));
}

} // namespace

Counting::Counting() {
    live.store(0);
    peak.store(0);
    largest.store(0);
    count.store(0);
    active.store(true);
}

Counting::~Counting() { active.store(false); }

AllocationStats Counting::stats() const {
    return {static_cast<std::size_t>(std::max(0LL, peak.load())), largest.load(), count.load()};
}

} // namespace myattn::test

using myattn::test::allocate;
using myattn::test::allocate_aligned;
using myattn::test::release;
using myattn::test::release_aligned;

void* operator new(std::size_t n) { return allocate(n); }
void* operator new[](std::size_t n) { return allocate(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    try {
        return allocate(n);
    } catch (...) {
        return nullptr;
    }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
    try {
        return allocate(n);
    } catch (...) {
        return nullptr;
    }
}
void* operator new(std::size_t n, std::align_val_t a) { return allocate_aligned(n, a); }
void* operator new[](std::size_t n, std::align_val_t a) { return allocate_aligned(n, a); }
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete(void* p, std::align_val_t a) noexcept { release_aligned(p, a); }
void operator delete[](void* p, std::align_val_t a) noexcept { release_aligned(p, a); }
void operator delete(void* p, std::size_t, std::align_val_t a) noexcept { release_aligned(p, a); }
void operator delete[](void* p, std::size_t, std::align_val_t a) noexcept { release_aligned(p, a); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    try {
        return allocate_aligned(n, a);
    } catch (...) {
        return nullptr;
    }
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    try {
        return allocate_aligned(n, a);
    } catch (...) {
        return nullptr;
    }
}
void operator delete(void* p, std::align_val_t a, const std::nothrow_t&) noexcept { release_aligned(p, a); }
void operator delete[](void* p, std::align_val_t a, const std::nothrow_t&) noexcept { release_aligned(p, a); }
