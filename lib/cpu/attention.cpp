// Dot-product and additive (tanh) attention with Keras' masking arithmetic.
#include <cmath>

#include "cpu/kernels.hpp"

namespace graft::cpu {

using i64 = std::int64_t;

void attention(const float* q, const float* k, const float* v, const float* a, const float* vmask, float* y,
               const AttentionParams& p, float* s) {
    const i64 H = p.heads, DK = p.dk, DV = p.dv;
    const i64 qs = H * DK, vs = H * DV;
    for (i64 b = 0; b < p.b; ++b)
        for (i64 h = 0; h < H; ++h)
            for (i64 i = 0; i < p.tq; ++i) {
                const float* qi = q + (b * p.tq + i) * qs + h * DK;
                float mx = -INFINITY;
                for (i64 j = 0; j < p.tv; ++j) {
                    const float* kj = k + (b * p.tv + j) * qs + h * DK;
                    float sc = 0.f;
                    if (p.score == Score::dot) {
                        for (i64 d = 0; d < DK; ++d) sc += qi[d] * kj[d];
                        sc *= p.scale;
                    } else {
                        for (i64 d = 0; d < DK; ++d) sc += (a ? a[d] : 1.f) * std::tanh(p.scale * (qi[d] + kj[d]));
                    }
                    const bool masked = (p.causal && j > i) || (vmask && vmask[b * p.tv + j] == 0.f);
                    if (masked) sc -= 1e9f;
                    s[j] = sc;
                    mx = sc > mx ? sc : mx;
                }
                float sum = 0.f;
                for (i64 j = 0; j < p.tv; ++j) {
                    s[j] = std::exp(s[j] - mx);
                    sum += s[j];
                }
                float* yi = y + (b * p.tq + i) * vs + h * DV;
                for (i64 d = 0; d < DV; ++d) yi[d] = 0.f;
                for (i64 j = 0; j < p.tv; ++j) {
                    const float w = s[j] / sum;
                    const float* vj = v + (b * p.tv + j) * vs + h * DV;
                    for (i64 d = 0; d < DV; ++d) yi[d] += w * vj[d];
                }
            }
}

}  // namespace graft::cpu
