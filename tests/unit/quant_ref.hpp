// tests/unit/quant_ref.hpp - the reduced-precision schemes written out plainly, for the tests of
// qgemm (int8), bgemm (bf16) and qconv2d (both): what the kernels must compute, independently of
// their code.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace quant_ref {

/// x rounded to the nearest bfloat16 (8 significant bits), ties to even, in double arithmetic.
inline double bf16(float x) {
    if (x == 0.f || !std::isfinite(x)) return x;
    int e;
    std::frexp(static_cast<double>(x), &e);                     // |x| in [2^(e-1), 2^e)
    const double ulp = std::ldexp(1.0, e - 8);                  // 8 significant bits
    return std::nearbyint(static_cast<double>(x) / ulp) * ulp;  // the default mode: ties to even
}

/// Quantised values q with v ~ q * scale.
struct Quantised {
    std::vector<int> q;
    float scale;
};

/// Symmetric int8: q = round(v * 127 / max |v|), scale max |v| / 127.
inline Quantised quantise(const std::vector<float>& v) {
    float amax = 0.f;
    for (float x : v) amax = std::max(amax, std::fabs(x));
    Quantised r{std::vector<int>(v.size(), 0), amax / 127.f};
    if (amax > 0.f)
        for (std::size_t i = 0; i < v.size(); ++i) r.q[i] = static_cast<int>(std::nearbyint(v[i] * (127.f / amax)));
    return r;
}

/// The asymmetric rows of the AVX-512 VNNI quads: [min(v, 0), max(v, 0)] over 0..255, scale
/// range / 255, zero point z = round(-min x 255 / range), u = round(v x 255 / range) + z
/// saturated to 0..255; q = u - z.
inline Quantised quantise_asym(const std::vector<float>& v) {
    float hi = 0.f, lo = 0.f;
    for (float x : v) hi = std::max(hi, x), lo = std::min(lo, x);
    const float range = hi - lo;
    Quantised r{std::vector<int>(v.size(), 0), range / 255.f};
    if (range > 0.f) {
        const float inv = 255.f / range;
        const int z = static_cast<int>(std::nearbyint(-lo * inv));
        for (std::size_t i = 0; i < v.size(); ++i)
            r.q[i] = std::clamp(static_cast<int>(std::nearbyint(v[i] * inv)) + z, 0, 255) - z;
    }
    return r;
}

}  // namespace quant_ref
