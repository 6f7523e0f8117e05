// MyAttn from oneDNN primitives, the way a oneDNN user would write it: concat [Q;K], matmul +
// bias, softmax, a batched matmul for the weighted sum, concat [Q;a], matmul + bias. Weights
// are given to the matmuls in the layout each primitive prefers (format_tag::any), reordered
// once here, as myattn packs once at construction.
#include <oneapi/dnnl/dnnl.hpp>

#include <omp.h>

#include <unordered_map>

#include "peers/peer.hpp"

// Debian's libdnnl 2.6 uses OpenMP; the thread count below is only honoured by that runtime.
static_assert(DNNL_CPU_THREADING_RUNTIME == DNNL_RUNTIME_OMP, "the oneDNN peer sets threads through OpenMP");

namespace myattn_bench {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
using dim = memory::dim;

memory::desc f32(const memory::dims& dims, tag t) { return memory::desc(dims, memory::data_type::f32, t); }

class OnednnPeer final : public Peer {
  public:
    explicit OnednnPeer(const PeerProblem& p)
        : x1_(p.batch * (p.q + p.k)), scores_(p.batch * p.L), weights_(p.batch * p.L), a_(p.batch * p.d),
          x2_(p.batch * (p.q + p.d)), out_(p.batch * p.o) {
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
        steps_.push_back({dnnl::softmax_forward(softmax_pd), {{DNNL_ARG_SRC, scores}, {DNNL_ARG_DST, weights}}});
        // a[b] = w[b] (1 x L) · V[b] (L x d), batched over b.
        const memory w3 = wrap({B, 1, L}, tag::abc, weights_.data()), a3 = wrap({B, 1, d}, tag::abc, a_.data());
        const dnnl::matmul::primitive_desc bmm_pd({w3.get_desc(), V.get_desc(), a3.get_desc()}, engine_);
        steps_.push_back({dnnl::matmul(bmm_pd), {{DNNL_ARG_SRC, w3}, {DNNL_ARG_WEIGHTS, V}, {DNNL_ARG_DST, a3}}});
        concat(x2, {Q, a});
        linear(x2, p.combine_weight, p.combine_bias, out);
    }

    void run() override {
        for (Step& s : steps_) s.primitive.execute(stream_, s.args);
        stream_.wait();
    }
    const float* output() const override { return out_.data(); }
    const float* attn_weights() const override { return weights_.data(); }

  private:
    struct Step {
        dnnl::primitive primitive;
        std::unordered_map<int, memory> args;
    };

    memory wrap(const memory::dims& dims, tag t, const float* data) const {
        return memory(f32(dims, t), engine_, const_cast<float*>(data));
    }

    void concat(const memory& dst, const std::vector<memory>& srcs) {
        std::vector<memory::desc> mds;
        std::unordered_map<int, memory> args{{DNNL_ARG_DST, dst}};
        for (std::size_t i = 0; i < srcs.size(); ++i) {
            mds.push_back(srcs[i].get_desc());
            args.emplace(DNNL_ARG_MULTIPLE_SRC + int(i), srcs[i]);
        }
        steps_.push_back({dnnl::concat(dnnl::concat::primitive_desc(dst.get_desc(), 1, mds, engine_)), args});
    }

    // dst [B, out] = src [B, in] · Wᵀ + bias, W [out, in] as nn.Linear stores it.
    void linear(const memory& src, const float* W, const float* bias, const memory& dst) {
        const dim in = src.get_desc().dims()[1], out = dst.get_desc().dims()[1];
        memory user_w = wrap({in, out}, tag::ba, W);
        const memory b = wrap({1, out}, tag::ab, bias);
        const dnnl::matmul::primitive_desc pd({src.get_desc(), f32({in, out}, tag::any), b.get_desc(), dst.get_desc()},
                                              engine_);
        memory packed = user_w;
        if (pd.weights_desc() != user_w.get_desc()) {
            packed = memory(pd.weights_desc(), engine_);
            dnnl::reorder(user_w, packed).execute(stream_, user_w, packed);
            stream_.wait();
        }
        steps_.push_back({dnnl::matmul(pd),
                          {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, packed}, {DNNL_ARG_BIAS, b}, {DNNL_ARG_DST, dst}}});
    }

    dnnl::engine engine_{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream_{engine_};
    std::vector<float> x1_, scores_, weights_, a_, x2_, out_;
    std::vector<Step> steps_;
};

} // namespace

std::unique_ptr<Peer> make_onednn_peer(const PeerProblem& problem) { return std::make_unique<OnednnPeer>(problem); }

} // namespace myattn_bench
