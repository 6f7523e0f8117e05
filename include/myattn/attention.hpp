// MyAttn: construct once (validates, packs the weights for the chosen ISA), then forward.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "myattn/bfloat16.hpp"
#include "myattn/export.hpp"
#include "myattn/isa.hpp"
#include "myattn/parameters.hpp"
#include "myattn/precision.hpp"
#include "myattn/tensor.hpp"

namespace myattn {

/// Owned results of the convenience forward.
struct ForwardResult {
    std::vector<float> output; // [B, 1, o], or [1, B, o] for the article's layout
    Shape output_shape;
    std::vector<float> attn_weights; // [B, L]
    Shape attn_weights_shape;
};

class MYATTN_EXPORT MyAttn {
  public:
    /// Uses active_isa() and float32.
    explicit MyAttn(Parameters params);
    /// Uses active_isa() at precision p; throws IsaError if this build has no kernels of that
    /// precision for it.
    MyAttn(Parameters params, Precision p);
    /// Uses `isa` at precision p (that ISA's own kernels, its fallback ones where the CPU lacks
    /// the extension the best ones need); throws IsaError if the ISA is not runnable here or has
    /// no kernels of that precision in this build.
    MyAttn(Parameters params, Isa isa, Precision p = Precision::f32);
    ~MyAttn();
    MyAttn(MyAttn&&) noexcept;
    MyAttn& operator=(MyAttn&&) noexcept;
    MyAttn(const MyAttn&) = delete;
    MyAttn& operator=(const MyAttn&) = delete;

    /// Every member but assignment and the destructor throws MovedFromError on a moved-from MyAttn.
    [[nodiscard]] const Dims& dims() const;
    [[nodiscard]] const Parameters& parameters() const;
    [[nodiscard]] Isa isa() const;
    [[nodiscard]] Precision precision() const;
    /// The kernels it runs, e.g. "i8-linear-16x32-avx512vnni".
    [[nodiscard]] std::string_view kernel_id() const;
    /// How forward runs a batch larger than the kernels' register tile, chosen at construction
    /// from the shapes and this CPU's caches: "fused: KC k, V prefetch p KiB" (each group of
    /// samples through the whole module, each Linear over k inputs at a time, the next group's V
    /// requested ahead when it is at most p KiB), or "layered: MC m, NC n, KC k" (blocks of m
    /// samples layer by layer, each Linear over n output features and k inputs at a time).
    /// Results are the same bits either way.
    [[nodiscard]] std::string plan() const;

    /// Q [B,1,q]; K [B,1,k] or [1,1,k]; V [B,L,d] or [1,L,d] (a leading 1 is shared by every
    /// sample, in place). Writes output [B,1,o] and attn_weights [B,L]. B may be 0.
    /// Also the article's module's own layout, batched along dimension 1 (the same memory):
    /// Q [1,B,q]; K [1,B,k] or [1,1,k]; V [1,L,d]; then output is [1,B,o], attn_weights [B,L].
    /// Allocates nothing; safe to call from many threads at once. Runs in the caller's
    /// tbb::task_arena. Throws ShapeError / ArgumentError before writing anything.
    void forward(ConstTensor Q, ConstTensor K, ConstTensor V, MutableTensor output, MutableTensor attn_weights) const;

    /// As above, returning owned results.
    [[nodiscard]] ForwardResult forward(ConstTensor Q, ConstTensor K, ConstTensor V) const;

    /// The same two with V as bfloat16 (read in place, half the bytes of a float V): only a
    /// MyAttn of precision bf16 takes one (ArgumentError otherwise). The result is that of the
    /// float V holding the same values. (Templates only so that a braced {nullptr, shape} V
    /// still means a float one.)
    template <class T>
    requires std::is_same_v<std::remove_const_t<T>, bfloat16>
    void forward(ConstTensor Q, ConstTensor K, TensorView<T> V, MutableTensor output,
                 MutableTensor attn_weights) const {
        forward_bf16(Q, K, V, output, attn_weights);
    }
    template <class T>
    requires std::is_same_v<std::remove_const_t<T>, bfloat16>
    [[nodiscard]] ForwardResult forward(ConstTensor Q, ConstTensor K, TensorView<T> V) const {
        return forward_bf16(Q, K, V);
    }

  private:
    void forward_bf16(ConstTensor Q, ConstTensor K, TensorView<const bfloat16> V, MutableTensor output,
                      MutableTensor attn_weights) const;
    [[nodiscard]] ForwardResult forward_bf16(ConstTensor Q, ConstTensor K, TensorView<const bfloat16> V) const;

    struct Impl;
    [[nodiscard]] const Impl& impl() const;
    std::unique_ptr<Impl> impl_;
};

} // namespace myattn
