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
/// r[c] (c < 16) becomes column c of the 16 x 16 block whose rows r held (lane j of the result:
/// r[j] lane c): unpacks within 128-bit lanes, then two rounds of 128-bit lane shuffles.
inline void transpose16(__m512 (&r)[16]) {
    __m512 t[16], u[16];
    for (int i = 0; i < 8; ++i) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    // u[4i + c], 128-bit lane L: rows 4i .. 4i + 3 of column 4L + c.
    for (int i = 0; i < 4; ++i) {
        u[4 * i] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
        u[4 * i + 1] = _mm512_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
        u[4 * i + 2] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
        u[4 * i + 3] = _mm512_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
    }
    for (int c = 0; c < 4; ++c) {
        const __m512 v0 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0x88);
        const __m512 v1 = _mm512_shuffle_f32x4(u[c], u[4 + c], 0xDD);
        const __m512 v2 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0x88);
        const __m512 v3 = _mm512_shuffle_f32x4(u[8 + c], u[12 + c], 0xDD);
        r[c] = _mm512_shuffle_f32x4(v0, v2, 0x88);
        r[4 + c] = _mm512_shuffle_f32x4(v1, v3, 0x88);
        r[8 + c] = _mm512_shuffle_f32x4(v0, v2, 0xDD);
        r[12 + c] = _mm512_shuffle_f32x4(v1, v3, 0xDD);
    }
}

/// The same by 16 x 16 blocks (16 keys by 16 features) transposed in registers: a 64 x 64 head
/// about 1.7 -> 0.8 us (Zen 4, perf's share in the transformer) against a gather per panel row.
void pack_kt_avx512(const float* kh, i64 qs, i64 tv, i64 dk, float* kt) {
    for (i64 j0 = 0; j0 < tv; j0 += 16) {
        const i64 keys = std::min<i64>(16, tv - j0);
        float* panel = kt + j0 * dk;
        for (i64 d0 = 0; d0 < dk; d0 += 16) {
            const i64 w = std::min<i64>(16, dk - d0);
            const __mmask16 m = static_cast<__mmask16>((1u << w) - 1);
            __m512 r[16];
            for (int i = 0; i < 16; ++i)
                r[i] = i < keys ? _mm512_maskz_loadu_ps(m, kh + (j0 + i) * qs + d0) : _mm512_setzero_ps();
            transpose16(r);
            for (i64 c = 0; c < w; ++c) _mm512_storeu_ps(panel + (d0 + c) * 16, r[c]);
        }
    }
}
GRAFT_SIMD_AVX512_END
#endif

void pack_kt(const float* kh, i64 qs, i64 tv, i64 dk, float* kt) {
#ifdef GRAFT_SIMD_X86
    if (gemm::active_isa() == gemm::Isa::avx512) return pack_kt_avx512(kh, qs, tv, dk, kt);
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
