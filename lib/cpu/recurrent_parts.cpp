// LSTM at batch 1 with each step split by units over threads (RnnPrepared::parts).
//
// At batch 1 nothing else can be split: every step is one matrix-vector product h . R
// (R read whole from L2) and the cell. With W, R and b regrouped so that a slice of the units
// has its four gates side by side (rnn_lstm_part_order), slice t computes its own columns of
// the projection and of h . R, runs the cell on its own units and writes its own part of the
// next h, so one barrier per step is all the synchronization: h is double-buffered (every slice
// reads all of h_s while writing its units of h_s+1). Each thread runs an even share of the
// slices and streams only their part of R, from its own core's L2. Without a pool the slices run
// one after the other (a slice's cell then overlaps the next slice's blocks).
//
// Where gemv_block_tile runs (gemv_tile.hpp), a slice's input projection is not computed up front
// for all steps: only the first 8 steps', and each further group of 8 steps' tiles inside the
// column blocks of the 8 steps before it, in the multiply-add slots that the L2-bound h . R leaves
// idle. The last T % 8 steps are such a group too, their rows padded to 8 in a scratch tile.
//
// Without h0 the first step's h is zero, and with R finite (RnnPrepared::r_finite) so is its
// h . R: that step reads no R.
//
// With the projection interleaved, every other step walks its part of R backwards (its slices,
// blocks and the blocks' rows last to first), so that it starts with what the step before read
// last, still in L1 (a 256 KB R: 3% less time a step). The sums of those steps run in the other order, the same on any
// number of threads.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>

#include "cpu/gemm/gemm.hpp"
#include "cpu/gemm/gemv.hpp"
#include "cpu/gemm/gemv_tile.hpp"
#include "cpu/gemm/ukernel.hpp"
#include "cpu/recurrent_parts.hpp"
#include "cpu/vmath.hpp"
#include "cpu/threadpool.hpp"

namespace graft::cpu {

namespace {

using i64 = std::int64_t;

constexpr i64 kParallelMin = 1 << 17;  // multiply-adds of the layer below which one thread runs it
constexpr i64 kGroup = 8;               // steps whose projection runs in the steps before them

using graft_rt::bytes;

/// Threads of one parallel_for meet here once per step. Spins (the wait is a step, about a
/// microsecond), yielding now and then in case the machine has more threads than cores.
class SpinBarrier {
public:
    explicit SpinBarrier(int n) : n_(n) {}
    void wait() {
        const int gen = gen_.load(std::memory_order_acquire);
        if (count_.fetch_add(1, std::memory_order_acq_rel) == n_ - 1) {
            count_.store(0, std::memory_order_relaxed);
            gen_.fetch_add(1, std::memory_order_release);
            return;
        }
        for (int spins = 1; gen_.load(std::memory_order_acquire) == gen; ++spins) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
            if (spins % 4096 == 0) std::this_thread::yield();
        }
    }

private:
    const int n_;
    std::atomic<int> count_{0};
    std::atomic<int> gen_{0};
};

}  // namespace

void rnn_lstm_part_order(const float* src, std::int64_t rows, std::int64_t u, int parts, float* dst) {
    const i64 uh = u / parts, g4 = 4 * u;
    for (i64 r = 0; r < rows; ++r)
        for (i64 t = 0; t < parts; ++t)
            for (i64 g = 0; g < 4; ++g)
                std::memcpy(dst + r * g4 + (t * 4 + g) * uh, src + r * g4 + g * u + t * uh, bytes(uh));
}

