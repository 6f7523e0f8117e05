#include "thread_bytes.hpp"

#include "aligned_buffer.hpp"

namespace myattn::detail {

std::uint8_t* thread_bytes(std::size_t n) {
    thread_local AlignedBuffer buffer;
    const std::size_t floats = (n + sizeof(float) - 1) / sizeof(float);
    if (buffer.size() < floats) buffer = AlignedBuffer(floats);
    return reinterpret_cast<std::uint8_t*>(buffer.data());
}

} // namespace myattn::detail
