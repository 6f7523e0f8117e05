// MyAttn from oneDNN primitives, the way a oneDNN user would write it: concat [Q;K], matmul +
// bias, softmax, a batched matmul for the weighted sum, concat [Q;a], matmul + bias. Weights
// are given to the matmuls in the layout each primitive prefers (format_tag::any), reordered
// once here, as myattn packs once at construction.
//
// The two Linears run at one of three precisions (the peers onednn, onednn-bf16, onednn-int8);
// the softmax and the weighted sum over V stay float32, as in myattn's precisions:
// - bf16: the weights reordered to bf16 once; each call reorders the concatenation to bf16, and
//   the matmul accumulates in float32 and writes float32 (bias float32).
// - int8: dynamic quantization, as PyTorch's quantize_dynamic does it, in oneDNN 2.6's terms.
//   s8 weights with a scale per output feature (max |w| / 127), quantized once. Per call: the
//   concatenation's min and max (two reduction primitives), from them a u8 scale and zero point
//   covering [min(0, min), max(0, max)] (as PyTorch's observer), a reorder that quantizes with
//   them, and a u8 × s8 matmul writing float32. oneDNN 2.6 takes runtime zero points and runtime
//   output scales on a matmul, but then leaves its brgemm (VNNI, AMX) kernels for a plain
//   gemm:jit one, up to twice as slow here; so the matmul is given what a careful user would:
//   the weights' scales as constant output scales, and two binary post-ops, × the activations'
//   scale (a 1 × 1 tensor) and + a per-feature shift, bias − scale × zero point × the feature's
//   sum of int8 weights (the zero point folded out, as fbgemm folds it), both filled per call.
//   That also keeps the bias in float32 (oneDNN 2.6 adds a matmul's own bias before the output
//   scales). The full u8 range is used where oneDNN's kernels have VNNI or AMX, which do not
//   saturate; without, its vpmaddubsw kernels saturate their 16-bit pair sums of 8-bit
//   activations (oneDNN's int8 guidance), so there they get 7 bits, as PyTorch's fbgemm keeps.
#include <oneapi/dnnl/dnnl.hpp>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <unordered_map>

#include "peers/peer.hpp"

// Debian's libdnnl 2.6 uses OpenMP; the thread count below is only honoured by that runtime.
static_assert(DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP, "the oneDNN peer sets threads through OpenMP");

namespace myattn_bench {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dt = memory::data_type;
using dim = memory::dim;

enum class Linears { f32, bf16, int8 };

// The u8 activations' largest level: 255 where oneDNN's int8 kernels have VNNI or AMX, else 127
// (the header comment).
float activation_top() {
#if defined(__x86_64__)
    switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::avx512_core_vnni:
    case dnnl::cpu_isa::avx512_core_bf16:
    case dnnl::cpu_isa::avx512_core_amx:
    case dnnl::cpu_isa::avx2_vnni:
        return 255;
    default:
        return 127;
    }
#else
    return 255;
#endif
}

class OnednnPeer final : public Peer {
  public:
    OnednnPeer(const PeerProblem& p, Linears linears)
        : linears_(linears), x1_(p.batch * (p.q + p.k)), scores_(p.batch * p.L), weights_(p.batch * p.L),
          a_(p.batch * p.d), x2_(p.batch * (p.q + p.d)), out_(p.batch * p.o) {
        // Before any primitive is created: some implementations fix their thread count then.
        omp_set_num_threads(p.threads);
        const dim B = dim(p.batch), q = dim(p.q), k = dim(p.k), L = dim(p.L), d = dim(p.d), o = dim(p.o);
        // The inputs are only read; oneDNN's memory takes a non-const handle.
        const memory Q = wrap({B, q}, tag::ab, p.Q), K = wrap({B, k}, tag::ab, p.K), V = wrap({B, L, d}, tag::abc, p.V);
        const memory x1 = wrap({B, q + k}, tag::ab, x1_.data()), scores = wrap({B, L}, tag::ab, scores_.data()),
                     weights = wrap({B, L}, tag::ab, weights_.data()), a = wrap({B, d}, tag::ab, a_.data()),
                     x2 = wrap({B, q + d}, tag::ab, x2_.data()), out = wrap({B, o}, tag::ab, out_.data());

        concat(x1, {Q, K});
        linear(x1, p.attn_weight, p.attn_bias, scores);
        const dnnl::softmax_forward::primitive_desc softmax_pd(
            {dnnl::prop_kind::forward_inference, scores.get_desc(), 1}, engine_);
        add(dnnl::softmax_forward(softmax_pd), {{DNNL_ARG_SRC, scores}, {DNNL_ARG_DST, weights}});
        // a[b] = w[b] (1 x L) · V[b] (L x d), batched over b.
        const memory w3 = wrap({B, 1, L}, tag::abc, weights_.data()), a3 = wrap({B, 1, d}, tag::abc, a_.data());
        const dnnl::matmul::primitive_desc bmm_pd({w3.get_desc(), V.get_desc(), a3.get_desc()}, engine_);
        add(dnnl::matmul(bmm_pd), {{DNNL_ARG_SRC, w3}, {DNNL_ARG_WEIGHTS, V}, {DNNL_ARG_DST, a3}});
        concat(x2, {Q, a});
        linear(x2, p.combine_weight, p.combine_bias, out);
    }

