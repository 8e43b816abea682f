// Recurrent layers (SimpleRNN, LSTM, GRU) with Keras semantics, batch-major x [N,T,I].
//
// The input projection x W (+ input bias) of all timesteps is one GEMM into the workspace;
// each step then accumulates h R straight into that step's rows of the projection (so the
// gates' pre-activations need no separate add) and runs the cell on them. SimpleRNN and LSTM
// of several rows with [W; R] stacked (RnnPrepared::wr_packed) instead run one product per
// step, [x_t | h] [W; R]: one longer product in place of two, and the pre-activations of all
// steps (T times a step's, beyond the L2 at batch 32) are never written out. With R prepacked
// (RnnPrepared) a batch-1 step is the GEMM's matrix-vector kernel. Batch rows are independent,
// so with a thread pool each thread runs the whole sequence for its own rows (no per-step
// synchronization). The workspace, the masks and the outputs are handled as by the reference
// kernels (graft_rt/recurrent.hpp), on each thread's rows.
#include <algorithm>
#include <cstring>

#include "cpu/gemm/gemm.hpp"
#include "cpu/gemm/gemv.hpp"
#include "cpu/gemm/qgemm.hpp"
#include "cpu/recurrent_parts.hpp"
#include "cpu/vmath.hpp"
#include "cpu/threadpool.hpp"
#include "cpu/internal.hpp"

