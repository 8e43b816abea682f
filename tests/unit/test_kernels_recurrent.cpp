// Recurrent kernels (SimpleRNN, LSTM, GRU) against a direct double-precision recurrence in Keras
// form.
#include <catch2/catch.hpp>

#include <sstream>

#include "kernel_ref.hpp"

using namespace kernel_ref;

namespace {

enum class Cell { rnn, lstm, gru };

struct RnnCase {
    Cell cell;
    i64 n, t, i, u;
    bool seq, back, bias, reset_after, init_state;
    ActParams act, rec_act;
};

/// Direct double-precision recurrence in Keras form.
void rnn_ref(const RnnCase& c, const fvec& x, const fvec& W, const fvec& R, const fvec& b, const fvec& h0,
             const fvec& c0, dvec& y, dvec& h_last, dvec& c_last) {
    const i64 U = c.u, G = c.cell == Cell::lstm ? 4 : c.cell == Cell::gru ? 3 : 1;
    y.assign(static_cast<std::size_t>(c.seq ? c.n * c.t * U : c.n * U), 0.0);
    h_last.assign(static_cast<std::size_t>(c.n * U), 0.0);
    c_last.assign(static_cast<std::size_t>(c.n * U), 0.0);
    auto bias_at = [&](i64 row, i64 j) -> double { return c.bias ? b[row * G * U + j] : 0.0; };
    for (i64 n = 0; n < c.n; ++n) {
        dvec h(U), cs(U);
        for (i64 j = 0; j < U; ++j) {
            h[j] = c.init_state ? h0[n * U + j] : 0.0;
            cs[j] = c.init_state ? c0[n * U + j] : 0.0;
        }
        for (i64 s = 0; s < c.t; ++s) {
            const i64 tt = c.back ? c.t - 1 - s : s;
            const float* xt = &x[(n * c.t + tt) * c.i];
            dvec xw(G * U, 0.0), hr(G * U, 0.0);
            for (i64 g = 0; g < G * U; ++g) {
                xw[g] = bias_at(0, g);
                for (i64 k = 0; k < c.i; ++k) xw[g] += static_cast<double>(xt[k]) * W[k * G * U + g];
                for (i64 k = 0; k < U; ++k) hr[g] += h[k] * R[k * G * U + g];
            }
            dvec hn(U);
            if (c.cell == Cell::rnn) {
                for (i64 j = 0; j < U; ++j) hn[j] = act_ref(xw[j] + hr[j], c.act);
            } else if (c.cell == Cell::lstm) {
                for (i64 j = 0; j < U; ++j) {
                    const double ig = act_ref(xw[j] + hr[j], c.rec_act);
                    const double fg = act_ref(xw[U + j] + hr[U + j], c.rec_act);
                    const double cc = act_ref(xw[2 * U + j] + hr[2 * U + j], c.act);
                    const double og = act_ref(xw[3 * U + j] + hr[3 * U + j], c.rec_act);
                    cs[j] = fg * cs[j] + ig * cc;
                    hn[j] = og * act_ref(cs[j], c.act);
                }
            } else {
                dvec z(U), r(U);
                for (i64 j = 0; j < U; ++j) {
                    const double rz = c.reset_after ? bias_at(1, j) : 0.0;
                    const double rr = c.reset_after ? bias_at(1, U + j) : 0.0;
                    z[j] = act_ref(xw[j] + hr[j] + rz, c.rec_act);
                    r[j] = act_ref(xw[U + j] + hr[U + j] + rr, c.rec_act);
                }
                for (i64 j = 0; j < U; ++j) {
                    double hh;
                    if (c.reset_after) {
                        hh = act_ref(xw[2 * U + j] + r[j] * (hr[2 * U + j] + bias_at(1, 2 * U + j)), c.act);
                    } else {
                        double rec = 0;
                        for (i64 k = 0; k < U; ++k) rec += r[k] * h[k] * R[k * G * U + 2 * U + j];
                        hh = act_ref(xw[2 * U + j] + rec, c.act);
                    }
                    hn[j] = z[j] * h[j] + (1 - z[j]) * hh;
                }
            }
            h = hn;
            if (c.seq)
                for (i64 j = 0; j < U; ++j) y[(n * c.t + s) * U + j] = h[j];
        }
        for (i64 j = 0; j < U; ++j) {
            if (!c.seq) y[n * U + j] = h[j];
            h_last[n * U + j] = h[j];
            c_last[n * U + j] = cs[j];
        }
    }
}

void run_rnn(const RnnCase& c) {
    const int G = c.cell == Cell::lstm ? 4 : c.cell == Cell::gru ? 3 : 1;
    const i64 U = c.u;
    fvec x = rand_vec(c.n * c.t * c.i), W = rand_vec(c.i * G * U, -0.6f, 0.6f), R = rand_vec(U * G * U, -0.6f, 0.6f);
    fvec b = rand_vec((c.reset_after ? 2 : 1) * G * U), h0 = rand_vec(c.n * U), c0 = rand_vec(c.n * U);
    dvec yr, hr, cr;
    rnn_ref(c, x, W, R, b, h0, c0, yr, hr, cr);

    RnnParams p;
    p.n = c.n; p.t = c.t; p.i = c.i; p.u = U;
    p.return_sequences = c.seq;
    p.go_backwards = c.back;
    p.act = c.act;
    p.rec_act = c.rec_act;
    const i64 ws = rnn_workspace(p, G);
    const float canary = 31337.f;
    fvec work(static_cast<std::size_t>(ws + 16), std::numeric_limits<float>::quiet_NaN());
    for (i64 k = ws; k < ws + 16; ++k) work[k] = canary;
    fvec y(yr.size(), 55.f), hl(hr.size(), 55.f), cl(cr.size(), 55.f);
    const float* bp = c.bias ? b.data() : nullptr;
    const float* h0p = c.init_state ? h0.data() : nullptr;
    const float* c0p = c.init_state ? c0.data() : nullptr;
    switch (c.cell) {
        case Cell::rnn:  // qualified: graft_rt::simple_rnn (found through RnnParams) takes as many arguments
            graft::cpu::simple_rnn(x.data(), W.data(), R.data(), bp, y.data(), hl.data(), p, work.data(), h0p);
            break;
        case Cell::lstm:
            lstm(x.data(), W.data(), R.data(), bp, y.data(), hl.data(), cl.data(), p, work.data(), h0p, c0p);
            break;
        case Cell::gru:
            gru(x.data(), W.data(), R.data(), bp, c.reset_after, y.data(), hl.data(), p, work.data(), h0p);
            break;
    }
    std::ostringstream s;
    s << "cell " << static_cast<int>(c.cell) << " N=" << c.n << " T=" << c.t << " I=" << c.i << " U=" << U
      << " seq=" << c.seq << " back=" << c.back << " bias=" << c.bias << " reset_after=" << c.reset_after
      << " init=" << c.init_state;
    check_close(y, yr, 1e-5, s.str() + " y");
    check_close(hl, hr, 1e-5, s.str() + " h_last");
    if (c.cell == Cell::lstm) check_close(cl, cr, 1e-5, s.str() + " c_last");
    bool canary_ok = true;
    for (i64 k = ws; k < ws + 16; ++k) canary_ok = canary_ok && work[k] == canary;
    CHECK(canary_ok);
    // h_last / c_last are optional.
    fvec y2(yr.size());
    switch (c.cell) {
        case Cell::rnn:
            graft::cpu::simple_rnn(x.data(), W.data(), R.data(), bp, y2.data(), nullptr, p, work.data(), h0p);
            break;
        case Cell::lstm:
            lstm(x.data(), W.data(), R.data(), bp, y2.data(), nullptr, nullptr, p, work.data(), h0p, c0p);
            break;
        case Cell::gru:
            gru(x.data(), W.data(), R.data(), bp, c.reset_after, y2.data(), nullptr, p, work.data(), h0p);
            break;
    }
    CHECK(y2 == y);
}

}  // namespace

