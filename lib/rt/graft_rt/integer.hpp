// graft_rt/integer.hpp - values of other dtypes than float32: Cast, Gather, Where and OneHot. Every value
// is held in float32 words (an integer or bool value exactly), so these kernels read and write
// floats; Cast rounds to what the target dtype can hold.
#pragma once

#include <cmath>
#include <cstring>

#include "graft_rt/core.hpp"

namespace graft_rt {

/// What Cast converts to: float32 (the value itself), an integer dtype (truncated toward zero,
/// then wrapped into the dtype's range as C++ integer conversion does; NaN and infinities give 0),
/// or bool (x != 0; NaN is true).
enum class CastTo : int { float32, int32, int64, uint8, uint16, int8, boolean };

/// The name of a target in graft's IR (graft::DType's names), or null.
inline const char* cast_name(CastTo t) {
    switch (t) {
        case CastTo::float32: return "float32";
        case CastTo::int32: return "int32";
        case CastTo::int64: return "int64";
        case CastTo::uint8: return "uint8";
        case CastTo::uint16: return "uint16";
        case CastTo::int8: return "int8";
        case CastTo::boolean: return "bool";
    }
    return nullptr;
}

/// v truncated toward zero and wrapped modulo 2^bits into [lo, lo + 2^bits) (lo 0 or -2^(bits-1)).
inline float cast_wrap(float v, double bits, double lo) {
    if (!std::isfinite(v)) return 0.f;
    const double t = std::trunc(static_cast<double>(v));
    const double span = std::ldexp(1.0, static_cast<int>(bits));
    const double r = std::fmod(t - lo, span);
    return static_cast<float>((r < 0 ? r + span : r) + lo);
}

/// y[i] = x[i] converted to `to`. x and y may be the same memory.
inline void cast(CastTo to, const float* x, float* y, i64 n) {
    for (i64 i = 0; i < n; ++i) {
        const float v = x[i];
        switch (to) {
            case CastTo::float32: y[i] = v; break;
            case CastTo::int32: y[i] = cast_wrap(v, 32, -2147483648.0); break;
            case CastTo::int64: y[i] = std::isfinite(v) ? std::trunc(v) : 0.f; break;
            case CastTo::uint8: y[i] = cast_wrap(v, 8, 0); break;
            case CastTo::uint16: y[i] = cast_wrap(v, 16, 0); break;
            case CastTo::int8: y[i] = cast_wrap(v, 8, -128); break;
            case CastTo::boolean: y[i] = v != 0.f ? 1.f : 0.f; break;
        }
    }
}

/// y[o, m, i] = x[o, idx[m], i] for x viewed as [outer, len, inner] and idx [M]: ONNX Gather along
/// one axis. An index below 0 counts from the end (-1 is len - 1); one still outside [0, len), or
/// NaN, gives zeros (a kernel cannot raise, and x is never read out of bounds).
inline void gather(const float* x, const float* idx, float* y, i64 outer, i64 len, i64 inner, i64 M) {
    for (i64 o = 0; o < outer; ++o)
        for (i64 m = 0; m < M; ++m) {
            float* yr = y + (o * M + m) * inner;
            double v = idx[m];
            if (v < 0) v += static_cast<double>(len);
            if (v >= 0 && v < static_cast<double>(len)) {  // NaN fails both
                const i64 k = static_cast<i64>(v);
                std::memcpy(yr, x + (o * len + k) * inner, bytes(inner));
            } else {
                std::memset(yr, 0, bytes(inner));
            }
        }
}

/// y[i] = c[i] != 0 ? a[i] : b[i] (ONNX Where; all of one shape and layout).
inline void where(const float* c, const float* a, const float* b, float* y, i64 n) {
    for (i64 i = 0; i < n; ++i) y[i] = c[i] != 0.f ? a[i] : b[i];
}

/// y [n, depth] = the one-hot rows of indices [n]: y[i, d] = values[1] (on) where d is indices[i]
/// (truncated toward zero; a negative index counts from the end, -1 is depth - 1), values[0]
/// (off) elsewhere; an index outside [-depth, depth), or NaN, gives a row of off values (ONNX
/// OneHot). `depth_fed`: null, or the depth the model was fed when it runs (a model input): y's
/// shape was fixed when converting, so a depth that differs gives NaN throughout.
inline void one_hot(const float* indices, const float* values, float* y, i64 n, i64 depth, const float* depth_fed) {
    const bool ok = !depth_fed || std::trunc(static_cast<double>(depth_fed[0])) == static_cast<double>(depth);
    const float off = ok ? values[0] : std::nanf(""), on = ok ? values[1] : std::nanf("");
    for (i64 i = 0; i < n; ++i) {
        float* row = y + i * depth;
        for (i64 d = 0; d < depth; ++d) row[d] = off;
        double v = std::trunc(static_cast<double>(indices[i]));
        if (v < 0) v += static_cast<double>(depth);
        if (ok && v >= 0 && v < static_cast<double>(depth)) row[static_cast<i64>(v)] = on;  // NaN fails both
    }
}

}  // namespace graft_rt
