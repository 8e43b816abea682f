// Recurrent kernels (SimpleRNN, LSTM, GRU) against a direct double-precision recurrence in Keras
// form.
#include <catch2/catch.hpp>

#include <sstream>

#include "rnn_ref.hpp"

namespace graft_test_kernels_recurrent {

using namespace rnn_ref;

namespace {

struct RnnCase {
    Kind cell;
    i64 n, t, i, u;
    bool seq, back, bias, reset_after, init_state;
    ActParams act, rec_act;
};

void run_rnn(const RnnCase& c) {
    const int G = gates(c.cell);
    const i64 U = c.u;
    Setup s;
    s.kind = c.cell, s.reset_after = c.reset_after, s.states0 = c.init_state;
    RnnParams& p = s.p;
    p.n = c.n; p.t = c.t; p.i = c.i; p.u = U;
    p.return_sequences = c.seq;
    p.go_backwards = c.back;
    p.act = c.act;
    p.rec_act = c.rec_act;
    s.x = rand_vec(c.n * c.t * c.i), s.W = rand_vec(c.i * G * U, -0.6f, 0.6f), s.R = rand_vec(U * G * U, -0.6f, 0.6f);
    fvec b = rand_vec((c.reset_after ? 2 : 1) * G * U);
    s.h0 = rand_vec(c.n * U), s.c0 = rand_vec(c.n * U);
    if (c.bias) s.b = b;
    dvec yr, hr, cr;
    ref(s, yr, hr, cr);

    const i64 ws = rnn_workspace(p, G);
    const float canary = 31337.f;
    fvec work(static_cast<std::size_t>(ws + 16), std::numeric_limits<float>::quiet_NaN());
    for (i64 k = ws; k < ws + 16; ++k) work[k] = canary;
    fvec y(yr.size(), 55.f), hl(hr.size(), 55.f), cl(cr.size(), 55.f);
    const fvec &x = s.x, &W = s.W, &R = s.R;
    const float* bp = c.bias ? b.data() : nullptr;
    const float* h0p = c.init_state ? s.h0.data() : nullptr;
    const float* c0p = c.init_state ? s.c0.data() : nullptr;
    switch (c.cell) {
        case Kind::rnn:  // qualified: graft_rt::simple_rnn (found through RnnParams) takes as many arguments
            graft::cpu::simple_rnn(x.data(), W.data(), R.data(), bp, y.data(), hl.data(), p, work.data(), h0p);
            break;
        case Kind::lstm:
            lstm(x.data(), W.data(), R.data(), bp, nullptr, y.data(), hl.data(), cl.data(), p, work.data(), h0p, c0p);
            break;
        case Kind::gru:
            gru(x.data(), W.data(), R.data(), bp, c.reset_after, y.data(), hl.data(), p, work.data(), h0p);
            break;
    }
    std::ostringstream what;
    what << "cell " << static_cast<int>(c.cell) << " N=" << c.n << " T=" << c.t << " I=" << c.i << " U=" << U
      << " seq=" << c.seq << " back=" << c.back << " bias=" << c.bias << " reset_after=" << c.reset_after
      << " init=" << c.init_state;
    check_close(y, yr, 1e-5, what.str() + " y");
    check_close(hl, hr, 1e-5, what.str() + " h_last");
    if (c.cell == Kind::lstm) check_close(cl, cr, 1e-5, what.str() + " c_last");
    bool canary_ok = true;
    for (i64 k = ws; k < ws + 16; ++k) canary_ok = canary_ok && work[k] == canary;
    CHECK(canary_ok);
    // h_last / c_last are optional.
    fvec y2(yr.size());
    switch (c.cell) {
        case Kind::rnn:
            graft::cpu::simple_rnn(x.data(), W.data(), R.data(), bp, y2.data(), nullptr, p, work.data(), h0p);
            break;
        case Kind::lstm:
            lstm(x.data(), W.data(), R.data(), bp, nullptr, y2.data(), nullptr, nullptr, p, work.data(), h0p, c0p);
            break;
        case Kind::gru:
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
    for (Kind cell : {Kind::rnn, Kind::lstm, Kind::gru})
        for (const Shape& s : shapes)
            for (int flags = 0; flags < 16; ++flags) {
                RnnCase c{cell, s.n, s.t, s.i, s.u, (flags & 1) != 0, (flags & 2) != 0, (flags & 4) != 0,
                          (flags & 8) != 0, ((flags + k) % 3) != 0, act_of(Act::tanh), act_of(Act::sigmoid)};
                if (cell != Kind::gru && c.reset_after) continue;
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

}  // namespace graft_test_kernels_recurrent
