#include "cache_info.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <string>
#include <system_error>

namespace myattn::detail {
namespace {

std::string first_line(const std::filesystem::path& p) {
    std::ifstream in(p);
    std::string line;
    std::getline(in, line);
    return line;
}

// The kernel writes sizes as "48K"; a bare number is bytes. 0 where the text is not a size.
std::size_t parse_size(const std::string& s) {
    std::size_t n = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    if (ec != std::errc{} || n == 0) return 0;
    const std::string unit(end, s.data() + s.size());
    if (unit.empty()) return n;
    if (unit == "K") return n << 10;
    if (unit == "M") return n << 20;
    if (unit == "G") return n << 30;
    return 0;
}

// glibc answers from CPUID on x86 and from the kernel elsewhere; 0 or -1 mean "unknown".
std::size_t sysconf_or(int name, std::size_t fallback) {
    const long v = ::sysconf(name);
    return v > 0 ? static_cast<std::size_t>(v) : fallback;
}

CacheSizes from_sysconf() {
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

std::optional<CacheSizes> caches_listed_in(const std::filesystem::path& cache_dir) {
    CacheSizes c;
    std::size_t* const by_level[] = {&c.l1d, &c.l2, &c.l3};
    bool listed[3] = {false, false, false};
    std::error_code ec; // an unreadable directory ends the list rather than throwing
    for (std::filesystem::directory_iterator it(cache_dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::filesystem::path& p = it->path();
        if (p.filename().string().rfind("index", 0) != 0) continue;
        const std::string level = first_line(p / "level"), type = first_line(p / "type");
        const std::size_t size = parse_size(first_line(p / "size"));
        if (size == 0 || (type != "Data" && type != "Unified")) continue;
        if (level.size() != 1 || level[0] < '1' || level[0] > '3') continue;
        const std::size_t i = std::size_t(level[0] - '1');
        *by_level[i] = listed[i] ? std::max(*by_level[i], size) : size;
        listed[i] = true;
    }
    if (!listed[0] && !listed[1] && !listed[2]) return std::nullopt;
    return c;
}

// The kernel's list comes first: sysconf on x86 reads CPUID leaves that a virtual machine may
// pass through from its host, and guests have reported there the L3 of a whole host package
// (hundreds of MiB) where the kernel lists the slice their cores share, or no L3 at all.
const CacheSizes& cache_sizes() {
    static const CacheSizes sizes = [] {
        const std::optional<CacheSizes> listed = caches_listed_in("/sys/devices/system/cpu/cpu0/cache");
        return listed ? *listed : from_sysconf();
    }();
    return sizes;
}

} // namespace myattn::detail
