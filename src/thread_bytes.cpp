#include "thread_bytes.hpp"

#include "aligned_buffer.hpp"

namespace myattn::detail {

std::uint8_t* thread_bytes(std::size_t n, std::size_t slot) {
    thread_local AlignedBuffer buffers[thread_byte_slots];
    AlignedBuffer& buffer = buffers[slot];
    const std::size_t floats = (n + sizeof(float) - 1) / sizeof(float);
    if (buffer.size() < floats) buffer = AlignedBuffer(floats);
    return reinterpret_cast<std::uint8_t*>(buffer.data());
}

} // namespace myattn::detail
