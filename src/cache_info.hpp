// Cache sizes of this CPU, for sizing tiles and blocks. Read once; values the OS does not
// report fall back to conservative sizes of current server cores.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>

namespace myattn::detail {

// Read by the driver's plan (src/forward_plan.hpp) and tiling (src/tiling.hpp); the register
// tile stays fixed per ISA at compile time (kernels/blocking.hpp).
struct CacheSizes {
    std::size_t l1d = 32 * 1024;       // bytes per core
    std::size_t l2 = 1024 * 1024;      // bytes per core
    std::size_t l3 = 32 * 1024 * 1024; // bytes, shared

    friend bool operator==(const CacheSizes&, const CacheSizes&) = default;
};

/// The caches one CPU's cache directory lists, as Linux's /sys/devices/system/cpu/cpuN/cache
/// does: index*/ holding `level`, `type` and `size`. Levels it does not list keep CacheSizes'
/// defaults; nullopt where it lists none (no such directory, or nothing readable in it).
std::optional<CacheSizes> caches_listed_in(const std::filesystem::path& cache_dir);

/// This CPU's caches: as Linux lists them for cpu0, else as sysconf reports them, else the defaults.
const CacheSizes& cache_sizes();

} // namespace myattn::detail
