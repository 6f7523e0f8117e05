// MyAttn from Eigen, the way an Eigen user would write it: the concatenations built, two GEMMs
// against the transposed nn.Linear weights, and per sample a row-wise softmax and a
// vector-matrix product over V (Eigen has no batched GEMM). Eigen threads its GEMMs with
// OpenMP (setNbThreads); the per-sample loop is shared over the same threads with an OpenMP
// loop. On x86 this file is built twice, for AVX-512 and for AVX2 (bench/CMakeLists.txt), and
// each build renames Eigen's namespace after its ISA: their template instances are then distinct
// symbols, never one weak symbol with two encodings (the ODR trap of docs/platforms.md).
#if defined(MYATTN_EIGEN_AVX512)
#define Eigen EigenAvx512
#define MYATTN_EIGEN_FACTORY make_eigen_avx512_peer
#elif defined(MYATTN_EIGEN_AVX2)
#define Eigen EigenAvx2
#define MYATTN_EIGEN_FACTORY make_eigen_avx2_peer
#else
#define MYATTN_EIGEN_FACTORY make_eigen_peer
#endif
#include <Eigen/Core>

#include "peers/peer.hpp"

namespace myattn_bench {
namespace {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using ConstMap = Eigen::Map<const Matrix>;
using ConstRowMap = Eigen::Map<const Eigen::RowVectorXf>;

class EigenPeer final : public Peer {
  public:
    explicit EigenPeer(const PeerProblem& p)
        : p_(p), W1_(p.attn_weight, Eigen::Index(p.L), Eigen::Index(p.q + p.k)),
          W2_(p.combine_weight, Eigen::Index(p.o), Eigen::Index(p.q + p.d)), b1_(p.attn_bias, Eigen::Index(p.L)),
          b2_(p.combine_bias, Eigen::Index(p.o)), Q_(p.Q, rows(), Eigen::Index(p.q)),
          K_(p.K, rows(), Eigen::Index(p.k)), x1_(rows(), W1_.cols()), scores_(rows(), Eigen::Index(p.L)),
          weights_(rows(), Eigen::Index(p.L)), a_(rows(), Eigen::Index(p.d)), x2_(rows(), W2_.cols()),
          out_(rows(), Eigen::Index(p.o)) {
        Eigen::setNbThreads(p.threads);
    }

    void run() override {
        const Eigen::Index L = Eigen::Index(p_.L), d = Eigen::Index(p_.d);
        x1_ << Q_, K_;
        scores_.noalias() = x1_ * W1_.transpose();
        scores_.rowwise() += b1_;
#pragma omp parallel for num_threads(p_.threads) schedule(static)
        for (Eigen::Index b = 0; b < rows(); ++b) {
            auto w = weights_.row(b);
            w.array() = (scores_.row(b).array() - scores_.row(b).maxCoeff()).exp();
            w /= w.sum();
            a_.row(b).noalias() = w * ConstMap(p_.V + b * L * d, L, d);
        }
        x2_ << Q_, a_;
        out_.noalias() = x2_ * W2_.transpose();
        out_.rowwise() += b2_;
    }
    const float* output() const override { return out_.data(); }
    const float* attn_weights() const override { return weights_.data(); }

  private:
    Eigen::Index rows() const { return Eigen::Index(p_.batch); }

    PeerProblem p_;
    ConstMap W1_, W2_;
    ConstRowMap b1_, b2_;
    ConstMap Q_, K_;
    Matrix x1_, scores_, weights_, a_, x2_, out_;
};

} // namespace

std::unique_ptr<Peer> MYATTN_EIGEN_FACTORY(const PeerProblem& problem) { return std::make_unique<EigenPeer>(problem); }

} // namespace myattn_bench
