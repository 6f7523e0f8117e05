// What the benchmark files share: the reference shapes and work counts (src/shapes.hpp), and
// one cached set of inputs (with myattn's scalar result, the yardstick for the peers).
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "myattn/myattn.hpp"
#include "shapes.hpp"

namespace myattn_bench {

using myattn::detail::NamedShape;
inline constexpr auto& shapes = myattn::detail::reference_shapes;
using myattn::detail::bytes_per_sample;
using myattn::detail::flops_per_sample;
using myattn::detail::weight_bytes;

inline constexpr std::size_t batches[] = {1, 64, 1024, 16384};

/// X at 16384 would need 32 GiB of V.
bool skipped(const NamedShape& shape, std::size_t batch);

/// 1 and every hardware thread of the default arena (once if they are equal).
std::vector<int> thread_counts();

/// samples/s, GFLOP/s and GB/s of a forward over `batch` samples per iteration.
void set_forward_counters(benchmark::State& state, const myattn::Dims& d, std::size_t batch);

/// n values of T starting 16 bytes past a 64-byte boundary, where glibc's malloc puts a large
/// block (so a std::vector's data, a caller's usual input): the same place in every run. Left to
/// the allocator, it varied with what earlier benchmarks had allocated and freed, and with it
/// the time of every kernel whose vector loads then straddle two cache lines (docs/tuning.md).
template <class T>
class Placed {
  public:
    explicit Placed(std::size_t n) : storage_(n + 64 / sizeof(T)), size_(n) {
        while (reinterpret_cast<std::uintptr_t>(storage_.data() + offset_) % 64 != 16) ++offset_;
    }
    Placed(Placed&&) noexcept = default; // the storage moves, and the offset into it stays right
    Placed(const Placed&) = delete;
    Placed& operator=(const Placed&) = delete;

    T* data() { return storage_.data() + offset_; }
    const T* data() const { return storage_.data() + offset_; }
    std::size_t size() const { return size_; }
    T* begin() { return data(); }
    T* end() { return data() + size_; }
    const T* begin() const { return data(); }
    const T* end() const { return data() + size_; }

  private:
    std::vector<T> storage_;
    std::size_t size_, offset_ = 0;
};

/// Random Q, K, V (uniform in [-1, 1)) for one shape and batch, each Placed, and
/// Parameters::random(dims, 1).
struct Workload {
    Workload(const NamedShape& shape, std::size_t batch);

    const NamedShape* shape;
    std::size_t batch;
    myattn::Parameters params;
    Placed<float> Q, K, V;

    myattn::ConstTensor q() const { return {Q.data(), {batch, 1, shape->dims.query_size}}; }
    myattn::ConstTensor k() const { return {K.data(), {batch, 1, shape->dims.key_size}}; }
    myattn::ConstTensor v() const { return {V.data(), {batch, shape->dims.value_size1, shape->dims.value_size2}}; }

    /// myattn's scalar result on these inputs, computed on first use.
    const myattn::ForwardResult& reference() const;

  private:
    mutable std::unique_ptr<myattn::ForwardResult> reference_;
};

/// The inputs for (shape, batch). One set is kept at a time (the large ones take 128 MiB to
/// 2 GiB): benchmarks are registered so that those sharing inputs run together.
const Workload& workload(const NamedShape& shape, std::size_t batch);

/// "a/b/c" from parts.
std::string join(std::initializer_list<std::string> parts);

// Each file registers its own benchmarks: the peaks, and those of one shape and batch.
void register_peak();
void register_forward(const NamedShape& shape, std::size_t batch);
void register_kernels(const NamedShape& shape, std::size_t batch);

} // namespace myattn_bench
