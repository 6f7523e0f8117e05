#include "myattn/tensor.hpp"

#include <limits>

#include "myattn/errors.hpp"

namespace myattn {

Shape::Shape(std::initializer_list<std::size_t> extents)
    : Shape(std::span<const std::size_t>(extents.begin(), extents.size())) {}

Shape::Shape(std::span<const std::size_t> extents) {
    if (extents.size() > max_rank)
        throw ShapeError("shape of rank " + std::to_string(extents.size()) + ": at most rank " +
                         std::to_string(max_rank) + " is supported");
    for (std::size_t e : extents) dims_[rank_++] = e;
}

std::size_t Shape::numel(std::string_view what) const {
    std::size_t n = 1;
    for (std::size_t i = 0; i < rank_; ++i) {
        if (dims_[i] != 0 && n > std::numeric_limits<std::size_t>::max() / dims_[i])
            throw ShapeError(std::string(what) + ": shape " + to_string() + " has more elements than size_t holds");
        n *= dims_[i];
    }
    return n;
}

std::string Shape::to_string() const {
    std::string s = "[";
    for (std::size_t i = 0; i < rank_; ++i) {
        if (i) s += ", ";
        s += std::to_string(dims_[i]);
    }
    return s + "]";
}

} // namespace myattn
