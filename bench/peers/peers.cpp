#include "peers/peer.hpp"

#include "myattn/isa.hpp"

namespace myattn_bench {

Peer::~Peer() = default;

std::vector<PeerInfo> available_peers() {
    std::vector<PeerInfo> peers;
#ifdef MYATTN_BENCH_ONEDNN
    peers.push_back({"onednn", make_onednn_peer}); // oneDNN picks its own kernels at run time
#endif
#ifdef MYATTN_BENCH_EIGEN
#if defined(__x86_64__)
    // eigen.cpp is compiled for AVX-512 (bench/CMakeLists.txt).
    const myattn::CpuFeatures& f = myattn::cpu_features();
    if (f.avx512f && f.avx512bw && f.avx512dq && f.avx512vl && f.fma) peers.push_back({"eigen", make_eigen_peer});
#else
    peers.push_back({"eigen", make_eigen_peer});
#endif
#endif
    return peers;
}

} // namespace myattn_bench
