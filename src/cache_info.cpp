#include "cache_info.hpp"

#include <unistd.h>

namespace myattn::detail {
namespace {

// glibc answers from CPUID on x86 and from the kernel elsewhere; 0 or -1 mean "unknown".
std::size_t sysconf_or(int name, std::size_t fallback) {
    const long v = ::sysconf(name);
    return v > 0 ? static_cast<std::size_t>(v) : fallback;
}

CacheSizes detect() {
    CacheSizes c;
#if defined(_SC_LEVEL1_DCACHE_SIZE)
    c.l1d = sysconf_or(_SC_LEVEL1_DCACHE_SIZE, c.l1d);
#endif
#if defined(_SC_LEVEL2_CACHE_SIZE)
    c.l2 = sysconf_or(_SC_LEVEL2_CACHE_SIZE, c.l2);
#endif
#if defined(_SC_LEVEL3_CACHE_SIZE)
    c.l3 = sysconf_or(_SC_LEVEL3_CACHE_SIZE, c.l3);
#endif
    return c;
}

} // namespace

const CacheSizes& cache_sizes() {
    static const CacheSizes sizes = detect();
    return sizes;
}

} // namespace myattn::detail
