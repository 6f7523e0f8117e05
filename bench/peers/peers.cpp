#include "peers/peer.hpp"

#include "myattn/isa.hpp"

namespace myattn_bench {

Peer::~Peer() = default;

std::vector<PeerInfo> available_peers() {
    std::vector<PeerInfo> peers;
#ifdef MYATTN_BENCH_ONEDNN
    // oneDNN picks its own kernels at run time. Float32 peers are held to float32 rounding. The
    // others only have to show a right composition: their Linears round (bf16: 2^-8 per product)
    // or quantize (int8: about 1 %, docs/accuracy.md), which put the shapes' results within
    // 0.25 % and 0.9 % of their largest value here, where a wrong layout, scale or zero point
    // is off by the order of the values.
    peers.push_back({"onednn", make_onednn_peer, 1e-4f});
    if (onednn_bf16_runs()) peers.push_back({"onednn-bf16", make_onednn_bf16_peer, 1e-2f});
    peers.push_back({"onednn-int8", make_onednn_int8_peer, 3e-2f});
#endif
#ifdef MYATTN_BENCH_EIGEN
#if defined(__x86_64__)
    // The widest build of eigen.cpp this CPU runs, as `-march=native` would build it here.
    const myattn::CpuFeatures& f = myattn::cpu_features();
    if (f.avx512f && f.avx512bw && f.avx512dq && f.avx512vl && f.fma)
        peers.push_back({"eigen", make_eigen_avx512_peer, 1e-4f});
    else if (f.avx2 && f.fma)
        peers.push_back({"eigen", make_eigen_avx2_peer, 1e-4f});
#else
    peers.push_back({"eigen", make_eigen_peer, 1e-4f});
#endif
#endif
    return peers;
}

} // namespace myattn_bench