namespace graft::cpu {
namespace {

using i64 = std::int64_t;

constexpr i64 kParallelMin = 1 << 17;  // multiply-adds of the whole layer below which it runs on one thread

using graft_rt::bytes;
using graft_rt::RnnWork;

/// The batch rows [n0, n1) one thread processes.
struct Rows {
    i64 n0, n1;
    i64 count() const { return n1 - n0; }
};

/// B of a product: plain (row stride ld), packed in panels, and/or in the matrix-vector layout;
/// or quantised to int8 (q, with scratch qwork).
struct Mat {
    const float* plain;
    std::int64_t ld;
    const float* packed;
    const float* gemv;
    const float* q = nullptr;
    float* qwork = nullptr;
};

/// Floats of int8 scratch per batch row: all its timesteps' rows of the wider of I and U.
i64 qwork_per_row(const RnnParams& p) { return static_cast<i64>(gemm::qgemm_work_floats(p.t, std::max(p.i, p.u))); }

/// C[M, N] (= or +=) A[M, K] . B.
void matmul(i64 M, i64 N, i64 K, const float* A, i64 lda, const Mat& B, float* C, i64 ldc, const float* bias,
            bool accumulate) {
    gemm::Epilogue e;
    e.bias = accumulate ? nullptr : bias;
    e.accumulate = accumulate;
    if (B.q) {
        gemm::qgemm(M, N, K, A, lda, gemm::qview(B.q, K, N), C, ldc, e, B.qwork, nullptr);
        return;
    }
    if (M == 1 && B.gemv) {
        gemm::gemv(N, K, A, B.gemv, C, e, nullptr);
        return;
    }
    gemm::BMatrix b;
    if (B.packed) {
        b.data = B.packed;
        b.packed = true;
    } else {
        b.data = B.plain;
        b.ld = B.ld;
    }
    gemm::gemm(M, N, K, A, lda, b, C, ldc, e, nullptr);
}

/// The int8 scratch of the rows r (null without int8 weights).
float* qwork(const RnnPrepared& pr, const RnnParams& p, const Rows& r) {
    return pr.qwork ? pr.qwork + r.n0 * qwork_per_row(p) : nullptr;
}

/// Input projection of rows r for all timesteps: xp[n*T + t, G*U] = x[n*T + t, I] . W + bias.
void project_inputs(const float* x, const float* W, const float* bias, const RnnParams& p, const RnnPrepared& pr,
                    int gates, const Rows& r, float* xp) {
    const i64 gu = gates * p.u;
    const Mat wm{W, gu, pr.w_packed, nullptr, pr.w_q, qwork(pr, p, r)};
    matmul(r.count() * p.t, gu, p.i, x + r.n0 * p.t * p.i, p.i, wm, xp + r.n0 * p.t * gu, gu, bias, false);
}

/// The step's rows of the projection: row n at z(n) = xp + (n*T + tt) * G*U.
inline float* zrow(const RnnWork& w, const RnnParams& p, i64 gu, i64 n, i64 tt) { return w.xp + (n * p.t + tt) * gu; }

/// The one-step layer whose workspace (rnn_carve) the stacked steps use after the block of
/// [x_t | h] rows: its xp [N, G*U] holds a step's pre-activations.
RnnParams one_step(const RnnParams& p) {
    RnnParams q = p;
    q.t = 1;
    return q;
}

/// The time loop of rows r with [W; R] stacked (RnnPrepared::wr_packed): each step's product
/// reads the rows' [x_t | h] in place (gemm::SplitA; a single row is gathered into a, I + U
/// floats, for the matrix-vector kernel) and gives their pre-activations
/// z = [x_t | h] [W; R] + b into w.xp ([N, G*U], compact), and cell(z of row n, n) updates the
/// state of row n. Masks and outputs as rnn_steps. With `zero_start` (no h0, R finite) the first
/// step's h is zero and its product runs over [W] alone: z = x_t W + b.
template <class Cell>
void stacked_steps(const float* x, const float* b, const RnnParams& p, const RnnPrepared& pr, bool zero_start, i64 gu,
                   float* a, RnnWork& w, const float* mask, float* y, float* h_last, const Rows& r, Cell&& cell) {
    const i64 K = p.i + p.u;
    gemm::BMatrix wr;
    wr.data = pr.wr_packed;
    wr.packed = true;
    gemm::BMatrix w_only = wr;  // the first p.i rows of every panel
    w_only.panel_k = K;
    gemm::Epilogue e;
    e.bias = b;
    bool first = zero_start;
    graft_rt::rnn_steps(p, mask, w, y, h_last, r.n0, r.n1, [&](i64 tt) {
        if (first) {
            gemm::gemm(r.count(), gu, p.i, x + (r.n0 * p.t + tt) * p.i, p.t * p.i, w_only, w.xp + r.n0 * gu, gu, e,
                       nullptr);
            first = false;
        } else if (r.count() >= 2) {  // the rows' x_t and h read in place (a single row: the matrix-vector kernel)
            gemm::SplitA xh;
            xh.a1 = x + (r.n0 * p.t + tt) * p.i, xh.lda1 = p.t * p.i, xh.k1 = p.i;
            xh.a2 = w.h + r.n0 * p.u, xh.lda2 = p.u;
            gemm::gemm(r.count(), gu, K, xh, wr, w.xp + r.n0 * gu, gu, e, nullptr);
        } else {
            for (i64 n = r.n0; n < r.n1; ++n) {
                std::memcpy(a + n * K, x + (n * p.t + tt) * p.i, bytes(p.i));
                std::memcpy(a + n * K + p.i, w.h + n * p.u, bytes(p.u));
            }
            gemm::gemm(r.count(), gu, K, a + r.n0 * K, K, wr, w.xp + r.n0 * gu, gu, e, nullptr);
        }
        for (i64 n = r.n0; n < r.n1; ++n) cell(w.xp + n * gu, n);
    });
}

/// Runs body(rows) over the batch: on the calling thread, or split over the pool's threads.
template <class F>
void over_rows(const RnnParams& p, int gates, ThreadPool* pool, F&& body) {
    const int T = pool_size(pool);
    const i64 macs = p.n * p.t * gates * p.u * (p.i + p.u);
    if (T <= 1 || p.n < 2 || macs < kParallelMin) {
        body(Rows{0, p.n});
        return;
    }
    const i64 tasks = std::min<i64>(T, p.n);
    parallel_for(pool, tasks, [&](i64 t) { body(Rows{t * p.n / tasks, (t + 1) * p.n / tasks}); });
}

}  // namespace

std::int64_t rnn_qwork(const RnnParams& p) { return p.n * qwork_per_row(p); }

std::int64_t rnn_work_floats(const RnnParams& p, int gates, const RnnPrepared& pr) {
    if (pr.parts > 0) return graft_rt::rnn_workspace(p, gates) + detail::lstm_parts_scratch(p);
    if (!pr.wr_packed) return graft_rt::rnn_workspace(p, gates);
    return p.n * (p.i + p.u) + graft_rt::rnn_workspace(one_step(p), gates);
}

std::vector<float> rnn_pack_recurrent(const float* R, std::int64_t u, int gates, bool split_last, bool gemv) {
    const i64 gu = gates * u, first = split_last ? (gates - 1) * u : gu;
    const auto size = [&](i64 n) { return gemv ? gemm::gemv_packed_size(u, n) : gemm::packed_size(u, n); };
    const auto pack = [&](const float* src, i64 n, float* dst) {
        if (gemv)
            gemm::gemv_pack(src, gu, u, n, dst);
        else
            gemm::pack_b(src, gu, u, n, dst);
    };
    std::vector<float> out(size(first) + (split_last ? size(u) : 0));
    pack(R, first, out.data());
    if (split_last) pack(R + first, u, out.data() + size(first));
    return out;
}

std::vector<float> rnn_pack_stacked(const float* W, const float* R, std::int64_t i, std::int64_t u, int gates) {
    const i64 gu = gates * u;
    std::vector<float> wr(static_cast<std::size_t>((i + u) * gu));
    std::copy(W, W + i * gu, wr.begin());
    std::copy(R, R + u * gu, wr.begin() + i * gu);
    return gemm::pack_b(wr.data(), gu, i + u, gu);
}

void simple_rnn(const float* x, const float* W, const float* R, const float* b, float* y, float* h_last,
                const RnnParams& p, float* work, const float* h0, const float* mask, const RnnPrepared& pr) {
    const i64 U = p.u;
    const auto cell = [&](float* z, RnnWork& w, i64 n) {
        graft_rt::rnn_clip(z, U, p);
        activate(z, w.h + n * U, U, p.act);
    };
    if (pr.wr_packed) {
        RnnWork w = graft_rt::rnn_carve(one_step(p), 1, work + p.n * (p.i + U));
        over_rows(p, 1, pr.pool, [&](const Rows& r) {
            graft_rt::rnn_init_state(w.h, h0, p, r.n0, r.n1);
            stacked_steps(x, b, p, pr, !h0 && pr.r_finite, U, work, w, mask, y, h_last, r,
                          [&](float* z, i64 n) { cell(z, w, n); });
        });
        return;
    }
    RnnWork w = graft_rt::rnn_carve(p, 1, work);
    over_rows(p, 1, pr.pool, [&](const Rows& r) {
        project_inputs(x, W, b, p, pr, 1, r, w.xp);
        graft_rt::rnn_init_state(w.h, h0, p, r.n0, r.n1);
        graft_rt::rnn_steps(p, mask, w, y, h_last, r.n0, r.n1, [&](i64 tt) {
            const Mat rm{R, U, pr.r_packed, pr.r_gemv, pr.r_q, qwork(pr, p, r)};
            matmul(r.count(), U, U, w.h + r.n0 * U, U, rm, zrow(w, p, U, r.n0, tt), p.t * U, nullptr, true);
            for (i64 n = r.n0; n < r.n1; ++n) cell(zrow(w, p, U, n, tt), w, n);
        });
    });
}

void lstm(const float* x, const float* W, const float* R, const float* b, const float* pp, float* y, float* h_last,
          float* c_last, const RnnParams& p, float* work, const float* h0, const float* c0, const float* mask,
          const RnnPrepared& pr) {
    const i64 U = p.u, G = 4 * p.u;
    const bool fused = p.act.kind == Act::tanh && p.rec_act.kind == Act::sigmoid && !pp && p.clip <= 0.f &&
                       !p.input_forget;
    if (pr.parts > 0) {  // batch 1, steps split by units (recurrent_parts.cpp); weights in part order
        if (p.n == 1 && fused && pr.w_packed && pr.r_gemv && p.u % (4 * pr.parts) == 0) {
            detail::lstm_parts(x, y, h_last, c_last, p, work, h0, c0, mask, pr);
            return;
        }
        RnnPrepared plain;  // not applicable: the prepared weights are in the wrong order for the rest
        plain.pool = pr.pool;
        lstm(x, W, R, b, pp, y, h_last, c_last, p, work, h0, c0, mask, plain);
        return;
    }
    const auto cell = [&](float* z, RnnWork& w, i64 n) {
        if (fused)
            vmath::lstm_cell(z, w.c + n * U, w.h + n * U, U);
        else
            graft_rt::rnn_lstm_cell(z, w.c + n * U, w.h + n * U, pp, U, p, activate);
    };
    if (pr.wr_packed) {
        RnnWork w = graft_rt::rnn_carve(one_step(p), 4, work + p.n * (p.i + U));
        over_rows(p, 4, pr.pool, [&](const Rows& r) {
            graft_rt::rnn_init_state(w.h, h0, p, r.n0, r.n1);
            graft_rt::rnn_init_state(w.c, c0, p, r.n0, r.n1);
            stacked_steps(x, b, p, pr, !h0 && pr.r_finite, G, work, w, mask, y, h_last, r,
                          [&](float* z, i64 n) { cell(z, w, n); });
            if (c_last) std::memcpy(c_last + r.n0 * U, w.c + r.n0 * U, bytes(r.count() * U));
        });
        return;
    }
    RnnWork w = graft_rt::rnn_carve(p, 4, work);
    over_rows(p, 4, pr.pool, [&](const Rows& r) {
        project_inputs(x, W, b, p, pr, 4, r, w.xp);
        graft_rt::rnn_init_state(w.h, h0, p, r.n0, r.n1);
        graft_rt::rnn_init_state(w.c, c0, p, r.n0, r.n1);
        graft_rt::rnn_steps(p, mask, w, y, h_last, r.n0, r.n1, [&](i64 tt) {
            const Mat rm{R, G, pr.r_packed, pr.r_gemv, pr.r_q, qwork(pr, p, r)};
            matmul(r.count(), G, U, w.h + r.n0 * U, U, rm, zrow(w, p, G, r.n0, tt), p.t * G, nullptr, true);
            for (i64 n = r.n0; n < r.n1; ++n) cell(zrow(w, p, G, n, tt), w, n);
        });
        if (c_last) std::memcpy(c_last + r.n0 * U, w.c + r.n0 * U, bytes(r.count() * U));
    });
}

void gru(const float* x, const float* W, const float* R, const float* b, bool reset_after, float* y, float* h_last,
         const RnnParams& p, float* work, const float* h0, const float* mask, const RnnPrepared& pr) {
    const i64 U = p.u, G = 3 * p.u;
    RnnWork w = graft_rt::rnn_carve(p, 3, work);
    const float* b_rec = (reset_after && b) ? b + G : nullptr;
    // Packed R: the whole matrix (reset_after), or R[:, z|r] then R[:, h] (rnn_pack_recurrent).
    const Mat r_all{R, G, pr.r_packed, pr.r_gemv};
    Mat r_h{R + 2 * U, G, nullptr, nullptr};
    if (!reset_after) {
        if (pr.r_packed) r_h.packed = pr.r_packed + gemm::packed_size(U, 2 * U);
        if (pr.r_gemv) r_h.gemv = pr.r_gemv + gemm::gemv_packed_size(U, 2 * U);
    }
    over_rows(p, 3, pr.pool, [&](const Rows& r) {
        project_inputs(x, W, b, p, pr, 3, r, w.xp);  // b row 0 (or the only row) is the input bias
        Mat ra = r_all;  // int8 R: the whole matrix (reset_after only, see RnnPrepared)
        ra.q = pr.r_q;
        ra.qwork = qwork(pr, p, r);
        graft_rt::rnn_init_state(w.h, h0, p, r.n0, r.n1);
        graft_rt::rnn_steps(p, mask, w, y, h_last, r.n0, r.n1, [&](i64 tt) {
            float* z0 = zrow(w, p, G, r.n0, tt);
            if (reset_after) {
                // hr = h R + b_rec for all three gates.
                matmul(r.count(), G, U, w.h + r.n0 * U, U, ra, w.hr + r.n0 * G, G, b_rec, false);
            } else {
                // z|r pre-activations += h R[:, z|r]; the candidate's recurrent part needs r first.
                matmul(r.count(), 2 * U, U, w.h + r.n0 * U, U, ra, z0, p.t * G, nullptr, true);
            }
            for (i64 n = r.n0; n < r.n1; ++n) {
                float* z = zrow(w, p, G, n, tt);
                float* hh = z + 2 * U;
                const float* rg = z + U;
                if (reset_after) {
                    const float* hr = w.hr + n * G;
                    for (i64 j = 0; j < 2 * U; ++j) z[j] += hr[j];
                    graft_rt::rnn_clip(z, 2 * U, p);
                    activate(z, z, 2 * U, p.rec_act);  // z and r
                    for (i64 j = 0; j < U; ++j) hh[j] += rg[j] * hr[2 * U + j];
                } else {
                    graft_rt::rnn_clip(z, 2 * U, p);
                    activate(z, z, 2 * U, p.rec_act);
                    const float* h = w.h + n * U;
                    float* rh = w.tmp + n * U;
                    for (i64 j = 0; j < U; ++j) rh[j] = rg[j] * h[j];
                }
            }
            if (!reset_after)  // candidate pre-activation += (r*h) Rh
                matmul(r.count(), U, U, w.tmp + r.n0 * U, U, r_h, z0 + 2 * U, p.t * G, nullptr, true);
            for (i64 n = r.n0; n < r.n1; ++n) {
                const float* zg = zrow(w, p, G, n, tt);
                float* hh = zrow(w, p, G, n, tt) + 2 * U;
                float* h = w.h + n * U;
                if (p.act.kind == Act::tanh && p.clip <= 0.f)
                    vmath::gru_blend(zg, hh, h, U);
                else
                    graft_rt::rnn_gru_blend(zg, hh, h, U, p, activate);
            }
        });
    });
}

}  // namespace graft::cpu
