// The module composed from another library, for comparison. Kept free of myattn and benchmark
// headers: a peer's file may be compiled with its own ISA flags (eigen.cpp), and must share no
// inline code with the baseline files (the ODR trap of docs/platforms.md).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace myattn_bench {

/// One forward problem: sizes, the parameters in PyTorch layout, and the inputs.
struct PeerProblem {
    std::size_t q, k, L, d, o, batch;
    const float* attn_weight;    // W1 [L, q+k]
    const float* attn_bias;      // b1 [L]
    const float* combine_weight; // W2 [o, q+d]
    const float* combine_bias;   // b2 [o]
    const float* Q;              // [B, q]
    const float* K;              // [B, k]
    const float* V;              // [B, L, d]
    int threads;                 // threads the peer may use
};

/// Everything is set up by the factory (primitives created, weights reordered); run() is the
/// timed part and writes the peer's own output buffers.
class Peer {
  public:
    virtual ~Peer();
    virtual void run() = 0;
    [[nodiscard]] virtual const float* output() const = 0;       // [B, o]
    [[nodiscard]] virtual const float* attn_weights() const = 0; // [B, L]
};

struct PeerInfo {
    const char* name;
    std::unique_ptr<Peer> (*make)(const PeerProblem&);
    /// Largest |difference| from myattn's float32 scalar result, as a fraction of its largest
    /// |value|, that the peer's result may show before it is timed.
    float tolerance;
};

/// The peers built into this binary whose code this CPU runs.
std::vector<PeerInfo> available_peers();

#ifdef MYATTN_BENCH_ONEDNN
std::unique_ptr<Peer> make_onednn_peer(const PeerProblem& problem);
std::unique_ptr<Peer> make_onednn_bf16_peer(const PeerProblem& problem);
std::unique_ptr<Peer> make_onednn_int8_peer(const PeerProblem& problem);
/// Whether this CPU runs oneDNN's bf16 matmul.
bool onednn_bf16_runs();
#endif
#ifdef MYATTN_BENCH_EIGEN
#if defined(__x86_64__)
// eigen.cpp built for each (bench/CMakeLists.txt).
std::unique_ptr<Peer> make_eigen_avx512_peer(const PeerProblem& problem);
std::unique_ptr<Peer> make_eigen_avx2_peer(const PeerProblem& problem);
#else
std::unique_ptr<Peer> make_eigen_peer(const PeerProblem& problem);
#endif
#endif

} // namespace myattn_bench