TEST_CASE("recurrent: SimpleRNN, LSTM, GRU against the Keras recurrence", "[kernels][recurrent]") {
    struct Shape { i64 n, t, i, u; };
    const Shape shapes[] = {{1, 1, 1, 1}, {2, 5, 3, 4}, {3, 4, 2, 17}, {1, 6, 5, 9}};
    int k = 0;
    for (Cell cell : {Cell::rnn, Cell::lstm, Cell::gru})
        for (const Shape& s : shapes)
            for (int flags = 0; flags < 16; ++flags) {
                RnnCase c{cell, s.n, s.t, s.i, s.u, (flags & 1) != 0, (flags & 2) != 0, (flags & 4) != 0,
                          (flags & 8) != 0, ((flags + k) % 3) != 0, act_of(Act::tanh), act_of(Act::sigmoid)};
                if (cell != Cell::gru && c.reset_after) continue;
                if (k % 5 == 1) c.rec_act = act_of(Act::hard_sigmoid);
                if (k % 7 == 2) c.act = act_of(Act::relu);
                ++k;
                run_rnn(c);
            }
}

TEST_CASE("recurrent: go_backwards emits sequences in processing order", "[kernels][recurrent]") {
    // A SimpleRNN that only accumulates its input (act linear, W = 1, R = 1) makes the order visible.
    RnnParams p;
    p.n = 1; p.t = 3; p.i = 1; p.u = 1;
    p.return_sequences = true;
    p.go_backwards = true;
    p.act = act_of(Act::linear);
    const float x[3] = {1.f, 10.f, 100.f}, W = 1.f, R = 1.f;
    fvec work(static_cast<std::size_t>(rnn_workspace(p, 1)));
    float y[3], h = 0;
    simple_rnn(x, &W, &R, nullptr, y, &h, p, work.data());
    CHECK(y[0] == 100.f);
    CHECK(y[1] == 110.f);
    CHECK(y[2] == 111.f);
    CHECK(h == 111.f);
}
