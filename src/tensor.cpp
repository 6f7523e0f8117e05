#include "myattn/tensor.hpp"

#include "myattn/errors.hpp"

namespace myattn {

void Shape::throw_rank_error(std::size_t rank) {
    throw ShapeError("shape of rank " + std::to_string(rank) + ": at most rank " + std::to_string(max_rank) +
                     " is supported");
}

void Shape::throw_overflow_error(std::string_view what) const {
    throw ShapeError(std::string(what) + ": shape " + to_string() + " has more elements than size_t holds");
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
