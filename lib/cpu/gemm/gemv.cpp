// The single-row matrix products (see gemv.hpp): one kernel template
// (gemv_impl.inc) compiled for AVX-512, AVX2+FMA and portable GCC vectors, chosen by active_isa().
#include "cpu/gemm/gemv.hpp"

#include <algorithm>

#include "cpu/gemm/ukernel.hpp"
#include "cpu/simd.hpp"
#include "cpu/threadpool.hpp"

namespace graft::cpu::gemm {
namespace {

struct GvArgs {
    const float* a;  // [K]
    std::int64_t K;
    const float* b;    // the first 16 columns at k = 0
    std::int64_t bps;  // floats between groups of 16 columns
    std::int64_t ldb;  // floats between k rows
    float* c;
    int cols;           // valid columns (<= 16 * P)
    const float* init;  // start values (the old c, or the bias), or null: zero
    const float* res;   // residual, or null
    bool relu;
};
using Gv = void (*)(const GvArgs&);
struct GvTable {
    Gv panels[4];     // 1, 2, 4, 8 groups of 16 columns, panel layout
    Gv blocks[4];     // 1, 2, 4, 8 groups, column-block layout (8 groups = a whole block)
    int maxp_panels;  // widest group for the panel layout (more panel streams thrash L1)
    int maxp_blocks;  // widest group for the column-block layout (registers permitting)
};

namespace gv_generic {
using V = simd::Vec4;
#include "cpu/gemm/gemv_impl.inc"
const GvTable table = make_table<2, 2>();
}  // namespace gv_generic

#ifdef GRAFT_SIMD_X86
GRAFT_SIMD_AVX2_BEGIN
namespace gv_avx2 {
using V = simd::Avx2;
#include "cpu/gemm/gemv_impl.inc"
const GvTable table = make_table<4, 8>();
}  // namespace gv_avx2
GRAFT_SIMD_AVX2_END

GRAFT_SIMD_AVX512_BEGIN
namespace gv_avx512 {
using V = simd::Avx512;
#include "cpu/gemm/gemv_impl.inc"
const GvTable table = make_table<8, 8>();
}  // namespace gv_avx512
GRAFT_SIMD_AVX512_END
#endif

using i64 = std::int64_t;

constexpr i64 kBlock = 128;              // columns per block of the gemv_pack layout (gemv.hpp)
constexpr i64 kParallelMin = 1 << 15;    // N*K below this runs on one thread
constexpr i64 kSplitKMaxN = 1024;        // k split over threads: partial sums on the stack
constexpr int kSplitKMaxThreads = 8;

inline i64 round16(i64 n) { return (n + kPanel - 1) / kPanel * kPanel; }

const GvTable& table() { return GRAFT_SIMD_SELECT(active_isa(), gv_generic::table, gv_avx2::table, gv_avx512::table); }

struct Problem {
    const GvTable* t;
    i64 N, K;
    i64 k0, k1;  // the k range this call sums (all of [0, K) unless K is split over threads)
    const float* a;
    const float* b;
    bool blocks;  // gemv_pack layout, else panels
    float* c;
    const Epilogue* e;
    bool relu, other_act;
};

/// Columns [n0, n1) (multiples of 16, n1 may be N) on the calling thread.
void run_cols(const Problem& q, i64 n0, i64 n1) {
    const GvTable& t = *q.t;
    const int maxp = q.blocks ? t.maxp_blocks : t.maxp_panels;
    for (i64 n = n0; n < n1;) {
        // The group may not cross a block boundary (a block's rows are contiguous).
        const i64 block_end = q.blocks ? std::min(n1, (n / kBlock + 1) * kBlock) : n1;
        int P = maxp;
        while (P > 1 && n + P * kPanel > round16(block_end)) P /= 2;
        GvArgs g;
        g.a = q.a + q.k0;
        g.K = q.k1 - q.k0;
        if (q.blocks) {
            const i64 blk = n / kBlock, width = std::min(kBlock, round16(q.N - blk * kBlock));
            g.b = q.b + blk * kBlock * q.K + q.k0 * width + (n - blk * kBlock);
            g.bps = kPanel;
            g.ldb = width;
        } else {
            g.b = q.b + (n / kPanel) * q.K * kPanel + q.k0 * kPanel;
            g.bps = q.K * kPanel;
            g.ldb = kPanel;
        }
        g.c = q.c + n;
        g.cols = static_cast<int>(std::min<i64>(P * kPanel, q.N - n));
        g.init = q.e->accumulate ? q.c + n : q.e->bias ? q.e->bias + n : nullptr;
        g.res = q.e->residual ? q.e->residual + n : nullptr;
        g.relu = q.relu;
        const int pi = P == 1 ? 0 : P == 2 ? 1 : P == 4 ? 2 : 3;
        (q.blocks ? t.blocks[pi] : t.panels[pi])(g);
        if (q.other_act) activate(g.c, g.c, g.cols, *q.e->act);
        n += P * kPanel;
    }
}

/// Fewer column blocks than threads: each thread sums its own range of k over all columns
/// (one contiguous stream per block, where splitting the columns would interleave the threads
/// within every row), then the partial sums are added up with the epilogue.
void run_split_k(const Problem& q, ThreadPool* pool, int T) {
    alignas(64) float part[kSplitKMaxThreads][kSplitKMaxN];
    const Epilogue none{};
    parallel_for(pool, T, [&](i64 t) {
        Problem s = q;
        s.k0 = t * q.K / T, s.k1 = (t + 1) * q.K / T;
        s.c = part[t];
        s.e = &none;
        s.relu = s.other_act = false;
        run_cols(s, 0, q.N);
    });
    const Epilogue& e = *q.e;
    for (i64 n = 0; n < q.N; ++n) {
        float v = e.accumulate ? q.c[n] : e.bias ? e.bias[n] : 0.f;
        for (int t = 0; t < T; ++t) v += part[t][n];
        if (e.residual) v += e.residual[n];
        if (q.relu) v = v > 0.f ? v : 0.f;
        q.c[n] = v;
    }
    if (q.other_act) activate(q.c, q.c, q.N, *e.act);
}

void run(const Problem& q, ThreadPool* pool) {
    const i64 groups = (q.N + kPanel - 1) / kPanel, nblocks = (q.N + kBlock - 1) / kBlock;
    const int T = pool_size(pool);
    if (T <= 1 || q.N * q.K < kParallelMin) {
        run_cols(q, 0, q.N);
        return;
    }
    if (q.blocks && nblocks < T && q.N <= kSplitKMaxN && T <= kSplitKMaxThreads && q.K >= 16 * T) {
        run_split_k(q, pool, T);
        return;
    }
    if (groups < 2) {
        run_cols(q, 0, q.N);
        return;
    }
    // Columns: whole blocks per thread when there are enough, else groups of 16.
    const i64 unit = q.blocks && nblocks >= T ? kBlock : kPanel, units = (q.N + unit - 1) / unit;
    const i64 chunk = (units + T - 1) / T * unit;
    const i64 tasks = (q.N + chunk - 1) / chunk;
    parallel_for(pool, tasks, [&](i64 i) { run_cols(q, i * chunk, std::min(q.N, (i + 1) * chunk)); });
}

Problem problem(i64 N, i64 K, const float* a, const float* b, bool blocks, float* c, const Epilogue& e) {
    Problem q;
    q.t = &table();
    q.N = N, q.K = K;
    q.k0 = 0, q.k1 = K;
    q.a = a, q.b = b, q.blocks = blocks, q.c = c, q.e = &e;
    q.relu = e.act && e.act->kind == Act::relu;
    q.other_act = e.act && e.act->kind != Act::relu && e.act->kind != Act::linear;
    return q;
}

}  // namespace

std::size_t gemv_packed_size(i64 K, i64 N) {
    return static_cast<std::size_t>(std::max<i64>(K, 0) * round16(std::max<i64>(N, 0)));
}

void gemv_pack(const float* w, i64 ldw, i64 K, i64 N, float* out) { pack_column_groups(w, ldw, K, N, kBlock, out); }

std::vector<float> gemv_pack(const float* w, i64 ldw, i64 K, i64 N) {
    std::vector<float> out(gemv_packed_size(K, N));
    gemv_pack(w, ldw, K, N, out.data());
    return out;
}

void gemv(i64 N, i64 K, const float* a, const float* b_gemv, float* c, const Epilogue& e, ThreadPool* pool) {
    if (N <= 0) return;
    if (K <= 0) {  // no product: the epilogue alone
        epilogue_only(1, 0, N, c, N, e);
        return;
    }
    run(problem(N, K, a, b_gemv, true, c, e), pool);
}

void gemv_columns(i64 N, i64 K, const float* a, const float* b_gemv, float* c, const Epilogue& e, i64 n0, i64 n1) {
    n1 = std::min(n1, N);
    if (n1 <= n0) return;
    if (K <= 0) {  // no product: the epilogue alone
        epilogue_only(1, n0, n1, c, N, e);
        return;
    }
    run_cols(problem(N, K, a, b_gemv, true, c, e), n0, n1);
}

void gemv_packed(i64 N, i64 K, const float* a, const float* b_packed, float* c, const Epilogue& e, ThreadPool* pool) {
    if (N <= 0) return;
    if (K <= 0) {
        gemv(N, K, a, b_packed, c, e, pool);
        return;
    }
    run(problem(N, K, a, b_packed, false, c, e), pool);
}

}  // namespace graft::cpu::gemm
