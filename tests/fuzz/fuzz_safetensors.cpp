// libFuzzer target: safetensors::parse on arbitrary bytes. It must return or throw FileError,
// never crash, read out of bounds or trip a sanitizer; what it returns must be self-consistent
// and survive a write / read round trip bit for bit.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "myattn/errors.hpp"
#include "myattn/safetensors.hpp"

namespace {

[[noreturn]] void violated(const char* what) {
    std::fprintf(stderr, "fuzz_safetensors: contract violated: %s\n", what);
    std::abort();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace myattn::safetensors;
    TensorMap tensors;
    try {
        tensors = parse({reinterpret_cast<const std::byte*>(data), size}, "fuzz input");
    } catch (const myattn::FileError&) {
        return 0; // the documented failure
    }
    // Anything else thrown escapes: libFuzzer reports an uncaught exception as a crash.

    std::vector<NamedTensor> named;
    for (const auto& [name, t] : tensors) {
        std::size_t n = 1;
        for (std::size_t e : t.shape) n *= e; // parse checked that this does not overflow
        if (t.data.size() != n) violated("data size differs from the product of the shape");
        if (t.shape.size() > myattn::Shape::max_rank) return 0; // a valid file, but no Shape holds it
        if (name.empty()) return 0;                             // valid in the format; the writer refuses it
        named.push_back({name, t.view()});
    }
    const std::vector<std::byte> again = serialize(named);
    const TensorMap back = parse(again, "round trip");
    if (back.size() != tensors.size()) violated("round trip changed the tensor count");
    for (const auto& [name, t] : tensors) {
        const Tensor& b = back.at(name);
        if (b.shape != t.shape) violated("round trip changed a shape");
        if (!t.data.empty() && std::memcmp(b.data.data(), t.data.data(), t.data.size() * sizeof(float)) != 0)
            violated("round trip changed the data");
    }
    return 0;
}
