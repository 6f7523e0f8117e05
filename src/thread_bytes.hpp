// Per-thread scratch for kernels that cannot take it from their caller: the int8 Linears
// quantize their input rows into it at each call, each part of a row into a slot of its own.
#pragma once

#include <cstddef>
#include <cstdint>

namespace myattn::detail {

/// Independent buffers per thread: a call that resizes one leaves the others' bytes as they were.
constexpr std::size_t thread_byte_slots = 2;

/// At least n bytes of this thread's scratch slot `slot` (< thread_byte_slots), 64-byte aligned,
/// valid until this thread's next call for that slot. Grown on first need and then reused: after a
/// thread's first call of a size, nothing is allocated.
std::uint8_t* thread_bytes(std::size_t n, std::size_t slot = 0);

} // namespace myattn::detail
