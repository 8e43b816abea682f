// tests/unit/rnn_ref.hpp - the independent double-precision recurrence the recurrent kernel tests
// compare against, in Keras semantics: SimpleRNN, LSTM (gates i f c o) and GRU (gates z r h,
// reset_after both ways), optional bias and initial states, and Keras masks (a masked step keeps
// the states; its output is the previous output, zeros before any used step, or zeros with
// zero_output_for_mask).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernel_ref.hpp"

namespace rnn_ref {

using namespace kernel_ref;

enum class Kind { rnn, lstm, gru };

inline int gates(Kind k) { return k == Kind::lstm ? 4 : k == Kind::gru ? 3 : 1; }

/// A recurrent layer and its data (G gates, U units): x [N, T, I], W [I, G*U], R [U, G*U], b [G*U]
/// (GRU reset_after: [2, G*U], the second row the recurrent bias) or empty for no bias, mask [N, T]
/// when p.masked, initial states h0 and c0 [N, U] when states0.
struct Setup {
    Kind kind = Kind::rnn;
    RnnParams p{};
    bool reset_after = false, states0 = false;
    fvec x, W, R, b, mask, h0, c0;
};

/// y (sequences or the last output), the last h and (LSTM) c.
inline void ref(const Setup& s, dvec& y, dvec& hl, dvec& cl) {
    const RnnParams& p = s.p;
    const i64 U = p.u, G = gates(s.kind), GU = G * U;
    auto bias = [&](i64 at) { return s.b.empty() ? 0.0 : double(s.b[static_cast<std::size_t>(at)]); };
    y.assign(static_cast<std::size_t>(p.return_sequences ? p.n * p.t * U : p.n * U), 0);
    hl.assign(static_cast<std::size_t>(p.n * U), 0);
    cl.assign(static_cast<std::size_t>(p.n * U), 0);
    for (i64 n = 0; n < p.n; ++n) {
        dvec h(U, 0), c(U, 0), out(U, 0);
        if (s.states0)
            for (i64 j = 0; j < U; ++j) h[j] = s.h0[n * U + j], c[j] = s.c0[n * U + j];
        for (i64 st = 0; st < p.t; ++st) {
            const i64 tt = p.go_backwards ? p.t - 1 - st : st;
            dvec xw(GU), hr(GU, 0);
            for (i64 g = 0; g < GU; ++g) {
                xw[g] = bias(g);
                for (i64 k = 0; k < p.i; ++k) xw[g] += double(s.x[(n * p.t + tt) * p.i + k]) * s.W[k * GU + g];
                for (i64 k = 0; k < U; ++k) hr[g] += h[k] * s.R[k * GU + g];
                if (s.kind == Kind::gru && s.reset_after) hr[g] += bias(GU + g);
            }
            auto act = [&](double v) { return act_ref(v, p.act); };
            auto rec = [&](double v) { return act_ref(v, p.rec_act); };
            dvec hn(U), cn = c;
            for (i64 j = 0; j < U; ++j) {
                if (s.kind == Kind::rnn) {
                    hn[j] = act(xw[j] + hr[j]);
                } else if (s.kind == Kind::lstm) {
                    const double ig = rec(xw[j] + hr[j]), fg = rec(xw[U + j] + hr[U + j]);
                    const double cc = act(xw[2 * U + j] + hr[2 * U + j]), og = rec(xw[3 * U + j] + hr[3 * U + j]);
                    cn[j] = fg * c[j] + ig * cc;
                    hn[j] = og * act(cn[j]);
                } else {
                    const double z = rec(xw[j] + hr[j]), r = rec(xw[U + j] + hr[U + j]);
                    double pre = xw[2 * U + j];
                    if (s.reset_after) {
                        pre += r * hr[2 * U + j];
                    } else {  // + (r * h) Rh
                        double acc = 0;
                        for (i64 k = 0; k < U; ++k) acc += rec(xw[U + k] + hr[U + k]) * h[k] * s.R[k * GU + 2 * U + j];
                        pre += acc;
                    }
                    hn[j] = z * h[j] + (1 - z) * act(pre);
                }
            }
            if (!p.masked || s.mask[n * p.t + tt] != 0) {
                h = hn, c = cn, out = hn;
            } else if (p.zero_output_for_mask) {
                out.assign(U, 0);
            }
            if (p.return_sequences)
                for (i64 j = 0; j < U; ++j) y[(n * p.t + st) * U + j] = out[j];
        }
        for (i64 j = 0; j < U; ++j) {
            if (!p.return_sequences) y[n * U + j] = out[j];
            hl[n * U + j] = h[j], cl[n * U + j] = c[j];
        }
    }
}

/// Largest |got - want|.
inline double max_abs_error(const fvec& got, const dvec& want) {
    REQUIRE(got.size() == want.size());
    double w = 0;
    for (std::size_t i = 0; i < got.size(); ++i) w = std::max(w, std::fabs(got[i] - want[i]));
    return w;
}

}  // namespace rnn_ref
