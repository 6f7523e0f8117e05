// CPU feature detection for dispatch. Done here rather than with xsimd: xsimd 8.1 read some
// flags wrong (docs/platforms.md) and never checks that the OS saves the YMM/ZMM state (XGETBV).
#include <string>

#include "amd_fp_width.hpp"
#include "myattn/isa.hpp"

#if defined(__x86_64__) || defined(_M_X64)
#include <cpuid.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#elif defined(__aarch64__)
#include <sys/auxv.h>
#endif

namespace myattn {
namespace {

#if defined(__x86_64__) || defined(_M_X64)
bool bit(unsigned reg, int n) { return (reg >> n) & 1u; }

unsigned long long xgetbv0() {
    unsigned eax = 0, edx = 0;
    __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
    return (static_cast<unsigned long long>(edx) << 32) | eax;
}

// Linux hands out the AMX tile data state (8 KiB per thread) only to a process that asks for it:
// until then the first tile instruction raises SIGILL. Asked once, here; a refusal leaves the
// feature absent. Numbers from the Linux x86 ABI (asm/prctl.h, the XSAVE feature number).
bool amx_granted() {
#if defined(__linux__)
    constexpr long arch_req_xcomp_perm = 0x1023, xfeature_xtiledata = 18;
    return syscall(SYS_arch_prctl, arch_req_xcomp_perm, xfeature_xtiledata) == 0;
#else
    return false;
#endif
}

CpuFeatures detect() {
    CpuFeatures f;
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return f;
    // The display family and model: the extended fields count where the base ones are 0xF (and 6).
    const unsigned base_family = (eax >> 8) & 0xF, base_model = (eax >> 4) & 0xF;
    const unsigned family = base_family == 0xF ? base_family + ((eax >> 20) & 0xFF) : base_family;
    const unsigned model =
        base_family == 0xF || base_family == 6 ? base_model + (((eax >> 16) & 0xF) << 4) : base_model;
    const bool fma = bit(ecx, 12), osxsave = bit(ecx, 27), avx = bit(ecx, 28);
    if (!osxsave || !avx) return f;
    const unsigned long long xcr0 = xgetbv0();
    const bool ymm_saved = (xcr0 & 0x6) == 0x6;   // SSE and AVX state
    const bool zmm_saved = (xcr0 & 0xE6) == 0xE6; // plus opmask, ZMM0-15 high halves, ZMM16-31
    if (!ymm_saved) return f;
    if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) return f;
    f.fma = fma;
    f.avx2 = bit(ebx, 5);
    if (zmm_saved) {
        f.avx512f = bit(ebx, 16);
        f.avx512dq = bit(ebx, 17);
        f.avx512bw = bit(ebx, 30);
        f.avx512vl = bit(ebx, 31);
        f.avx512_vnni = bit(ecx, 11);
        f.avx512_fp16 = bit(edx, 23);
    }
    const bool tiles_saved = (xcr0 & 0x60000) == 0x60000; // XTILECFG and XTILEDATA
    if (tiles_saved) {
        f.amx_tile = bit(edx, 24);
        f.amx_int8 = bit(edx, 25);
        f.amx_granted = f.amx_tile && amx_granted();
    }
    const unsigned max_subleaf = eax;
    if (max_subleaf >= 1 && __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) {
        f.avx_vnni = bit(eax, 4);
        f.avx512_bf16 = zmm_saved && bit(eax, 5);
    }
    // AMD's performance-optimization leaf says how wide the FP datapath is, or the model does
    // (src/amd_fp_width.hpp). Intel CPUs have no such leaf: __get_cpuid checks the maximum
    // extended leaf and fails, and their families are not AMD's.
    if (f.avx512f) {
        const unsigned leaf_1a_eax = __get_cpuid(0x8000001A, &eax, &ebx, &ecx, &edx) ? eax : 0;
        f.fp512 = detail::amd_fp512(leaf_1a_eax, family, model);
    }
    return f;
}
#elif defined(__aarch64__)
// The kernel reports what userspace may use; bit numbers from the Linux arm64 ABI (asm/hwcap.h).
constexpr unsigned long hwcap_asimddp = 1ul << 20;
constexpr unsigned long hwcap2_bf16 = 1ul << 14;

CpuFeatures detect() {
    CpuFeatures f;
    f.neon = true; // Advanced SIMD is mandatory in AArch64
    f.asimddp = (getauxval(AT_HWCAP) & hwcap_asimddp) != 0;
    f.arm_bf16 = (getauxval(AT_HWCAP2) & hwcap2_bf16) != 0;
    return f;
}
#else
CpuFeatures detect() { return {}; }
#endif

} // namespace

const CpuFeatures& cpu_features() {
    static const CpuFeatures features = detect();
    return features;
}

std::string to_string(const CpuFeatures& f) {
    std::string s;
    auto add = [&](bool on, const char* name) {
        if (!on) return;
        if (!s.empty()) s += ' ';
        s += name;
    };
    add(f.avx2, "avx2");
    add(f.fma, "fma");
    add(f.avx512f, "avx512f");
    add(f.avx512bw, "avx512bw");
    add(f.avx512dq, "avx512dq");
    add(f.avx512vl, "avx512vl");
    add(f.avx512_vnni, "avx512_vnni");
    add(f.avx_vnni, "avx_vnni");
    add(f.avx512_bf16, "avx512_bf16");
    add(f.avx512_fp16, "avx512_fp16");
    add(f.fp512, "fp512");
    add(f.amx_tile, "amx_tile");
    add(f.amx_int8, "amx_int8");
    add(f.amx_granted, "amx_granted");
    add(f.neon, "neon");
    add(f.asimddp, "asimddp");
    add(f.arm_bf16, "bf16");
    return s.empty() ? "(none beyond the baseline)" : s;
}

} // namespace myattn
