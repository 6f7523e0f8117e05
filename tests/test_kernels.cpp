// Each kernel of each ISA on its own, through the KernelTable: the ISA MYATTN_ISA forces (ctest's
// isa/<name> runs), or every ISA this CPU runs, each in a section named after it.
//
// The SIMD kernels promise more than accuracy: every output is one fixed chain of fused
// multiply-adds (0, then inputs in order, then the bias added; or 0, then V rows in order). So
// their results are compared bitwise with that chain computed here with std::fma, which also
// proves that no tile shape, edge, panel count or KC block changes a sample's bits. The scalar ISA is the float
// reference itself, and is compared bitwise with it.
//
// [sweep]: the dense sweeps (every edge tile against KC blocks, exp at a million points). They
// prove arithmetic, which an emulated CPU would only repeat at a hundred times the cost, so
// tools/ci/old-cpus.sh leaves them to the native runs (every ISA the host runs, avx2 included).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "dispatch.hpp"
#include "reference.hpp"
#include "support/check.hpp"
#include "support/isas.hpp"
#include "support/oracle.hpp"
#include "support/packed.hpp"
#include "support/random.hpp"

using namespace myattn;
using namespace myattn::test;

namespace {

constexpr float sentinel = 12345.0f;

// Distinct sizes >= 1, in order of first appearance.
std::vector<std::size_t> sizes(std::initializer_list<std::size_t> list) {
    std::vector<std::size_t> out;
    for (std::size_t n : list)
        if (n >= 1 && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
    return out;
}

// One sample's weighted sum over L rows of d floats at V, as `isa` computes it: the reference's
// loops on scalar, else one FMA chain per output, in row order.
void expected_weighted_sum(Isa isa, const float* w, const float* V, std::size_t L, std::size_t d, float* a) {
    if (isa == Isa::scalar) return detail::reference_weighted_sum<float>(w, V, L, d, d, a);
    for (std::size_t j = 0; j < d; ++j) {
        float acc = 0.0f;
        for (std::size_t l = 0; l < L; ++l) acc = std::fma(w[l], V[l * d + j], acc);
        a[j] = acc;
    }
}

// A copy of V `shift` floats past a 64-byte boundary in buf (std::vector's allocator aligns to 16).
float* placed_copy(std::vector<float>& buf, const std::vector<float>& V, std::size_t shift) {
    buf.assign(V.size() + 32, 0.0f);
    float* base = buf.data();
    while (reinterpret_cast<std::uintptr_t>(base) % 64 != 0) ++base;
    return std::copy(V.begin(), V.end(), base + shift) - V.size();
}

} // namespace

TEST_CASE("kernels: softmax of every length 1..130, within its bound, inside its row", "[kernels][softmax][each_isa]") {
    FOR_EACH_ISA(isa) {
        const detail::KernelTable& t = detail::kernels_for(isa);
        std::mt19937_64 rng(1);
        for (std::size_t L = 1; L <= 130; ++L) {
            CAPTURE(L);
            constexpr std::size_t guard = 16; // at least one vector on every ISA
            const std::vector<float> s = normal(rng, L, 3.0f);
            std::vector<float> buf(guard + L + guard, sentinel);
            std::copy(s.begin(), s.end(), buf.begin() + guard);
            t.softmax(buf.data() + guard, L);

            std::vector<double> want(s.begin(), s.end());
            detail::reference_softmax(want.data(), L);
            // Each exp(s_k - m) carries exp's error and the rounding of s_k - m (at most
            // u |s_k - m|); a weight is one such term over their sum (gamma_L) times a rounded
            // reciprocal (2u): relative error <= 2 (exp_rel + u R) + gamma_L + 2u, R = max |s_k - m|.
            double m = s[0], R = 0;
            for (float x : s) m = std::max(m, double(x));
            for (float x : s) R = std::max(R, m - x);
            const double rel = 2 * (exp_rel_error + unit_roundoff * R) + gamma_n(L) + 2 * unit_roundoff;
            std::vector<double> bound(L);
            for (std::size_t l = 0; l < L; ++l) bound[l] = want[l] * rel;
            check_within("softmax", std::span(buf).subspan(guard, L), want, bound);
            const std::vector<float> guards(guard, sentinel);
            check_same_bits("the guard before the row", std::span(buf).first(guard), guards);
            check_same_bits("the guard after the row", std::span(buf).last(guard), guards);
        }
    }
}

TEST_CASE("kernels: softmax of non-finite rows follows PyTorch at every position",
          "[kernels][softmax][nonfinite][each_isa]") {
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    FOR_EACH_ISA(isa) {
        const detail::KernelTable& t = detail::kernels_for(isa);
        for (std::size_t L : {1, 5, 15, 16, 17, 33, 130}) {
            for (std::size_t pos : sizes({0, L / 2, L - 1})) {
                CAPTURE(L, pos);
                std::mt19937_64 rng(L + pos);
                const std::vector<float> base = normal(rng, L);
                for (float bad : {nan, inf}) { // a NaN or a +inf anywhere: the whole row NaN
                    std::vector<float> s = base;
                    s[pos] = bad;
                    t.softmax(s.data(), L);
                    for (float x : s) REQUIRE(std::isnan(x));
                }
                std::vector<float> s = base; // one -inf: weight 0 there, the rest a distribution
                s[pos] = -inf;
                t.softmax(s.data(), L);
                if (L == 1) {
                    REQUIRE(std::isnan(s[0])); // which is an all -inf row
                    continue;
                }
                double sum = 0;
                for (std::size_t l = 0; l < L; ++l) {
                    REQUIRE(std::isfinite(s[l]));
                    sum += s[l];
                }
                REQUIRE(s[pos] == 0.0f);
                REQUIRE(std::fabs(sum - 1) <= 2 * (exp_rel_error + gamma_n(L)) + 2 * unit_roundoff + 1e-5);
            }
            std::vector<float> s(L, -inf); // all -inf: NaN, as in PyTorch
            t.softmax(s.data(), L);
            for (float x : s) REQUIRE(std::isnan(x));
            std::vector<float> big(L, 1e30f); // equal huge scores: uniform, no overflow
            t.softmax(big.data(), L);
            for (float x : big) REQUIRE(std::fabs(x - 1.0 / double(L)) <= 4 * unit_roundoff);
        }
    }
}

namespace {

// The floats e with fl(e * s) == y, as [lo, hi] (empty, lo > hi, if there is none): e * s is
// exact in double, so rounding it to float is the single rounding of a float product.
std::pair<float, float> product_preimage(float y, float s) {
    const auto times_s = [s](float e) { return float(double(e) * double(s)); };
    const float inf = std::numeric_limits<float>::infinity();
    float e = float(double(y) / double(s));
    for (int step = 0; step < 4 && times_s(e) != y; ++step) e = std::nextafter(e, times_s(e) < y ? inf : 0.0f);
    if (times_s(e) != y) return {1.0f, 0.0f};
    float lo = e, hi = e;
    while (times_s(std::nextafter(lo, 0.0f)) == y) lo = std::nextafter(lo, 0.0f);
    while (times_s(std::nextafter(hi, inf)) == y) hi = std::nextafter(hi, inf);
    return {lo, hi};
}

} // namespace

TEST_CASE("kernels: softmax's exp within 2 ulp over [-87.3, 0], below FLT_MIN under it",
          "[kernels][softmax][exp][sweep][each_isa]") {
    // The SIMD kernels' exp is not in the table; softmax shows it. Softmax of a row of z zeros
    // and one x is fl(e s) at x and s at each zero, with e the kernel's exp(x) and s the
    // rounded reciprocal of the sum 1 z + e (the kernel's exp(0) is exactly 1). So e lies in the
    // preimage of fl(. s): one float, or two where s compresses e's binade. With z = 1, 2, 3 and
    // 7 (so that the four s differ), e lies in the intersection of four preimages, and the
    // largest distance from exp(x) (in double) to it bounds the error of e: nearly always it is
    // one float, and the bound is e's error itself. (What is measured is e(x) / e(0), exactly
    // what softmax depends on.) The scalar ISA divides by the sum, with std::exp: not this exp.
    FOR_EACH_ISA(isa) {
        if (isa == Isa::scalar) return;
        const detail::KernelTable& t = detail::kernels_for(isa);
        constexpr int N = 1 << 20; // a step of 83e-6 over [-87.3, 0]
        double worst = 0;
        float worst_x = 0, failed_x = 1; // failed_x: an output that is no product by s
        for (int k = 0; k <= N; ++k) {
            const float x = float(-87.3 * k / N);
            float lo = 0, hi = std::numeric_limits<float>::max();
            for (std::size_t zeros : {1, 2, 3, 7}) {
                float row[8] = {};
                const std::size_t at = zeros % 4; // x at 1, 2, 3 and 3; row[0] is 0
                row[at] = x;
                t.softmax(row, zeros + 1);
                const auto [l, h] = product_preimage(row[at], row[0]);
                lo = std::max(lo, l);
                hi = std::min(hi, h);
            }
            if (lo > hi) {
                failed_x = x;
                break;
            }
            const double want = std::exp(double(x));
            int e2 = 0;
            std::frexp(want, &e2);
            const double ulp = std::ldexp(1.0, e2 - 24); // of a float near want, normal here
            const double err = std::max(std::fabs(lo - want), std::fabs(hi - want)) / ulp;
            if (err > worst) worst = err, worst_x = x;
        }
        CAPTURE(failed_x, worst_x);
        REQUIRE(failed_x == 1);
        REQUIRE(worst <= 2.0);
        // Under -87.3: exp(x) < 1.04 * FLT_MIN, and no row of length 2 has a sum below 1, so
        // any value within FLT_MIN (the oracle's absolute slack) of exp(x) will do: 0 included.
        for (int k = 0; k <= N / 16; ++k) {
            const float x = float(-87.3 - 20.0 * k / (N / 16));
            float a[2] = {x, 0.0f};
            t.softmax(a, 2);
            if (a[1] != 1.0f || !(std::fabs(a[0] - std::exp(double(x))) <= 0x1p-126)) {
                CAPTURE(x, a[0], a[1]);
                FAIL("not within FLT_MIN of exp(x)");
            }
        }
    }
}

TEST_CASE("kernels: linear over split rows, every edge tile, bitwise one FMA chain per output",
          "[kernels][linear][sweep][each_isa]") {
    FOR_EACH_ISA(isa) {
        const detail::KernelTable& t = detail::kernels_for(isa);
        const std::size_t mr = t.mr, nr = t.nr;
        struct Inputs {
            std::size_t n1, n2;
        };
        // Small, one vector, and past 1024 inputs so that KC blocks (512 on every ISA) end
        // inside x1, inside x2 and on their boundary.
        const Inputs inputs[] = {{1, 1}, {3, 13}, {32, 32}, {700, 400}, {300, 900}, {512, 513}};
        for (std::size_t out : sizes({1, nr - 1, nr, nr + 1, 2 * nr + 3, 5 * nr + 1, 70}))
            for (std::size_t rows : sizes({1, 2, mr - 1, mr, mr + 1, 2 * mr + 1}))
                for (const Inputs& in : inputs)
                    for (bool shared_x2 : {false, true}) {
                        CAPTURE(out, rows, in.n1, in.n2, shared_x2);
                        const std::size_t n = in.n1 + in.n2, ld1 = in.n1 + 3, ld2 = shared_x2 ? 0 : in.n2 + 1,
                                          ldy = out + 2;
                        std::mt19937_64 rng(out * 1000 + rows * 10 + n);
                        const std::vector<float> W = normal(rng, out * n), b = normal(rng, out),
                                                 x1 = normal(rng, rows * ld1), x2 = normal(rng, rows * (in.n2 + 1));
                        const detail::LinearLayout l = t.linear_layout(out, in.n1, in.n2);
                        REQUIRE(l.panel == nr);
                        std::vector<float> packed(l.size);
                        t.pack_linear(l, W.data(), b.data(), packed.data());
                        const detail::SplitRows x{
                            .x1 = x1.data(), .ld1 = ld1, .n1 = in.n1, .x2 = x2.data(), .ld2 = ld2, .n2 = in.n2};
                        std::vector<float> y(rows * ldy, sentinel), tail(rows * ldy, sentinel);
                        t.linear(l, packed.data(), x, rows, {0, out}, y.data(), ldy);
                        // The features from the second panel on, as a work split runs them.
                        const std::size_t from = std::min(out, l.panel);
                        t.linear(l, packed.data(), x, rows, {from, out}, tail.data(), ldy);
                        // Each row as the kernel must leave it: the outputs, sentinels past them
                        // (and, for the tail call, before `from`).
                        std::vector<float> want(rows * ldy, sentinel), want_tail(rows * ldy, sentinel);
                        for (std::size_t r = 0; r < rows; ++r) {
                            const float* xr1 = x1.data() + r * ld1;
                            const float* xr2 = x2.data() + r * ld2;
                            float* wr = want.data() + r * ldy;
                            if (isa == Isa::scalar)
                                detail::reference_linear<float>(W.data(), b.data(), out, xr1, in.n1, xr2, in.n2, wr);
                            else
                                for (std::size_t j = 0; j < out; ++j) {
                                    float acc = 0;
                                    for (std::size_t i = 0; i < in.n1; ++i) acc = std::fma(W[j * n + i], xr1[i], acc);
                                    for (std::size_t i = 0; i < in.n2; ++i)
                                        acc = std::fma(W[j * n + in.n1 + i], xr2[i], acc);
                                    wr[j] = acc + b[j];
                                }
                            std::copy(wr + from, wr + out, want_tail.data() + r * ldy + from);
                        }
                        check_same_bits("y", y, want);
                        check_same_bits("y of the features from the second panel", tail, want_tail);
                    }
    }
}

TEST_CASE("kernels: weighted sum, shared V bitwise equal to per-sample copies and to one FMA chain",
          "[kernels][weighted_sum][each_isa]") {
    FOR_EACH_ISA(isa) {
        const detail::KernelTable& t = detail::kernels_for(isa);
        const std::size_t mr = t.mr;
        std::vector<std::pair<std::size_t, std::size_t>> shapes; // (L, d): every d 1..70, and wide ones
        for (std::size_t d = 1; d <= 70; ++d) shapes.emplace_back(d % 3 == 0 ? 33 : d % 3 == 1 ? 7 : 1, d);
        shapes.emplace_back(40, 1100); // rows 4400 bytes apart: several row windows and column blocks
        shapes.emplace_back(130, 257);
        for (auto [L, d] : shapes)
            for (std::size_t rows : sizes({1, mr - 1, mr + 1, 2 * mr + 1})) {
                CAPTURE(L, d, rows);
                const std::size_t ldw = L + 1, lda = d + 3;
                std::mt19937_64 rng(L * 100 + d + rows);
                const std::vector<float> w = normal(rng, rows * ldw), V = normal(rng, L * d);
                std::vector<float> copies;
                for (std::size_t r = 0; r < rows; ++r) copies.insert(copies.end(), V.begin(), V.end());
                std::vector<float> shared_a(rows * lda, sentinel), copied_a(rows * lda, sentinel);
                t.weighted_sum({.rows = rows,
                                .w = w.data(),
                                .ldw = ldw,
                                .V = V.data(),
                                .v_stride = 0,
                                .L = L,
                                .d = d,
                                .a = shared_a.data(),
                                .lda = lda},
                               {0, d});
                t.weighted_sum({.rows = rows,
                                .w = w.data(),
                                .ldw = ldw,
                                .V = copies.data(),
                                .v_stride = L * d,
                                .L = L,
                                .d = d,
                                .a = copied_a.data(),
                                .lda = lda},
                               {0, d});
                std::vector<float> want(rows * lda, sentinel); // sentinels past each row's d results
                for (std::size_t r = 0; r < rows; ++r)
                    expected_weighted_sum(isa, w.data() + r * ldw, V.data(), L, d, want.data() + r * lda);
                check_same_bits("a with V shared", shared_a, want);
                check_same_bits("a with V copied per row", copied_a, want);
            }
    }
}

TEST_CASE("kernels: weighted sum of wide rows (streamed), any alignment, any column block, bitwise one FMA chain",
          "[kernels][weighted_sum][each_isa]") {
    // Rows of 1024 values and more, whole cache lines: the row stream (stream_rows, 8, side by
    // side, then the rest one by one: L = 9 and 19), whose sums sit in a buffer aligned like
    // V, with scalar columns before V's first line boundary and after its last.
    FOR_EACH_ISA(isa) {
        const detail::KernelTable& t = detail::kernels_for(isa);
        for (auto [L, d] : {std::pair<std::size_t, std::size_t>{9, 1024}, {19, 1024}, {3, 2064}, {1, 4096}})
            for (std::size_t shift : {0, 1, 4, 8, 13}) { // floats past a 64-byte boundary
                CAPTURE(L, d, shift);
                std::mt19937_64 rng(L * 7 + d + shift);
                const std::size_t rows = 2, ldw = L + 2, lda = d + 5;
                const std::vector<float> w = normal(rng, rows * ldw), V = normal(rng, rows * L * d);
                std::vector<float> buf;
                const float* placed = placed_copy(buf, V, shift);
                std::vector<float> a(rows * lda, sentinel);
                t.weighted_sum({.rows = rows,
                                .w = w.data(),
                                .ldw = ldw,
                                .V = placed,
                                .v_stride = L * d,
                                .L = L,
                                .d = d,
                                .a = a.data(),
                                .lda = lda},
                               {0, d});
                std::vector<float> want(rows * lda, sentinel); // sentinels past each row's d results
                for (std::size_t r = 0; r < rows; ++r)
                    expected_weighted_sum(isa, w.data() + r * ldw, V.data() + r * L * d, L, d, want.data() + r * lda);
                check_same_bits("a", a, want);
                for (std::size_t r = 0; r < rows; ++r) {
                    CAPTURE(r);
                    // A block of columns (rows ldv = d apart, as the feature split runs them):
                    // the same bits. 1030 columns stream in blocks of 1024 and 6, the last
                    // narrower than the columns before V's first line boundary at most shifts.
                    for (auto [j0, n] : {std::pair<std::size_t, std::size_t>{0, 256},
                                         {256, 3},
                                         {d - 300, 300},
                                         {0, std::min<std::size_t>(d, 1030)}}) {
                        std::vector<float> block(d, sentinel);
                        t.weighted_sum({.rows = 1,
                                        .w = w.data() + r * ldw,
                                        .ldw = ldw,
                                        .V = placed + r * L * d,
                                        .v_stride = 0,
                                        .L = L,
                                        .d = d,
                                        .a = block.data(),
                                        .lda = d},
                                       {j0, j0 + n});
                        std::vector<float> want_block(d, sentinel);
                        std::copy_n(want.data() + r * lda + j0, n, want_block.data() + j0);
                        CAPTURE(j0, n);
                        check_same_bits("columns of a block", block, want_block);
                    }
                }
            }
    }
}

TEST_CASE("kernels: weighted sum in row windows, V at any alignment, any column block, bitwise one FMA chain",
          "[kernels][weighted_sum][each_isa]") {
    // Rows shorter than the row stream's: the window path, whose loads start at V's first vector
    // boundary where rows are wide enough (T: 10 x 256), with one unaligned vector before it and
    // one after the last whole vector over columns computed twice; narrower rows (S: 32 x 64, 2 x
    // 40) and a V of several windows (5 x 1000: rows 4000 bytes apart) keep the unaligned loads.
    FOR_EACH_ISA(isa) {
        const detail::KernelTable& t = detail::kernels_for(isa);
        const std::size_t mr = t.mr;
        for (auto [L, d] : {std::pair<std::size_t, std::size_t>{10, 256},
                            {7, 128},
                            {3, 129},
                            {33, 200},
                            {5, 1000},
                            {1, 300},
                            {2, 40},
                            {32, 64}})
            for (std::size_t shift : {0, 1, 4, 8, 13}) // floats past a 64-byte boundary
                for (std::size_t rows : {std::size_t{1}, mr - 1, mr + 1}) {
                    CAPTURE(L, d, shift, rows);
                    std::mt19937_64 rng(L * 31 + d + shift * 7 + rows);
                    const std::size_t ldw = L + 1, lda = d + 3;
                    const std::vector<float> w = normal(rng, rows * ldw), V = normal(rng, rows * L * d);
                    std::vector<float> buf;
                    const float* placed = placed_copy(buf, V, shift);
                    // Each row's sums over its own V, and every row's over the first one's.
                    std::vector<float> want_each(rows * lda, sentinel), want_shared(rows * lda, sentinel);
                    for (std::size_t r = 0; r < rows; ++r) {
                        expected_weighted_sum(isa, w.data() + r * ldw, V.data() + r * L * d, L, d,
                                              want_each.data() + r * lda);
                        expected_weighted_sum(isa, w.data() + r * ldw, V.data(), L, d, want_shared.data() + r * lda);
                    }
                    for (std::size_t v_stride : {L * d, std::size_t{0}}) {
                        CAPTURE(v_stride);
                        const std::vector<float>& want = v_stride != 0 ? want_each : want_shared;
                        for (auto [j0, n] :
                             {std::pair<std::size_t, std::size_t>{0, d}, {3, d - 5}, {d / 2, d - d / 2}}) {
                            CAPTURE(j0, n);
                            std::vector<float> a(rows * lda, sentinel), want_block(rows * lda, sentinel);
                            for (std::size_t r = 0; r < rows; ++r)
                                std::copy_n(want.data() + r * lda + j0, n, want_block.data() + r * lda + j0);
                            t.weighted_sum({.rows = rows,
                                            .w = w.data(),
                                            .ldw = ldw,
                                            .V = placed,
                                            .v_stride = v_stride,
                                            .L = L,
                                            .d = d,
                                            .a = a.data(),
                                            .lda = lda},
                                           {j0, j0 + n});
                            check_same_bits("a", a, want_block);
                        }
                    }
                }
    }
}

TEST_CASE("kernels: forward gives a sample the same bits in any tile and any position",
          "[kernels][forward][each_isa]") {
    FOR_EACH_ISA(isa) {
        const detail::KernelTable& t = detail::kernels_for(isa);
        const Dims d{5, 7, 19, 13, 3};
        const Parameters p = Parameters::random(d, 3);
        const auto [packed, layout] = pack_weights(t, p);
        REQUIRE(layout.size == packed.size());
        REQUIRE(layout.combine.offset == layout.scores.offset + layout.scores.size);
        const std::size_t B = 3 * t.mr + 2;
        for (bool shared : {false, true}) {
            CAPTURE(shared);
            const Inputs x = random_inputs(d, B, shared, shared, 4);
            const std::size_t ks = shared ? 0 : d.key_size, vs = shared ? 0 : d.value_size1 * d.value_size2;
            std::vector<float> out_all(B * d.output_size), w_all(B * d.value_size1);
            std::vector<float> out_one(out_all.size()), w_one(w_all.size());
            std::vector<float> scratch(t.scratch_size(d, B));
            t.forward(d, layout, packed.data(),
                      {B, x.Q.data(), x.K.data(), x.V.data(), ks, vs, out_all.data(), w_all.data()}, {0, B}, {},
                      scratch.data());
            // The same samples in tiles of 1, 2, 3, ... starting at every offset.
            for (std::size_t begin = 0, size = 1; begin < B; begin += size, ++size) {
                const std::size_t end = std::min(B, begin + size);
                std::vector<float> s(t.scratch_size(d, end - begin));
                t.forward(d, layout, packed.data(),
                          {B, x.Q.data(), x.K.data(), x.V.data(), ks, vs, out_one.data(), w_one.data()}, {begin, end},
                          {}, s.data());
            }
            check_same_bits("output in tiles", out_one, out_all);
            check_same_bits("attn_weights in tiles", w_one, w_all);
        }
    }
}
