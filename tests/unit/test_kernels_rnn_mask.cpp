// Masked recurrent kernels (Keras masks from Embedding mask_zero / Masking) against an
// independent double-precision recurrence that follows Keras backend.rnn: a masked step keeps
// the states; its output is the previous output (zeros before any used step) or zeros.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "cpu/kernels.hpp"
#include "rnn_ref.hpp"

namespace graft_test_kernels_rnn_mask {

using namespace rnn_ref;

namespace {

fvec rv(i64 n, std::mt19937& g, float s = 0.7f) { return rand_vec(g, n, -s, s); }

void close(const fvec& got, const dvec& want) {
    const double worst = max_abs_error(got, want);
    INFO("max abs error " << worst);
    CHECK(worst <= 1e-5);
}

}  // namespace

TEST_CASE("recurrent: Keras masks keep states and carry or zero outputs", "[kernels][recurrent][mask]") {
    std::mt19937 g(99);
    for (Kind kind : {Kind::rnn, Kind::lstm, Kind::gru})
        for (int variant = 0; variant < 8; ++variant) {
            RnnParams p;
            p.n = 3, p.t = 5, p.i = 4, p.u = 3;
            p.return_sequences = variant & 1;
            p.go_backwards = variant & 2;
            p.zero_output_for_mask = variant & 4;
            p.masked = true;
            const i64 G = gates(kind);
            fvec x = rv(p.n * p.t * p.i, g, 1.f), W = rv(p.i * G * p.u, g), R = rv(p.u * G * p.u, g), b = rv(2 * G * p.u, g);
            // row 0: trailing padding; row 1: leading and inner gaps; row 2: everything masked
            const fvec mask{1, 1, 1, 0, 0, /**/ 0, 1, 0, 1, 1, /**/ 0, 0, 0, 0, 0};
            dvec yr, hr, cr;
            Setup s{kind, p, kind == Kind::gru, false, x, W, R, b, mask, {}, {}};  // GRU with reset_after
            ref(s, yr, hr, cr);
            fvec y(yr.size()), hl(hr.size()), cl(cr.size()), work(static_cast<std::size_t>(rnn_workspace(p, static_cast<int>(G))));
            INFO("kind " << int(kind) << " variant " << variant);
            if (kind == Kind::rnn) simple_rnn(x.data(), W.data(), R.data(), b.data(), y.data(), hl.data(), p, work.data(), nullptr, mask.data());
            if (kind == Kind::lstm)
                lstm(x.data(), W.data(), R.data(), b.data(), nullptr, y.data(), hl.data(), cl.data(), p, work.data(), nullptr, nullptr, mask.data());
            if (kind == Kind::gru) gru(x.data(), W.data(), R.data(), b.data(), true, y.data(), hl.data(), p, work.data(), nullptr, mask.data());
            close(y, yr);
            close(hl, hr);
            if (kind == Kind::lstm) close(cl, cr);
        }
}

}  // namespace graft_test_kernels_rnn_mask