    void run() override {
        for (const std::function<void()>& step : steps_) step();
        stream_.wait();
    }
    const float* output() const override { return out_.data(); }
    const float* attn_weights() const override { return weights_.data(); }

  private:
    using Args = std::unordered_map<int, memory>;

    memory wrap(const memory::dims& dims, tag t, const float* data) const {
        return memory({dims, dt::f32, t}, engine_, const_cast<float*>(data));
    }

    void add(const dnnl::primitive& primitive, const Args& args) {
        steps_.push_back([this, primitive, args] { primitive.execute(stream_, args); });
    }

    // A copy of `user` in the layout `want` (what a primitive asked for), made once.
    memory packed(const memory& user, const memory::desc& want) {
        memory out(want, engine_);
        dnnl::reorder(user, out).execute(stream_, const_cast<memory&>(user), out);
        stream_.wait();
        return out;
    }

    void concat(const memory& dst, const std::vector<memory>& srcs) {
        std::vector<memory::desc> mds;
        Args args{{DNNL_ARG_DST, dst}};
        for (std::size_t i = 0; i < srcs.size(); ++i) {
            mds.push_back(srcs[i].get_desc());
            args.emplace(DNNL_ARG_MULTIPLE_SRC + int(i), srcs[i]);
        }
        add(dnnl::concat(dnnl::concat::primitive_desc(dst.get_desc(), 1, mds, engine_)), args);
    }

