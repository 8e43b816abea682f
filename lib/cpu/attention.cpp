#include "cpu/attention.hpp"

#include <algorithm>

#include "cpu/gemm/gemm.hpp"
#include "cpu/threadpool.hpp"
#include "cpu/vmath.hpp"

namespace graft::cpu {

namespace {

using i64 = std::int64_t;

constexpr i64 kQueryBlock = 256;  // query rows whose scores are held at once (scratch per task)

/// One (batch, head) pair: scores = q_h k_h^T through a transposed copy of k_h (the GEMM reads B
/// by rows), scaled and masked in place, softmax by rows, then y_h = weights v_h, written into
/// y's columns of head h; kQueryBlock query rows at a time.
void one_head(const float* q, const float* k, const float* v, const float* vmask, float* y,
              const graft_rt::AttentionParams& p, i64 b, i64 h, float* kt, float* s) {
    const i64 qs = p.heads * p.dk, vs = p.heads * p.dv;
    const float* kh = k + b * p.tv * qs + h * p.dk;
    for (i64 j = 0; j < p.tv; ++j)
        for (i64 d = 0; d < p.dk; ++d) kt[d * p.tv + j] = kh[j * qs + d];
    gemm::BMatrix bk;
    bk.data = kt;
    bk.ld = p.tv;
    gemm::BMatrix bv;
    bv.data = v + b * p.tv * vs + h * p.dv;
    bv.ld = vs;
    const float* mask = vmask ? vmask + b * p.tv : nullptr;
    for (i64 i0 = 0; i0 < p.tq; i0 += kQueryBlock) {
        const i64 rows = std::min(kQueryBlock, p.tq - i0);
        gemm::gemm(rows, p.tv, p.dk, q + (b * p.tq + i0) * qs + h * p.dk, qs, bk, s, p.tv, gemm::Epilogue{}, nullptr);
        for (i64 i = 0; i < rows; ++i) {
            float* row = s + i * p.tv;
            for (i64 j = 0; j < p.tv; ++j) {
                float sc = row[j] * p.scale;
                if ((p.causal && j > i0 + i) || (mask && mask[j] == 0.f)) sc -= 1e9f;
                row[j] = sc;
            }
        }
        if (p.tv > 0) vmath::softmax_rows(s, s, rows, p.tv);  // no keys: y_h = 0, as the GEMM over k = 0 leaves it
        gemm::gemm(rows, p.dv, p.tv, s, p.tv, bv, y + (b * p.tq + i0) * vs + h * p.dv, vs, gemm::Epilogue{}, nullptr);
    }
}

}  // namespace

i64 attention_dot_floats(const graft_rt::AttentionParams& p) {
    return p.dk * p.tv + std::min(p.tq, kQueryBlock) * p.tv;
}

void attention_dot(const float* q, const float* k, const float* v, const float* vmask, float* y,
                   const graft_rt::AttentionParams& p, float* work, int max_tasks, ThreadPool* pool) {
    const i64 pairs = p.b * p.heads, per_task = attention_dot_floats(p);
    if (pairs <= 0 || p.tq <= 0) return;
    const i64 tasks = std::min<i64>({static_cast<i64>(pool_size(pool)), static_cast<i64>(max_tasks), pairs});
    parallel_for(pool, tasks, [&](i64 t) {
        float* kt = work + t * per_task;
        float* s = kt + p.dk * p.tv;
        for (i64 pair = t * pairs / tasks, end = (t + 1) * pairs / tasks; pair < end; ++pair)
            one_head(q, k, v, vmask, y, p, pair / p.heads, pair % p.heads, kt, s);
    });
}

}  // namespace graft::cpu
