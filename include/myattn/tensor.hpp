// Shapes and non-owning tensor views (contiguous, row-major).
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "myattn/export.hpp"

namespace myattn {

/// A tensor shape of rank 0..4, stored inline so that building a view never allocates.
class MYATTN_EXPORT Shape {
  public:
    static constexpr std::size_t max_rank = 4;

    constexpr Shape() = default;
    /// Throws ShapeError if more than max_rank extents are given.
    Shape(std::initializer_list<std::size_t> extents)
        : Shape(std::span<const std::size_t>(extents.begin(), extents.size())) {}
    explicit Shape(std::span<const std::size_t> extents) {
        if (extents.size() > max_rank) throw_rank_error(extents.size());
        for (std::size_t e : extents) dims_[rank_++] = e;
    }

    [[nodiscard]] constexpr std::size_t rank() const noexcept { return rank_; }
    [[nodiscard]] constexpr std::size_t operator[](std::size_t i) const noexcept { return dims_[i]; }
    [[nodiscard]] std::span<const std::size_t> extents() const noexcept { return {dims_.data(), rank_}; }

    /// Product of the extents; throws ShapeError naming `what` if it overflows size_t.
    [[nodiscard]] std::size_t numel(std::string_view what = "tensor") const {
        std::size_t n = 1;
        // An overflow test without a division: forward checks five shapes per call.
        for (std::size_t i = 0; i < rank_; ++i)
            if (__builtin_mul_overflow(n, dims_[i], &n)) throw_overflow_error(what);
        return n;
    }

    /// "[1, 1, 32]", the form PyTorch prints.
    [[nodiscard]] std::string to_string() const;

    friend bool operator==(const Shape& a, const Shape& b) noexcept {
        if (a.rank_ != b.rank_) return false;
        for (std::size_t i = 0; i < a.rank_; ++i)
            if (a.dims_[i] != b.dims_[i]) return false;
        return true;
    }

  private:
    // Every forward builds and checks several shapes: the checks are inline, the messages (and
    // their allocations) out of line.
    [[noreturn]] static void throw_rank_error(std::size_t rank);
    [[noreturn]] void throw_overflow_error(std::string_view what) const;

    std::array<std::size_t, max_rank> dims_{};
    std::size_t rank_ = 0;
};

/// A pointer plus a shape. The data is contiguous and row-major; it need not be aligned.
template <class T>
struct TensorView {
    T* data = nullptr;
    Shape shape;

    TensorView() = default;
    TensorView(T* d, Shape s) : data(d), shape(s) {}
    /// A mutable view converts to a const one.
    template <class U>
    requires(!std::is_same_v<U, T> && std::is_convertible_v<U*, T*>) TensorView(TensorView<U> other)
        : data(other.data), shape(other.shape) {}
};

using ConstTensor = TensorView<const float>;
using MutableTensor = TensorView<float>;

} // namespace myattn
