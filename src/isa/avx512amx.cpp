// The avx512 int8 kernels with AMX: kernels/ instantiated for xsimd::avx512f, each tile's dot
// products over whole blocks of 64 input bytes on the AMX tiles (tdpbusd) where a part has
// enough of them, the rest with VNNI. Sums in int32 are exact in any order, so the dequantized results are
// avx512vnni's bits, which are the scalar int8 reference's. Built with the avx512 flags,
// -mavx512vnni, -mamx-tile and -mamx-int8; exports nothing but avx512amx_int8_kernels().
//
// The packed panel is already AMX's B layout: a 4-byte group of NR = 32 features is 128 bytes,
// so 16 groups of features 0-15 are a 16 x 64-byte tile at a row stride of 128 bytes (features
// 16-31: 64 bytes on). A tile of activations is M rows x 64 bytes of the quantized part.
#include "isa/amx_tiles.hpp"
#include "isa/avx512vnni_dot.hpp"

namespace myattn::detail {
namespace {

using Arch = xsimd::avx512f;

struct AmxDot : VnniDot {
    static constexpr std::string_view variant = "avx512amx";
    /// 4-byte groups per tile step: 64 bytes of each row.
    static constexpr std::size_t block = 16;
    /// Parts of fewer whole blocks stay on VNNI: the smallest measured on the tiles are T's, of
    /// 4 blocks, a little faster there than on VNNI; X's of 16 clearly so (docs/tuning.md).
    static constexpr std::size_t min_blocks = 4;
    /// A tile step (2 tdpbusd for 16 groups) requests the lines of 8 full VNNI steps of the
    /// next group's V: 8 lines at the pace of the cores with two 512-bit FMA pipes, which are
    /// all that have AMX, as measured there (16 and 24 were no faster: docs/tuning.md). VNNI's
    /// rate per group, 16 times this step's work, came as a burst that held up the tile loads.
    static constexpr std::size_t prefetch_steps = 8;

    /// Rows the tiles are configured for on this thread; 0: released.
    static inline thread_local std::size_t configured_rows = 0;
    template <std::size_t M>
    static void configure() {
        static_assert(M <= 32, "two tiles of 16 rows");
        static constexpr TileConfig config = tile_config(M);
        if (configured_rows == M) return;
        _tile_loadconfig(&config);
        configured_rows = M;
    }
    static void release() {
        if (configured_rows == 0) return;
        _tile_release();
        configured_rows = 0;
    }

    /// Rows of the fused forward's groups on this kernel set: one full tile, so that each
    /// weight tile loaded serves 16 rows, not 8. Groups of 32 made shape T slower.
    static constexpr std::size_t group_rows = 16;
    /// Rows of the table's Linears (the layered path) at a time: two tiles of 16 rows under
    /// each weight tile loaded, which halves the weight bytes each tdpbusd reads (docs/tuning.md).
    static constexpr std::size_t linear_rows = 32;

    /// The sums of M rows' first whole blocks of `groups` 4-byte groups, on the tiles, for one
    /// panel: rows NR int32s apart in `sums`. Returns the groups summed: 0 for a part of fewer
    /// than min_blocks blocks (sums untouched), which VNNI takes whole.
    template <std::size_t M, class Prefetch>
    [[gnu::always_inline]] static std::size_t tile_sums(std::int32_t* sums, const std::int32_t* panel,
                                                        const std::uint8_t* q, std::size_t ldq, std::size_t groups,
                                                        Prefetch& pf) {
        using B = Blocking<Arch>;
        constexpr std::size_t NR = B::NR, lanes = B::lanes;
        const std::size_t blocks = groups >= min_blocks * block ? groups / block : 0;
        if (blocks == 0) return 0;
        configure<M>();
        constexpr bool two = M > 16;
        const int ldw = static_cast<int>(NR * sizeof(std::int32_t)), lda = static_cast<int>(ldq);
        const std::uint8_t* q2 = q + 16 * ldq;
        _tile_zero(0);
        _tile_zero(1);
        if constexpr (two) {
            _tile_zero(2);
            _tile_zero(3);
        }
        Prefetch ahead = pf.template paced<prefetch_steps, 1>();
        for (std::size_t k = 0; k < blocks; ++k) {
            ahead.step();
            _tile_loadd(6, panel + k * block * NR, ldw);
            _tile_loadd(7, panel + k * block * NR + lanes, ldw);
            _tile_loadd(4, q + k * block * int8_group, lda);
            _tile_dpbusd(0, 4, 6);
            _tile_dpbusd(1, 4, 7);
            if constexpr (two) {
                _tile_loadd(5, q2 + k * block * int8_group, lda);
                _tile_dpbusd(2, 5, 6);
                _tile_dpbusd(3, 5, 7);
            }
        }
        pf = ahead;
        _tile_stored(0, sums, ldw);
        _tile_stored(1, sums + lanes, ldw);
        if constexpr (two) {
            _tile_stored(2, sums + 16 * NR, ldw);
            _tile_stored(3, sums + 16 * NR + lanes, ldw);
        }
        return blocks * block;
    }
};

} // namespace

const KernelTable& avx512amx_int8_kernels() {
    static constexpr KernelTable table = make_table<Arch, Isa::avx512, Int8Linear<Arch, AmxDot>>();
    return table;
}

} // namespace myattn::detail