    // dst [B, out] = src [B, in] · Wᵀ + bias, W [out, in] as nn.Linear stores it; src and dst float32.
    void linear(const memory& src, const float* W, const float* bias, const memory& dst) {
        if (linears_ == Linears::int8) return linear_int8(src, W, bias, dst);
        const dim B = src.get_desc().dims()[0], in = src.get_desc().dims()[1], out = dst.get_desc().dims()[1];
        const memory user_w = wrap({in, out}, tag::ba, W), b = wrap({1, out}, tag::ab, bias);
        const dt type = linears_ == Linears::bf16 ? dt::bf16 : dt::f32;
        memory x = src;
        if (type != dt::f32) {
            x = memory({{B, in}, type, tag::ab}, engine_);
            add(dnnl::reorder(src, x), {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, x}});
        }
        const dnnl::matmul::primitive_desc pd({x.get_desc(), {{in, out}, type, tag::any}, b.get_desc(), dst.get_desc()},
                                              engine_);
        add(dnnl::matmul(pd), {{DNNL_ARG_SRC, x},
                               {DNNL_ARG_WEIGHTS, packed(user_w, pd.weights_desc())},
                               {DNNL_ARG_BIAS, b},
                               {DNNL_ARG_DST, dst}});
    }

    void linear_int8(const memory& src, const float* W, const float* bias, const memory& dst) {
        const dim B = src.get_desc().dims()[0], in = src.get_desc().dims()[1], out = dst.get_desc().dims()[1];
        // The weights, once: s8 with a scale per output feature, and each feature's sum of them
        // (what the activations' zero point costs that feature).
        std::vector<std::int8_t> wq(std::size_t(out * in));
        std::vector<float> w_scale(static_cast<std::size_t>(out)), w_sum(static_cast<std::size_t>(out));
        for (dim n = 0; n < out; ++n) {
            const float* row = W + n * in;
            float top = 0;
            for (dim i = 0; i < in; ++i) top = std::max(top, std::abs(row[i]));
            w_scale[n] = top > 0 ? top / 127 : 1;
            for (dim i = 0; i < in; ++i) {
                wq[n * in + i] = std::int8_t(std::nearbyint(row[i] / w_scale[n]));
                w_sum[n] += float(wq[n * in + i]);
            }
        }
        const memory user_w({{in, out}, dt::s8, tag::ba}, engine_, wq.data());

        // Per call: the range of the activations, their scale and zero point, the quantized copy.
        const memory lo({{1, 1}, dt::f32, tag::ab}, engine_), hi({{1, 1}, dt::f32, tag::ab}, engine_);
        for (const auto& [alg, m] :
             {std::pair{dnnl::algorithm::reduction_min, lo}, std::pair{dnnl::algorithm::reduction_max, hi}}) {
            const dnnl::reduction::desc desc(alg, src.get_desc(), m.get_desc(), 0.f, 0.f);
            add(dnnl::reduction(dnnl::reduction::primitive_desc(desc, engine_)),
                {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, m}});
        }
        const memory inv_scale({{1}, dt::f32, tag::a}, engine_), zero_point({{1}, dt::s32, tag::a}, engine_),
            x_scale({{1, 1}, dt::f32, tag::ab}, engine_), shift({{1, out}, dt::f32, tag::ab}, engine_);
        std::vector<float> b(bias, bias + out);
        const float top = activation_top();
        steps_.push_back([this, lo, hi, inv_scale, zero_point, x_scale, shift, w_scale, w_sum, b, top] {
            stream_.wait(); // the reductions' results are read here
            const float low = std::min(0.f, *static_cast<float*>(lo.get_data_handle())),
                        high = std::max(0.f, *static_cast<float*>(hi.get_data_handle()));
            const float scale = high > low ? (high - low) / top : 1;
            const float zp = std::clamp(std::nearbyint(-low / scale), 0.f, top);
            *static_cast<float*>(inv_scale.get_data_handle()) = 1 / scale;
            *static_cast<std::int32_t*>(zero_point.get_data_handle()) = std::int32_t(zp);
            *static_cast<float*>(x_scale.get_data_handle()) = scale;
            float* c = static_cast<float*>(shift.get_data_handle());
            for (std::size_t n = 0; n < b.size(); ++n) c[n] = b[n] - scale * w_scale[n] * zp * w_sum[n];
        });
        const memory x({{B, in}, dt::u8, tag::ab}, engine_);
        dnnl::primitive_attr quantize;
        quantize.set_output_scales(0, {DNNL_RUNTIME_F32_VAL});
        quantize.set_zero_points(DNNL_ARG_DST, 0, {DNNL_RUNTIME_S32_VAL});
        add(dnnl::reorder({engine_, src.get_desc(), engine_, x.get_desc(), quantize}),
            {{DNNL_ARG_FROM, src},
             {DNNL_ARG_TO, x},
             {DNNL_ARG_ATTR_OUTPUT_SCALES, inv_scale},
             {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST, zero_point}});

        dnnl::primitive_attr attr;
        attr.set_output_scales(1 << 1, w_scale);
        dnnl::post_ops post;
        post.append_binary(dnnl::algorithm::binary_mul, x_scale.get_desc());
        post.append_binary(dnnl::algorithm::binary_add, shift.get_desc());
        attr.set_post_ops(post);
        const dnnl::matmul::primitive_desc pd({x.get_desc(), {{in, out}, dt::s8, tag::any}, dst.get_desc()}, attr,
                                              engine_);
        add(dnnl::matmul(pd), {{DNNL_ARG_SRC, x},
                               {DNNL_ARG_WEIGHTS, packed(user_w, pd.weights_desc())},
                               {DNNL_ARG_DST, dst},
                               {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, x_scale},
                               {DNNL_ARG_ATTR_MULTIPLE_POST_OP(1) | DNNL_ARG_SRC_1, shift}});
    }

    Linears linears_;
    dnnl::engine engine_{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream_{engine_};
    std::vector<float> x1_, scores_, weights_, a_, x2_, out_;
    std::vector<std::function<void()>> steps_;
};

} // namespace

std::unique_ptr<Peer> make_onednn_peer(const PeerProblem& problem) {
    return std::make_unique<OnednnPeer>(problem, Linears::f32);
}
std::unique_ptr<Peer> make_onednn_bf16_peer(const PeerProblem& problem) {
    return std::make_unique<OnednnPeer>(problem, Linears::bf16);
}
std::unique_ptr<Peer> make_onednn_int8_peer(const PeerProblem& problem) {
    return std::make_unique<OnednnPeer>(problem, Linears::int8);
}

bool onednn_bf16_runs() {
    // oneDNN 2.6 has bf16 matmuls from AVX-512 on: ask once for a tiny one.
    static const bool runs = [] {
        const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
        try {
            dnnl::matmul::primitive_desc(
                {{{1, 2}, dt::bf16, tag::ab}, {{2, 2}, dt::bf16, tag::ab}, {{1, 2}, dt::f32, tag::ab}}, engine);
        } catch (const dnnl::error&) {
            return false;
        }
        return true;
    }();
    return runs;
}

} // namespace myattn_bench
