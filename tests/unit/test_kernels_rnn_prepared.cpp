// The recurrent kernels' fast paths (RnnPrepared: W packed for the GEMM, R packed in panels
// and/or in the matrix-vector layout, the batch split over a thread pool) on every supported
// instruction set, against an independent double-precision recurrence (Keras semantics:
// gate orders i f c o / z r h, masks keep the states, GRU reset_after both ways).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <random>
#include <vector>

#include "cpu/gemm/gemm.hpp"
#include "cpu/gemm/gemv.hpp"
#include "cpu/gemm/qgemm.hpp"
#include "cpu/kernels.hpp"
#include "cpu/threadpool.hpp"
#include "isa_support.hpp"
#include "rnn_ref.hpp"

namespace graft_test_kernels_rnn_prepared {

using namespace rnn_ref;
namespace gg = graft::cpu::gemm;

namespace {

fvec rv(i64 n, std::mt19937& g, float s) { return rand_vec(g, n, -s, s); }

/// Runs the kernel with the given preparation and compares every output with the reference, within
/// `tol` (int8 weights: RnnPrepared::w_q, whose scratch follows the workspace).
void run_and_check(const Setup& s, RnnPrepared prep, const dvec& yr, const dvec& hr, const dvec& cr, double tol = 1e-5) {
    const RnnParams& p = s.p;
    fvec y(yr.size(), 7.f), hl(hr.size(), 7.f), cl(cr.size(), 7.f);
    const i64 ws = rnn_work_floats(p, static_cast<int>(gates(s.kind)), prep);
    fvec work(static_cast<std::size_t>(ws + (prep.w_q ? rnn_qwork(p) : 0)), 1e30f);  // stale garbage
    if (prep.w_q) prep.qwork = work.data() + ws;
    const float* mask = p.masked ? s.mask.data() : nullptr;
    const float* h0 = s.states0 ? s.h0.data() : nullptr;
    const float* c0 = s.states0 ? s.c0.data() : nullptr;
    if (s.kind == Kind::rnn)
        simple_rnn(s.x.data(), s.W.data(), s.R.data(), s.b.data(), y.data(), hl.data(), p, work.data(), h0, mask, prep);
    if (s.kind == Kind::lstm)
        lstm(s.x.data(), s.W.data(), s.R.data(), s.b.data(), nullptr, y.data(), hl.data(), cl.data(), p, work.data(), h0, c0,
             mask, prep);
    if (s.kind == Kind::gru)
        gru(s.x.data(), s.W.data(), s.R.data(), s.b.data(), s.reset_after, y.data(), hl.data(), p, work.data(), h0,
            mask, prep);
    CHECK(max_abs_error(y, yr) <= tol);
    CHECK(max_abs_error(hl, hr) <= tol);
    if (s.kind == Kind::lstm) CHECK(max_abs_error(cl, cr) <= tol);
}

/// An LSTM at batch 1 with its weights in part order (`parts` slices, as ops/recurrent prepares
/// them) on each pool, against the double reference.
void check_parts(const Setup& s, bool with_bias, std::initializer_list<graft::cpu::ThreadPool*> pools, int parts = 2) {
    const RnnParams& p = s.p;
    const i64 u = p.u, GU = 4 * u;
    dvec yr, hr, cr;
    ref(s, yr, hr, cr);
    fvec wo(s.W.size()), ro(s.R.size()), bo(s.b.size());
    rnn_lstm_part_order(s.W.data(), p.i, u, parts, wo.data());
    rnn_lstm_part_order(s.R.data(), u, u, parts, ro.data());
    rnn_lstm_part_order(s.b.data(), 1, u, parts, bo.data());
    const fvec wp = gg::pack_b(wo.data(), GU, p.i, GU);
    const fvec rg = gg::gemv_pack(ro.data(), GU, u, GU);
    RnnPrepared prep;
    prep.parts = parts;
    prep.w_packed = wp.data();
    prep.r_gemv = rg.data();
    prep.b_parts = with_bias ? bo.data() : nullptr;
    for (graft::cpu::ThreadPool* pool : pools)
        for (bool r_finite : {false, true}) {  // true: without h0 the first step reads no R
            prep.pool = pool;
            prep.r_finite = r_finite;
            INFO("threads " << (pool ? pool->size() : 0) << " r_finite " << r_finite);
            run_and_check(s, prep, yr, hr, cr);
        }
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
                        // I = 32 with 16 units: [W; R] stacked reads [x_t | h] as segments of 16
                        // (gemm::SplitA); 5 with 3 or 37 units, each part in blocks of its own.
                        p.n = n, p.t = 4, p.i = u == 16 ? 32 : 5, p.u = u;
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
                        if (kind != Kind::gru) {
                            const fvec wr = rnn_pack_stacked(s.W.data(), s.R.data(), p.i, u, static_cast<int>(G));
                            RnnPrepared st;
                            st.wr_packed = wr.data();
                            {
                                INFO("[W; R] stacked");
                                run_and_check(s, st, yr, hr, cr);
                            }
                            st.pool = &three;
                            {
                                INFO("[W; R] stacked, 3 threads");
                                run_and_check(s, st, yr, hr, cr);
                            }
                            st.r_finite = true;  // without h0: the first step's product over [W] alone
                            graft::cpu::ThreadPool* const one_or_three[] = {nullptr, &three};
                            for (graft::cpu::ThreadPool* pool : one_or_three) {
                                st.pool = pool;
                                INFO("[W; R] stacked, first step over W, threads " << (pool ? 3 : 1));
                                run_and_check(s, st, yr, hr, cr);
                            }
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
            if (kind != Kind::gru) {  // [W; R] stacked, split batch
                const fvec wr = rnn_pack_stacked(s.W.data(), s.R.data(), p.i, p.u, static_cast<int>(G));
                RnnPrepared st;
                st.wr_packed = wr.data();
                st.pool = &two;
                run_and_check(s, st, yr, hr, cr);
            }
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
                INFO("isa " << gg::isa_name(isa) << " u " << u << " variant " << variant);
                check_parts(s, with_bias, {nullptr, &one, &two, &three});
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

// Long enough for the projection to run inside the steps (gemv_tile.hpp; AVX-512): 8-step groups
// and a tail, both directions, masks, input sizes for 1, 2 and 4 block rows per tile row.
TEST_CASE("recurrent: LSTM at batch 1 with the projection interleaved in the steps", "[kernels][recurrent]") {
    std::mt19937 g(17);
    graft::cpu::ThreadPool two(2), three(3);
    const auto isas = graft_test::isas();
    graft_test::IsaGuard restore;
    struct Shape {
        i64 t, i, u;
    };
    for (gg::Isa isa : isas) {
        REQUIRE(gg::set_isa(isa));
        for (const Shape sh : {Shape{16, 64, 128}, Shape{21, 30, 128}, Shape{37, 200, 64}, Shape{24, 7, 192}})
            for (int variant = 0; variant < 4; ++variant) {
                Setup s;
                s.kind = Kind::lstm;
                RnnParams& p = s.p;
                p.n = 1, p.t = sh.t, p.i = sh.i, p.u = sh.u;
                p.return_sequences = variant != 1;
                p.go_backwards = variant == 1 || variant == 3;
                p.masked = variant >= 2;
                s.states0 = variant == 2;
                const i64 GU = 4 * p.u;
                s.x = rv(p.t * p.i, g, 1.f);
                s.W = rv(p.i * GU, g, 0.6f / std::sqrt(static_cast<float>(p.i)));
                s.R = rv(p.u * GU, g, 0.6f / std::sqrt(static_cast<float>(p.u)));
                const bool with_bias = variant != 3;
                s.b = with_bias ? rv(GU, g, 0.5f) : fvec(static_cast<std::size_t>(GU), 0.f);
                s.h0 = rv(p.u, g, 0.8f);
                s.c0 = rv(p.u, g, 0.8f);
                s.mask.assign(static_cast<std::size_t>(p.t), 1.f);
                s.mask[3] = s.mask[9] = s.mask[static_cast<std::size_t>(p.t - 2)] = 0.f;
                INFO("isa " << gg::isa_name(isa) << " t " << p.t << " i " << p.i << " u " << p.u << " variant " << variant);
                check_parts(s, with_bias, {nullptr, &two});
                if (p.u % 128 == 0) {  // four slices, two per thread of the pair (three threads: 2 tasks)
                    INFO("four slices");
                    check_parts(s, with_bias, {nullptr, &two, &three}, 4);
                }
            }
    }
}

// int8 (gemm::qgemm): W and R quantised per column, h and x per row at run time; an int8 LSTM at
// batch 1 runs whole (split by units over two threads, measured, its per-step barrier cost what the
// second thread saved). Against the double reference of the float weights, within 0.02 (outputs
// are tanh-bounded; the quantisation error of these sizes is a few 1e-3, a wrong column or scale
// is 0.1 and more).
TEST_CASE("recurrent: int8 weights stay within 0.02 of the float reference, on one thread or two", "[kernels][recurrent]") {
    std::mt19937 g(92);
    graft::cpu::ThreadPool two(2);
    constexpr double kTol8 = 0.02;
    for (Kind kind : {Kind::lstm, Kind::gru, Kind::rnn})
        for (i64 n : {1, 3}) {
            Setup s;
            s.kind = kind;
            s.reset_after = true;
            RnnParams& p = s.p;
            p.n = n, p.t = 6, p.i = 12, p.u = 40;
            p.return_sequences = true;
            const i64 GU = gates(kind) * p.u;
            s.x = rv(p.n * p.t * p.i, g, 1.f);
            s.W = rv(p.i * GU, g, 0.3f);
            s.R = rv(p.u * GU, g, 0.2f);
            s.b = rv(kind == Kind::gru ? 2 * GU : GU, g, 0.5f);
            s.h0 = rv(p.n * p.u, g, 0.8f);
            s.c0 = rv(p.n * p.u, g, 0.8f);
            dvec yr, hr, cr;
            ref(s, yr, hr, cr);
            const fvec wq = gg::qpack(s.W.data(), GU, p.i, GU), rq = gg::qpack(s.R.data(), GU, p.u, GU);
            RnnPrepared prep;
            prep.w_q = wq.data();
            prep.r_q = rq.data();
            INFO("kind " << int(kind) << " n " << n);
            run_and_check(s, prep, yr, hr, cr, kTol8);
            prep.pool = &two;
            run_and_check(s, prep, yr, hr, cr, kTol8);
        }
}

}  // namespace graft_test_kernels_rnn_prepared
