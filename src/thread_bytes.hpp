// Per-thread scratch for kernels that cannot take it from their caller: the int8 Linears
// quantize their input rows into it at each call.
#pragma once

#include <cstddef>
#include <cstdint>

namespace myattn::detail {

/// At least n bytes of this thread's scratch, 64-byte aligned, valid until this thread's next
/// call. Grown on first need and then reused: after a thread's first call of a size, nothing is
/// allocated.
std::uint8_t* thread_bytes(std::size_t n);

} // namespace myattn::detail
