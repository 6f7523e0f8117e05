// A fixed-size float buffer aligned to a cache line (64 bytes: one AVX-512 vector).
#pragma once

#include <cstddef>
#include <memory>
#include <new>

namespace myattn::detail {

class AlignedBuffer {
  public:
    static constexpr std::size_t alignment = 64;

    AlignedBuffer() = default;
    explicit AlignedBuffer(std::size_t floats)
        : data_(floats ? static_cast<float*>(::operator new (floats * sizeof(float), std::align_val_t{alignment}))
                       : nullptr),
          size_(floats) {}

    [[nodiscard]] float* data() noexcept { return data_.get(); }
    [[nodiscard]] const float* data() const noexcept { return data_.get(); }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }

  private:
    struct Free {
        void operator()(float* p) const noexcept { ::operator delete (p, std::align_val_t{alignment}); }
    };
    std::unique_ptr<float[], Free> data_;
    std::size_t size_ = 0;
};

} // namespace myattn::detail
