#include "cpu/attention.hpp"

#include <algorithm>

#include "cpu/gemm/gemm.hpp"
#include "cpu/simd.hpp"
#include "cpu/threadpool.hpp"
#include "cpu/vmath.hpp"

namespace graft::cpu {

namespace {

using i64 = std::int64_t;

constexpr i64 kQueryBlock = 256;  // query rows whose scores are held at once (scratch per task)

/// Floats of K_h^T [dk, tv] packed in the GEMM's panels.
i64 packed_k_floats(const graft_rt::AttentionParams& p) { return static_cast<i64>(gemm::packed_size(p.dk, p.tv)); }

/// K_h^T packed: panel j0 / 16 is [dk][16] of keys j0 .. j0 + 15 (zeros past tv); K_h's rows
/// (dk floats each) are qs apart.
void pack_kt_scalar(const float* kh, i64 qs, i64 tv, i64 dk, float* kt) {
    constexpr i64 kPanel = 16;
    for (i64 j0 = 0; j0 < tv; j0 += kPanel) {
        float* panel = kt + j0 * dk;
        const i64 w = std::min(kPanel, tv - j0);
        for (i64 jj = 0; jj < kPanel; ++jj) {
            if (jj >= w) {
                for (i64 d = 0; d < dk; ++d) panel[d * kPanel + jj] = 0.f;
                continue;
            }
            const float* row = kh + (j0 + jj) * qs;
            for (i64 d = 0; d < dk; ++d) panel[d * kPanel + jj] = row[d];
        }
    }
}

#ifdef GRAFT_SIMD_X86
GRAFT_SIMD_AVX512_BEGIN
/// The same, a row of a panel per gather (16 keys' feature d).
void pack_kt_avx512(const float* kh, i64 qs, i64 tv, i64 dk, float* kt) {
    const __m512i idx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                           _mm512_set1_epi32(static_cast<int>(qs)));
    for (i64 j0 = 0; j0 < tv; j0 += 16) {
        const __mmask16 m = j0 + 16 <= tv ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << (tv - j0)) - 1);
        const float* base = kh + j0 * qs;
        float* panel = kt + j0 * dk;
        for (i64 d = 0; d < dk; ++d)
            _mm512_storeu_ps(panel + d * 16, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, idx, base + d, 4));
    }
}
GRAFT_SIMD_AVX512_END
#endif

void pack_kt(const float* kh, i64 qs, i64 tv, i64 dk, float* kt) {
#ifdef GRAFT_SIMD_X86
    if (gemm::active_isa() == gemm::Isa::avx512 && qs <= (i64{1} << 26)) return pack_kt_avx512(kh, qs, tv, dk, kt);
#endif
    pack_kt_scalar(kh, qs, tv, dk, kt);
}

/// One (batch, head) pair: scores = q_h k_h^T, scaled and masked in place, softmax by rows, then
/// y_h = weights v_h, written into y's columns of head h; kQueryBlock query rows at a time. k_h^T
/// is packed into the GEMM's panels first; v_h is read in place (packing it as well measured 9-12%
/// slower: 64 x 64 heads, one or 32 samples).
void one_head(const float* q, const float* k, const float* v, const float* vmask, float* y,
              const graft_rt::AttentionParams& p, i64 b, i64 h, float* kt, float* s) {
    const i64 qs = p.qk_stride(), vs = p.v_stride(), ys = p.heads * p.dv;
    const float* kh = k + p.k_offset() + b * p.tv * qs + h * p.dk;
    pack_kt(kh, qs, p.tv, p.dk, kt);
    gemm::BMatrix bk;
    bk.data = kt;
    bk.packed = true;
    gemm::BMatrix bv;
    bv.data = v + p.v_offset() + b * p.tv * vs + h * p.dv;
    bv.ld = vs;
    const float* mask = vmask ? vmask + b * p.tv : nullptr;
    for (i64 i0 = 0; i0 < p.tq; i0 += kQueryBlock) {
        const i64 rows = std::min(kQueryBlock, p.tq - i0);
        gemm::gemm(rows, p.tv, p.dk, q + (b * p.tq + i0) * qs + h * p.dk, qs, bk, s, p.tv, gemm::Epilogue{}, nullptr);
        float softmax_scale = p.scale;  // folded into the softmax when nothing is masked
        if (p.causal || mask) {
            softmax_scale = 1.f;
            for (i64 i = 0; i < rows; ++i) {
                float* row = s + i * p.tv;
                for (i64 j = 0; j < p.tv; ++j) {
                    float sc = row[j] * p.scale;
                    if ((p.causal && j > i0 + i) || (mask && mask[j] == 0.f)) sc -= 1e9f;
                    row[j] = sc;
                }
            }
        }
        // no keys: y_h = 0, as the GEMM over k = 0 leaves it
        if (p.tv > 0) vmath::softmax_rows(s, s, rows, p.tv, softmax_scale);
        gemm::gemm(rows, p.dv, p.tv, s, p.tv, bv, y + (b * p.tq + i0) * ys + h * p.dv, ys, gemm::Epilogue{}, nullptr);
    }
}

}  // namespace

i64 attention_dot_floats(const graft_rt::AttentionParams& p) {
    return packed_k_floats(p) + std::min(p.tq, kQueryBlock) * p.tv;
}

void attention_dot(const float* q, const float* k, const float* v, const float* vmask, float* y,
                   const graft_rt::AttentionParams& p, float* work, int max_tasks, ThreadPool* pool) {
    const i64 pairs = p.b * p.heads, per_task = attention_dot_floats(p);
    if (pairs <= 0 || p.tq <= 0) return;
    const i64 tasks = std::min<i64>({static_cast<i64>(pool_size(pool)), static_cast<i64>(max_tasks), pairs});
    parallel_for(pool, tasks, [&](i64 t) {
        float* kt = work + t * per_task;
        float* s = kt + packed_k_floats(p);
        for (i64 pair = t * pairs / tasks, end = (t + 1) * pairs / tasks; pair < end; ++pair) {
            const i64 b = pair / p.heads, h = pair % p.heads;
            one_head(q, k, v, vmask, y, p, b, h, kt, s);
        }
    });
}

}  // namespace graft::cpu
