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

using namespace graft::cpu;

namespace {

using i64 = std::int64_t;
using dvec = std::vector<double>;
using fvec = std::vector<float>;

fvec rv(i64 n, std::mt19937& g, float s = 0.7f) {
    std::uniform_real_distribution<float> d(-s, s);
    fvec v(static_cast<std::size_t>(n));
    for (auto& e : v) e = d(g);
    return v;
}
double sig(double x) { return 1 / (1 + std::exp(-x)); }

enum class Kind { rnn, lstm, gru };

/// y (sequences or last output), h, c: tanh / sigmoid cells; GRU with reset_after.
void ref(Kind kind, const RnnParams& p, const fvec& x, const fvec& W, const fvec& R, const fvec& b, const fvec& mask,
         dvec& y, dvec& hl, dvec& cl) {
    const i64 U = p.u, G = kind == Kind::lstm ? 4 : kind == Kind::gru ? 3 : 1;
    y.assign(static_cast<std::size_t>(p.return_sequences ? p.n * p.t * U : p.n * U), 0);
    hl.assign(static_cast<std::size_t>(p.n * U), 0);
    cl.assign(static_cast<std::size_t>(p.n * U), 0);
    for (i64 n = 0; n < p.n; ++n) {
        dvec h(U, 0), c(U, 0), out(U, 0);
        for (i64 s = 0; s < p.t; ++s) {
            const i64 tt = p.go_backwards ? p.t - 1 - s : s;
            dvec xw(G * U), hr(G * U, 0);
            for (i64 g = 0; g < G * U; ++g) {
                xw[g] = b[g];
                for (i64 k = 0; k < p.i; ++k) xw[g] += double(x[(n * p.t + tt) * p.i + k]) * W[k * G * U + g];
                for (i64 k = 0; k < U; ++k) hr[g] += h[k] * R[k * G * U + g];
                if (kind == Kind::gru) hr[g] += b[G * U + g];
            }
            dvec hn(U), cn = c;
            for (i64 j = 0; j < U; ++j) {
                if (kind == Kind::rnn) {
                    hn[j] = std::tanh(xw[j] + hr[j]);
                } else if (kind == Kind::lstm) {
                    const double ig = sig(xw[j] + hr[j]), fg = sig(xw[U + j] + hr[U + j]);
                    const double cc = std::tanh(xw[2 * U + j] + hr[2 * U + j]), og = sig(xw[3 * U + j] + hr[3 * U + j]);
                    cn[j] = fg * c[j] + ig * cc;
                    hn[j] = og * std::tanh(cn[j]);
                } else {
                    const double z = sig(xw[j] + hr[j]), r = sig(xw[U + j] + hr[U + j]);
                    const double hh = std::tanh(xw[2 * U + j] + r * hr[2 * U + j]);
                    hn[j] = z * h[j] + (1 - z) * hh;
                }
            }
            if (mask[n * p.t + tt] != 0) {
                h = hn, c = cn, out = hn;
            } else if (p.zero_output_for_mask) {
                out.assign(U, 0);
            }
            if (p.return_sequences)
                for (i64 j = 0; j < U; ++j) y[(n * p.t + s) * U + j] = out[j];
        }
        for (i64 j = 0; j < U; ++j) {
            if (!p.return_sequences) y[n * U + j] = out[j];
            hl[n * U + j] = h[j], cl[n * U + j] = c[j];
        }
    }
}

void close(const fvec& got, const dvec& want) {
    REQUIRE(got.size() == want.size());
    double worst = 0;
    for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(got[i] - want[i]));
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
            const i64 G = kind == Kind::lstm ? 4 : kind == Kind::gru ? 3 : 1;
            fvec x = rv(p.n * p.t * p.i, g, 1.f), W = rv(p.i * G * p.u, g), R = rv(p.u * G * p.u, g), b = rv(2 * G * p.u, g);
            // row 0: trailing padding; row 1: leading and inner gaps; row 2: everything masked
            const fvec mask{1, 1, 1, 0, 0, /**/ 0, 1, 0, 1, 1, /**/ 0, 0, 0, 0, 0};
            dvec yr, hr, cr;
            ref(kind, p, x, W, R, b, mask, yr, hr, cr);
            fvec y(yr.size()), hl(hr.size()), cl(cr.size()), work(static_cast<std::size_t>(rnn_workspace(p, static_cast<int>(G))));
            INFO("kind " << int(kind) << " variant " << variant);
            if (kind == Kind::rnn) simple_rnn(x.data(), W.data(), R.data(), b.data(), y.data(), hl.data(), p, work.data(), nullptr, mask.data());
            if (kind == Kind::lstm)
                lstm(x.data(), W.data(), R.data(), b.data(), y.data(), hl.data(), cl.data(), p, work.data(), nullptr, nullptr, mask.data());
            if (kind == Kind::gru) gru(x.data(), W.data(), R.data(), b.data(), true, y.data(), hl.data(), p, work.data(), nullptr, mask.data());
            close(y, yr);
            close(hl, hr);
            if (kind == Kind::lstm) close(cl, cr);
        }
}