namespace detail {

std::int64_t lstm_parts_scratch(const RnnParams& p) { return kGroup * (p.i + 4 * p.u); }

void lstm_parts(const float* x, float* y, float* h_last, float* c_last, const RnnParams& p, float* work,
                const float* h0, const float* c0, const float* mask, const RnnPrepared& pr) {
    const i64 U = p.u, G = 4 * U, P = pr.parts, uh = U / P, cols = 4 * uh;
    // Workspace (rnn_workspace(p, 4) at n = 1): xp [T, 4U] | h1 [4U] (second h buffer) | h0 [U]
    // | c [U] | cs [U] (c before a masked step) | - | - | o [U] (masked output).
    float* xp = work;
    float* hb[2] = {xp + p.t * G + G, xp + p.t * G};
    float* c = hb[0] + U;
    float* cs = c + U;
    float* o = cs + 3 * U;
    if (mask) std::memset(o, 0, bytes(U));
    const bool zero_start = !h0 && pr.r_finite;

    // The projection's rows (timesteps tt) of steps [s0, s1): a range either way.
    const auto first_row = [&](i64 s0, i64 s1) { return p.go_backwards ? p.t - s1 : s0; };
    // Groups of S steps whose projection runs in the steps of the group before (see above):
    // slices of whole column blocks, tiles of 8 rows and 32 columns.
    constexpr i64 S = kGroup;
    static_assert(S == gemm::kTileRows, "a group's rows: one tile");
    const bool interleave = gemm::gemv_block_tile_available() && cols % gemm::kGemvBlock == 0 && p.t >= 2 * S;
    const i64 groups = interleave ? p.t / S : 1;  // groups 1 .. groups - 1 are projected in the steps
    // The last p.t % S steps (interleaved: group `groups`, in the steps of the group before it):
    // their projection rows from tail_row on, as the first rows of an S-row tile whose input xt
    // [S, I] and output zt [S, 4U] follow the workspace (lstm_parts_scratch).
    const i64 tail = interleave ? p.t - groups * S : 0, tail_row = first_row(groups * S, p.t);
    float* xt = work + graft_rt::rnn_workspace(p, 4);
    float* zt = xt + S * p.i;
    // A group's S steps have S * cols / 128 blocks for the next group's cols / 32 tiles: a tile in
    // every other block. (Measured: tiles of 4 rows in every block, 4% slower.)
    const i64 blocks = cols / gemm::kGemvBlock;
    static_assert(S * gemm::kTileCols == 2 * gemm::kGemvBlock, "a tile in every other block");

    // Slice t's columns of the projection of steps [s0, s1).
    auto project = [&](i64 t, i64 s0, i64 s1) {
        if (s1 <= s0) return;
        const i64 r0 = first_row(s0, s1);
        gemm::Epilogue pe;
        pe.bias = pr.b_parts ? pr.b_parts + t * cols : nullptr;
        gemm::BMatrix wb;
        wb.data = pr.w_packed + (t * cols / gemm::kPanel) * p.i * gemm::kPanel;
        wb.packed = true;
        gemm::gemm(s1 - s0, cols, p.i, x + r0 * p.i, p.i, wb, xp + r0 * G + t * cols, G, pe, nullptr);
    };
    auto slice = [&](i64 t) {
        const i64 u0 = t * uh;
        if (interleave) {
            project(t, 0, S);
            if (t == 0 && tail > 0) {  // (before the first step's barrier: every slice reads it)
                std::memcpy(xt, x + tail_row * p.i, bytes(tail * p.i));
                std::memset(xt + tail * p.i, 0, bytes((S - tail) * p.i));
            }
        } else {
            project(t, 0, p.t);
        }
        if (h0)
            std::memcpy(hb[0] + u0, h0 + u0, bytes(uh));
        else
            std::memset(hb[0] + u0, 0, bytes(uh));
        if (c0)
            std::memcpy(c + u0, c0 + u0, bytes(uh));
        else
            std::memset(c + u0, 0, bytes(uh));
    };
    gemm::Epilogue acc;
    acc.accumulate = true;
    auto step = [&](i64 t, i64 s) {
        const i64 u0 = t * uh, tt = p.go_backwards ? p.t - 1 - s : s;
        const float* hc = hb[s & 1];
        float* hn = hb[(s + 1) & 1];
        float* z = s >= groups * S && tail > 0 ? zt + (tt - tail_row) * G : xp + tt * G;
        const i64 next = s / S + 1;  // the group whose tiles this step's blocks carry
        const bool carries = next < groups || (next == groups && tail > 0);
        const i64 K = s == 0 && zero_start ? 0 : U;  // h . R's depth (0: h is zero)
        if (!interleave) {
            if (K > 0) gemm::gemv_columns(G, U, hc, pr.r_gemv, z, acc, t * cols, (t + 1) * cols);
        } else {
            const bool back = (s & 1) != 0;  // R backwards (see above)
            for (i64 j = 0; j < blocks; ++j) {
                const i64 blk = back ? blocks - 1 - j : j;
                const i64 n0 = t * cols + blk * gemm::kGemvBlock, slot = (s % S) * blocks + blk;
                if (!carries || slot % 2 != 0) {  // no tile: the block kernel without gemv_columns around it
                    if (K > 0) gemm::gemv_block(hc, pr.r_gemv + n0 * U, U, z + n0, back);
                    continue;
                }
                const i64 col = t * cols + slot / 2 * gemm::kTileCols;  // the tile's first column and row
                const i64 r0 = first_row(next * S, next * S + S);
                const bool in_tail = next == groups;
                gemm::GemvTileArgs a;
                a.a = hc;
                a.b = pr.r_gemv + n0 * U;
                a.K = K;
                a.c = z + n0;
                a.a2 = in_tail ? xt : x + r0 * p.i;
                a.lda2 = p.i;
                a.b2 = pr.w_packed + (col / gemm::kPanel) * p.i * gemm::kPanel;
                a.bps2 = p.i * gemm::kPanel;
                a.K2 = p.i;
                a.c2 = in_tail ? zt + col : xp + r0 * G + col;
                a.ldc2 = G;
                a.bias2 = pr.b_parts ? pr.b_parts + col : nullptr;
                a.reverse = back;
                gemm::gemv_block_tile(a);
            }
        }
        const bool masked = mask && mask[tt] == 0.f;
        if (masked) std::memcpy(cs + u0, c + u0, bytes(uh));
        vmath::lstm_cell(z + t * cols, c + u0, hn + u0, uh);
        if (masked) {  // the step is skipped: states back, output held (or zeroed)
            std::memcpy(hn + u0, hc + u0, bytes(uh));
            std::memcpy(c + u0, cs + u0, bytes(uh));
            if (p.zero_output_for_mask) std::memset(o + u0, 0, bytes(uh));
        } else if (mask) {
            std::memcpy(o + u0, hn + u0, bytes(uh));
        }
        if (p.return_sequences) std::memcpy(y + s * U + u0, (mask ? o : hn) + u0, bytes(uh));
    };
    auto finish = [&](i64 t) {
        const i64 u0 = t * uh;
        const float* h = hb[p.t & 1];
        if (!p.return_sequences) std::memcpy(y + u0, (mask ? o : h) + u0, bytes(uh));
        if (h_last) std::memcpy(h_last + u0, h + u0, bytes(uh));
        if (c_last) std::memcpy(c_last + u0, c + u0, bytes(uh));
    };

    const i64 macs = p.t * G * (p.i + U);
    // Tasks of P / tasks slices each: as many as the pool has threads, a divisor of P.
    i64 tasks = macs < kParallelMin ? 1 : std::min<i64>(P, pool_size(pr.pool));
    while (P % tasks != 0) --tasks;
    const i64 per = P / tasks;
    // Slices [t0, t1) at step s, last to first at odd steps where R runs backwards.
    auto steps = [&](i64 t0, i64 t1, i64 s) {
        const bool back = interleave && (s & 1) != 0;
        for (i64 j = 0; j < t1 - t0; ++j) step(back ? t1 - 1 - j : t0 + j, s);
    };
    if (tasks <= 1) {
        for (i64 t = 0; t < P; ++t) slice(t);
        for (i64 s = 0; s < p.t; ++s) steps(0, P, s);
        for (i64 t = 0; t < P; ++t) finish(t);
        return;
    }
    // Every task waits for all at each step, so they must run at once: the pool has at least
    // `tasks` threads and runs nothing else meanwhile.
    SpinBarrier barrier(static_cast<int>(tasks));
    parallel_for(pr.pool, tasks, [&](i64 k) {
        for (i64 t = k * per; t < (k + 1) * per; ++t) slice(t);
        barrier.wait();  // h0 complete
        for (i64 s = 0; s < p.t; ++s) {
            steps(k * per, (k + 1) * per, s);
            barrier.wait();  // h_s+1 complete before anyone reads it
        }
        for (i64 t = k * per; t < (k + 1) * per; ++t) finish(t);
    });
}

}  // namespace detail
}  // namespace graft::cpu
