// The AMX tile layout the int8 kernels use (isa/avx512amx.cpp), and that the benchmark's AMX
// peak probe runs: ldtilecfg's operand for tiles of up to 32 rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace myattn::detail {
namespace {

/// ldtilecfg's 64-byte operand, palette 1.
struct alignas(64) TileConfig {
    std::uint8_t palette, start_row, reserved[14];
    std::uint16_t colsb[16];
    std::uint8_t rows[16];
};

// Tiles (the intrinsics take their numbers as literals): tmm0 and tmm1 the int32 sums of
// features 0-15 and 16-31 of rows 0-15 (up to M rows x 16), tmm2 and tmm3 those of rows 16-31,
// tmm4 and tmm5 the activations of rows 0-15 and 16-31 (rows x 64 bytes), tmm6 and tmm7 the
// weights of each half of the features (16 groups x 16 features x 4 bytes). A tile of up to 16
// rows leaves tmm2, tmm3 and tmm5 unconfigured.
constexpr TileConfig tile_config(std::size_t M) {
    TileConfig c{};
    c.palette = 1;
    const std::size_t top = M < 16 ? M : 16, bottom = M - top;
    for (int t : {0, 1, 4}) c.rows[t] = static_cast<std::uint8_t>(top), c.colsb[t] = 64;
    if (bottom > 0)
        for (int t : {2, 3, 5}) c.rows[t] = static_cast<std::uint8_t>(bottom), c.colsb[t] = 64;
    for (int t : {6, 7}) c.rows[t] = 16, c.colsb[t] = 64;
    return c;
}

} // namespace
} // namespace myattn::detail
