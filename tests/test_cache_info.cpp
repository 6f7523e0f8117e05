// The caches as Linux lists them, read from made-up cache directories: which entries count,
// what a level the directory does not list falls back to, and which source cache_sizes() takes.
#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "cache_info.hpp"
#include "support/cli.hpp"

using namespace myattn;
using namespace myattn::test;

namespace {

void write_index(const TempDir& dir, int index, const std::string& level, const std::string& type,
                 const std::string& size) {
    const std::filesystem::path p = dir / ("index" + std::to_string(index));
    std::filesystem::create_directories(p);
    std::ofstream(p / "level") << level << '\n';
    std::ofstream(p / "type") << type << '\n';
    std::ofstream(p / "size") << size << '\n';
}

} // namespace

TEST_CASE("the caches Linux lists for a core, read from its cache directory", "[cache_info]") {
    TempDir dir;
    write_index(dir, 0, "1", "Data", "48K");
    write_index(dir, 1, "1", "Instruction", "32K");
    write_index(dir, 2, "2", "Unified", "1024K");
    write_index(dir, 3, "3", "Unified", "32768K");
    const std::optional<detail::CacheSizes> c = detail::caches_listed_in(dir.path);
    REQUIRE(c);
    CHECK(c->l1d == 48 * 1024);
    CHECK(c->l2 == 1024 * 1024);
    CHECK(c->l3 == 32 * 1024 * 1024);
}

TEST_CASE("a level the cache directory does not list keeps the default size", "[cache_info]") {
    const detail::CacheSizes defaults;
    TempDir dir;
    SECTION("no L3, as some virtual machines list") {
        write_index(dir, 0, "1", "Data", "48K");
        write_index(dir, 2, "2", "Unified", "2M");
        const std::optional<detail::CacheSizes> c = detail::caches_listed_in(dir.path);
        REQUIRE(c);
        CHECK(c->l1d == 48 * 1024);
        CHECK(c->l2 == 2 * 1024 * 1024);
        CHECK(c->l3 == defaults.l3);
    }
    SECTION("entries that are not data caches or not sizes are skipped") {
        write_index(dir, 0, "1", "Instruction", "64K");
        write_index(dir, 1, "2", "Unified", "lots");
        write_index(dir, 2, "3", "Unified", "0K");
        write_index(dir, 3, "4", "Unified", "128M");
        std::filesystem::create_directories(dir / "uevent");
        CHECK_FALSE(detail::caches_listed_in(dir.path));
        write_index(dir, 4, "3", "Unified", "16384K");
        CHECK(detail::caches_listed_in(dir.path) == detail::CacheSizes{.l3 = 16 * 1024 * 1024});
    }
}

TEST_CASE("a missing or empty cache directory lists nothing; cpu0's list, where Linux has one, decides",
          "[cache_info]") {
    TempDir dir;
    CHECK_FALSE(detail::caches_listed_in(dir.path));
    CHECK_FALSE(detail::caches_listed_in(dir / "missing"));
    // On a Linux that lists cpu0's caches, those are the ones the plan uses, whatever sysconf says.
    const std::optional<detail::CacheSizes> listed = detail::caches_listed_in("/sys/devices/system/cpu/cpu0/cache");
    if (listed) CHECK(detail::cache_sizes() == *listed);
    CHECK(detail::cache_sizes().l1d > 0);
    CHECK(detail::cache_sizes().l2 > 0);
}
