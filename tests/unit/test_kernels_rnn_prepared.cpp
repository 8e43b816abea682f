// The recurrent kernels' fast paths (RnnPrepared: W packed for the GEMM, R packed in panels
// and/or in the matrix-vector layout, the batch split over a thread pool) on every supported
// instruction set, against an independent double-precision recurrence (Keras semantics:
// gate orders i f c o / z r h, masks keep the states, GRU reset_after both ways).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "cpu/gemm/gemm.hpp"
#include "cpu/gemm/gemv.hpp"
#include "cpu/kernels.hpp"
#include "cpu/threadpool.hpp"
#include "isa_support.hpp"

using namespace graft::cpu;
namespace gg = graft::cpu::gemm;

namespace {

using i64 = std::int64_t;
using dvec = std::vector<double>;
using fvec = std::vector<float>;

fvec rv(i64 n, std::mt19937& g, float s) {
    std::uniform_real_distribution<float> d(-s, s);
    fvec v(static_cast<std::size_t>(n));
    for (auto& e : v) e = d(g);
    return v;
}

double act(Act a, double x) {
    switch (a) {
        case Act::tanh:
            return std::tanh(x);
        case Act::sigmoid:
            return 1 / (1 + std::exp(-x));
        case Act::relu:
            return x > 0 ? x : 0;
        case Act::hard_sigmoid:
            return std::min(std::max(0.2 * x + 0.5, 0.0), 1.0);
        default:
            return x;
    }
}

enum class Kind { rnn, lstm, gru };

struct Setup {
    Kind kind;
    RnnParams p;
    bool reset_after = false, states0 = false;
    fvec x, W, R, b, mask, h0, c0;
};

int gates(Kind k) { return k == Kind::lstm ? 4 : k == Kind::gru ? 3 : 1; }

/// y (sequences or last output), h, c.
void ref(const Setup& s, dvec& y, dvec& hl, dvec& cl) {
    const RnnParams& p = s.p;
    const i64 U = p.u, G = gates(s.kind), GU = G * U;
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
                xw[g] = s.b[g];
                for (i64 k = 0; k < p.i; ++k) xw[g] += double(s.x[(n * p.t + tt) * p.i + k]) * s.W[k * GU + g];
                for (i64 k = 0; k < U; ++k) hr[g] += h[k] * s.R[k * GU + g];
                if (s.kind == Kind::gru && s.reset_after) hr[g] += s.b[GU + g];
            }
            dvec hn(U), cn = c;
            for (i64 j = 0; j < U; ++j) {
                if (s.kind == Kind::rnn) {
                    hn[j] = act(p.act.kind, xw[j] + hr[j]);
                } else if (s.kind == Kind::lstm) {
                    const double ig = act(p.rec_act.kind, xw[j] + hr[j]),
                                 fg = act(p.rec_act.kind, xw[U + j] + hr[U + j]);
                    const double cc = act(p.act.kind, xw[2 * U + j] + hr[2 * U + j]);
                    const double og = act(p.rec_act.kind, xw[3 * U + j] + hr[3 * U + j]);
                    cn[j] = fg * c[j] + ig * cc;
                    hn[j] = og * act(p.act.kind, cn[j]);
                } else {
                    const double z = act(p.rec_act.kind, xw[j] + hr[j]), r = act(p.rec_act.kind, xw[U + j] + hr[U + j]);
                    double pre;
                    if (s.reset_after) {
                        pre = xw[2 * U + j] + r * hr[2 * U + j];
                    } else {
                        pre = xw[2 * U + j];  // + (r*h) Rh
                        double acc = 0;
                        for (i64 k = 0; k < U; ++k) {
                            const double rk = act(p.rec_act.kind, xw[U + k] + hr[U + k]);
                            acc += rk * h[k] * s.R[k * GU + 2 * U + j];
                        }
                        pre += acc;
                    }
                    hn[j] = z * h[j] + (1 - z) * act(p.act.kind, pre);
                }
            }
            const bool use = !p.masked || s.mask[n * p.t + tt] != 0;
            if (use) {
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

double worst(const fvec& got, const dvec& want) {
    REQUIRE(got.size() == want.size());
    double w = 0;
    for (std::size_t i = 0; i < got.size(); ++i) w = std::max(w, std::fabs(got[i] - want[i]));
    return w;
}

/// Runs the kernel with the given preparation and compares every output with the reference.
void run_and_check(const Setup& s, const RnnPrepared& prep, const dvec& yr, const dvec& hr, const dvec& cr) {
    const RnnParams& p = s.p;
    fvec y(yr.size(), 7.f), hl(hr.size(), 7.f), cl(cr.size(), 7.f);
    fvec work(static_cast<std::size_t>(rnn_workspace(p, gates(s.kind))), 1e30f);  // stale garbage
    const float* mask = p.masked ? s.mask.data() : nullptr;
    const float* h0 = s.states0 ? s.h0.data() : nullptr;
    const float* c0 = s.states0 ? s.c0.data() : nullptr;
    if (s.kind == Kind::rnn)
        simple_rnn(s.x.data(), s.W.data(), s.R.data(), s.b.data(), y.data(), hl.data(), p, work.data(), h0, mask, prep);
    if (s.kind == Kind::lstm)
        lstm(s.x.data(), s.W.data(), s.R.data(), s.b.data(), y.data(), hl.data(), cl.data(), p, work.data(), h0, c0,
             mask, prep);
    if (s.kind == Kind::gru)
        gru(s.x.data(), s.W.data(), s.R.data(), s.b.data(), s.reset_after, y.data(), hl.data(), p, work.data(), h0,
            mask, prep);
    CHECK(worst(y, yr) <= 1e-5);
    CHECK(worst(hl, hr) <= 1e-5);
    if (s.kind == Kind::lstm) CHECK(worst(cl, cr) <= 1e-5);
}

}  // namespace

TEST_CASE("recurrent: packed weights, matrix-vector steps and the batch split match a double reference",
          "[kernels][recurrent]") {
    std::mt19937 g(2024);
    graft::cpu::ThreadPool two(2), three(3);
    const auto isas = graft_test::isas();
    graft_test::IsaGuard restore;
    for (gg::Isa isa : isas) {
        REQUIRE(gg::set_isa(isa));
        for (Kind kind : {Kind::rnn, Kind::lstm, Kind::gru})
            for (i64 n : {1, 2, 3, 5})
                for (i64 u : {3, 16, 37})
                    for (int variant = 0; variant < 4; ++variant) {
                        Setup s;
                        s.kind = kind;
                        RnnParams& p = s.p;
                        p.n = n, p.t = 4, p.i = 5, p.u = u;
                        p.return_sequences = variant & 1;
                        p.go_backwards = (variant + n) % 3 == 0;
                        p.masked = variant >= 2;
                        p.zero_output_for_mask = variant == 3;
                        s.reset_after = kind == Kind::gru && (u + variant) % 2 == 0;
                        s.states0 = (n + u + variant) % 2 == 1;
                        if (variant == 1 && u == 16) {  // non-default activations: the unfused cells
                            p.act.kind = Act::relu;
                            p.rec_act.kind = Act::hard_sigmoid;
                        }
                        const i64 G = gates(kind), GU = G * u;
                        s.x = rv(n * p.t * p.i, g, 1.f);
                        s.W = rv(p.i * GU, g, 0.6f);
                        s.R = rv(u * GU, g, 0.6f);
                        s.b = rv(2 * GU, g, 0.5f);
                        s.h0 = rv(n * u, g, 0.8f);
                        s.c0 = rv(n * u, g, 0.8f);
                        s.mask.assign(static_cast<std::size_t>(n * p.t), 1.f);
                        for (i64 k = 0; k < n * p.t; ++k)
                            if ((k * 7 + variant) % 3 == 0) s.mask[k] = 0.f;
                        dvec yr, hr, cr;
                        ref(s, yr, hr, cr);

                        const bool split = kind == Kind::gru && !s.reset_after;
                        const fvec wp = gg::pack_b(s.W.data(), GU, p.i, GU);
                        const fvec rp = rnn_pack_recurrent(s.R.data(), u, static_cast<int>(G), split, false);
                        const fvec rg = rnn_pack_recurrent(s.R.data(), u, static_cast<int>(G), split, true);
                        INFO("isa " << gg::isa_name(isa) << " kind " << int(kind) << " n " << n << " u " << u
                                    << " variant " << variant << " reset_after " << s.reset_after);
                        RnnPrepared prep;
                        {
                            INFO("plain");
                            run_and_check(s, prep, yr, hr, cr);
                        }
                        prep.w_packed = wp.data();
                        prep.r_packed = rp.data();
                        {
                            INFO("packed panels");
                            run_and_check(s, prep, yr, hr, cr);
                        }
                        prep.r_packed = nullptr;
                        prep.r_gemv = rg.data();
                        {
                            INFO("matrix-vector layout only");
                            if (n == 1) run_and_check(s, prep, yr, hr, cr);
                        }
                        prep.r_packed = rp.data();
                        prep.pool = &two;
                        {
                            INFO("both layouts, 2 threads");
                            run_and_check(s, prep, yr, hr, cr);
                        }
                        prep.pool = &three;
                        {
                            INFO("both layouts, 3 threads");
                            run_and_check(s, prep, yr, hr, cr);
                        }
                    }
    }
}

TEST_CASE("recurrent: a large batch split over threads (the parallel threshold is crossed)", "[kernels][recurrent]") {
    std::mt19937 g(77);
    graft::cpu::ThreadPool two(2), three(3);
    for (Kind kind : {Kind::rnn, Kind::lstm, Kind::gru})
        for (int variant = 0; variant < 4; ++variant) {
            Setup s;
            s.kind = kind;
            RnnParams& p = s.p;
            p.n = 9, p.t = 12, p.i = 20, p.u = kind == Kind::rnn ? 70 : 40;
            p.return_sequences = variant & 1;
            p.go_backwards = variant == 2;
            p.masked = variant >= 2;
            s.reset_after = variant % 2 == 0;
            s.states0 = variant == 1;
            const i64 G = gates(kind), GU = G * p.u;
            REQUIRE(p.n * p.t * GU * (p.i + p.u) >= (1 << 17));  // above the kernels' parallel threshold
            s.x = rv(p.n * p.t * p.i, g, 1.f);
            s.W = rv(p.i * GU, g, 0.3f);
            s.R = rv(p.u * GU, g, 0.3f);
            s.b = rv(2 * GU, g, 0.5f);
            s.h0 = rv(p.n * p.u, g, 0.8f);
            s.c0 = rv(p.n * p.u, g, 0.8f);
            s.mask.assign(static_cast<std::size_t>(p.n * p.t), 1.f);
            for (i64 k = 0; k < p.n * p.t; ++k)
                if (k % 5 == 2) s.mask[k] = 0.f;
            dvec yr, hr, cr;
            ref(s, yr, hr, cr);
            const bool split = kind == Kind::gru && !s.reset_after;
            const fvec wp = gg::pack_b(s.W.data(), GU, p.i, GU);
            const fvec rp = rnn_pack_recurrent(s.R.data(), p.u, static_cast<int>(G), split, false);
            INFO("kind " << int(kind) << " variant " << variant);
            RnnPrepared prep;
            prep.w_packed = wp.data();
            prep.r_packed = rp.data();
            prep.pool = &two;
            run_and_check(s, prep, yr, hr, cr);
            prep.pool = &three;
            run_and_check(s, prep, yr, hr, cr);
            prep.r_packed = nullptr;  // plain R, split batch
            run_and_check(s, prep, yr, hr, cr);
        }
}

TEST_CASE("recurrent: LSTM at batch 1 split by units (part order, one barrier per step)", "[kernels][recurrent]") {
    std::mt19937 g(91);
    graft::cpu::ThreadPool one(1), two(2), three(3);
    const auto isas = graft_test::isas();
    graft_test::IsaGuard restore;
    for (gg::Isa isa : isas) {
        REQUIRE(gg::set_isa(isa));
        for (i64 u : {64, 72, 128})
            for (int variant = 0; variant < 6; ++variant) {
                Setup s;
                s.kind = Kind::lstm;
                RnnParams& p = s.p;
                p.n = 1, p.t = u == 128 ? 5 : 8, p.i = u == 128 ? 7 : 16, p.u = u;
                p.return_sequences = variant & 1;
                p.go_backwards = variant == 2 || variant == 5;
                p.masked = variant >= 3;
                p.zero_output_for_mask = variant == 4;
                s.states0 = variant % 3 == 1;
                const bool with_bias = variant != 2;
                const i64 GU = 4 * u;
                REQUIRE(p.t * GU * (p.i + u) >= (1 << 17));  // threads take part when the pool has two
                s.x = rv(p.t * p.i, g, 1.f);
                s.W = rv(p.i * GU, g, 0.25f);
                s.R = rv(u * GU, g, 0.15f);
                s.b = with_bias ? rv(GU, g, 0.5f) : fvec(static_cast<std::size_t>(GU), 0.f);
                s.h0 = rv(u, g, 0.8f);
                s.c0 = rv(u, g, 0.8f);
                s.mask.assign(static_cast<std::size_t>(p.t), 1.f);
                s.mask[1] = 0.f;
                s.mask[static_cast<std::size_t>(p.t - 1)] = 0.f;
                dvec yr, hr, cr;
                ref(s, yr, hr, cr);
                fvec wo(s.W.size()), ro(s.R.size()), bo(s.b.size());
                rnn_lstm_part_order(s.W.data(), p.i, u, 2, wo.data());
                rnn_lstm_part_order(s.R.data(), u, u, 2, ro.data());
                rnn_lstm_part_order(s.b.data(), 1, u, 2, bo.data());
                const fvec wp = gg::pack_b(wo.data(), GU, p.i, GU);
                const fvec rg = gg::gemv_pack(ro.data(), GU, u, GU);
                RnnPrepared prep;
                prep.parts = 2;
                prep.w_packed = wp.data();
                prep.r_gemv = rg.data();
                prep.b_parts = with_bias ? bo.data() : nullptr;
                INFO("isa " << gg::isa_name(isa) << " u " << u << " variant " << variant);
                for (graft::cpu::ThreadPool* pool :
                     {static_cast<graft::cpu::ThreadPool*>(nullptr), &one, &two, &three}) {
                    prep.pool = pool;
                    INFO("threads " << (pool ? pool->size() : 0));
                    run_and_check(s, prep, yr, hr, cr);
                }
            }
    }
    // Part order with activations it does not cover: the kernel falls back to the plain path.
    Setup s;
    s.kind = Kind::lstm;
    s.p.n = 1, s.p.t = 3, s.p.i = 4, s.p.u = 64;
    s.p.act.kind = Act::relu;
    s.x = rv(s.p.t * s.p.i, g, 1.f);
    s.W = rv(s.p.i * 256, g, 0.2f);
    s.R = rv(64 * 256, g, 0.1f);
    s.b = rv(256, g, 0.5f);
    dvec yr, hr, cr;
    ref(s, yr, hr, cr);
    fvec junk(256 * 256, 1e6f);  // never read
    RnnPrepared prep;
    prep.parts = 2;
    prep.w_packed = junk.data();
    prep.r_gemv = junk.data();
    prep.b_parts = junk.data();
    run_and_check(s, prep, yr, hr, cr);
}
