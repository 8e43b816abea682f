// graft_rt/attention.hpp - dot-product and additive (tanh) attention with Keras' masking
// arithmetic.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "graft_rt/core.hpp"

namespace graft_rt {

/// How a query and a key make a score: dot = scale * (q . k); tanh = sum_d a[d] * tanh(scale *
/// (q_d + k_d)) (Keras concat / additive attention).
enum class AttentionScore : int { dot, tanh };

/// Attention over q [B, Tq, H*DK], k [B, Tv, H*DK], v [B, Tv, H*DV] -> y [B, Tq, H*DV].
/// packed: self-attention with q, k and v one tensor [B, T, 3*H*DK] (DK = DV, Tq = Tv), the
/// queries in its first H*DK features, the keys in the next, the values in the last (PyTorch's
/// in_proj layout); the kernels get the same pointer as q, k and v.
struct AttentionParams {
    i64 b, tq, tv, heads, dk, dv;
    AttentionScore score = AttentionScore::dot;
    float scale = 1.f;
    bool causal = false;  // query i sees keys j <= i only
    bool packed = false;

    /// Row strides of q and k, and of v.
    i64 qk_stride() const { return (packed ? 3 : 1) * heads * dk; }
    i64 v_stride() const { return packed ? 3 * heads * dk : heads * dv; }
    /// Where k's and v's features start in their rows.
    i64 k_offset() const { return packed ? heads * dk : 0; }
    i64 v_offset() const { return packed ? 2 * heads * dk : 0; }
};

/// Head h uses columns h*DK.. of q and k, h*DV.. of v and y. Masked positions (causal: j > i;
/// vmask [B, Tv] == 0) get score - 1e9 in float, as Keras subtracts 1e9; then softmax over j and
/// y = weights . v. a: the tanh score's weights [DK], or null (1). work: Tv floats.
inline void attention(const float* q, const float* k, const float* v, const float* a, const float* vmask, float* y,
                      const AttentionParams& p, float* work) {
    const i64 qs = p.qk_stride(), vs = p.v_stride(), ys = p.heads * p.dv;
    k += p.k_offset();
    v += p.v_offset();
    float* s = work;
    for (i64 b = 0; b < p.b; ++b)
        for (i64 h = 0; h < p.heads; ++h)
            for (i64 i = 0; i < p.tq; ++i) {
                const float* qi = q + (b * p.tq + i) * qs + h * p.dk;
                float mx = -std::numeric_limits<float>::infinity();
                for (i64 j = 0; j < p.tv; ++j) {
                    const float* kj = k + (b * p.tv + j) * qs + h * p.dk;
                    float sc = 0.f;
                    if (p.score == AttentionScore::dot) {
                        for (i64 d = 0; d < p.dk; ++d) sc += qi[d] * kj[d];
                        sc *= p.scale;
                    } else {
                        for (i64 d = 0; d < p.dk; ++d) sc += (a ? a[d] : 1.f) * std::tanh(p.scale * (qi[d] + kj[d]));
                    }
                    if ((p.causal && j > i) || (vmask && vmask[b * p.tv + j] == 0.f)) sc -= 1e9f;
                    s[j] = sc;
                    mx = std::max(mx, sc);
                }
                float sum = 0.f;
                for (i64 j = 0; j < p.tv; ++j) {
                    s[j] = std::exp(s[j] - mx);
                    sum += s[j];
                }
                float* yi = y + (b * p.tq + i) * ys + h * p.dv;
                for (i64 d = 0; d < p.dv; ++d) yi[d] = 0.f;
                for (i64 j = 0; j < p.tv; ++j) {
                    const float wj = s[j] / sum;
                    const float* vj = v + (b * p.tv + j) * vs + h * p.dv;
                    for (i64 d = 0; d < p.dv; ++d) yi[d] += wj * vj[d];
                }
            }
}

}  // namespace graft_rt
