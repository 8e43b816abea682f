// graft/ir/checked.hpp - overflow-safe size arithmetic, for every number a model file turns into
// a size (dimensions, strides, dilations, repeat counts, pads and their products).
//
// A file is untrusted: `n: 576460752303423489` in a layer config must become a ShapeError naming
// the layer and the field, never a wrapped int64 that sizes a buffer too small. Every helper here
// checks its result against a limit (kMaxElements unless told) as well as against int64 overflow,
// so sums and products of two checked values cannot overflow either.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "graft/error.hpp"

namespace graft {

/// The most elements one tensor (and so one dimension, one kernel reach, one repeat count) may
/// hold: 2^31. Limits::max_tensor_elements can lower it for one load, not raise it.
inline constexpr std::int64_t kMaxElements = std::int64_t{1} << 31;

namespace checked {

/// a * b, false if it overflows int64.
inline bool mul(std::int64_t a, std::int64_t b, std::int64_t& out) noexcept { return !__builtin_mul_overflow(a, b, &out); }
/// a + b, false if it overflows int64.
inline bool add(std::int64_t a, std::int64_t b, std::int64_t& out) noexcept { return !__builtin_add_overflow(a, b, &out); }

/// "2^31" for powers of two, the number otherwise: how limits read in messages.
inline std::string limit_str(std::int64_t limit) {
    for (int e = 1; e < 63; ++e)
        if (limit == (std::int64_t{1} << e)) return std::to_string(limit) + " (2^" + std::to_string(e) + ")";
    return std::to_string(limit);
}

[[noreturn]] inline void fail(const std::string& where, const std::string& field, const std::string& found,
                              const std::string& expected) {
    throw ShapeError(where + ": " + field + " " + found + " " + expected);
}

/// `value` itself, or ShapeError "<where>: <field> <value> is out of range (expected lo..limit)".
inline std::int64_t in_range(const std::string& where, const std::string& field, std::int64_t value, std::int64_t lo = 1,
                             std::int64_t limit = kMaxElements) {
    if (value < lo || value > limit)
        fail(where, field, std::to_string(value), "is out of range (expected " + std::to_string(lo) + " to " + limit_str(limit) + ")");
    return value;
}

/// The product of `factors` (each at least 0), or ShapeError naming the field and the factors
/// when it exceeds `limit` (overflowing int64 on the way included).
inline std::int64_t product(const std::string& where, const std::string& field, std::initializer_list<std::int64_t> factors,
                            std::int64_t limit = kMaxElements) {
    std::int64_t p = 1;
    bool ok = true;
    std::string text;
    for (auto f : factors) {
        text += (text.empty() ? "" : " * ") + std::to_string(f);
        if (f < 0) ok = false;
        if (ok && !mul(p, f, p)) ok = false;
    }
    if (!ok || p > limit) fail(where, field, text, "is beyond " + limit_str(limit));
    return p;
}

/// Whether the static dimensions of `shape` (kDynamic, -1, counts as 1) are not negative and
/// multiply to at most `limit`.
inline bool fits(const std::vector<std::int64_t>& shape, std::int64_t limit = kMaxElements) noexcept {
    std::int64_t p = 1;
    for (auto d : shape)
        if (d != -1 && (d < 0 || !mul(p, d, p) || p > limit)) return false;
    return true;
}

/// Elements of a shape whose static dimensions (kDynamic, -1, counts as 1) multiply to at most
/// `limit`; ShapeError naming the shape otherwise.
inline std::int64_t static_elements(const std::string& where, const std::string& field, const std::vector<std::int64_t>& shape,
                                    std::int64_t limit = kMaxElements) {
    std::int64_t p = 1;
    bool ok = true;
    std::string text = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) {
        const auto d = shape[i];
        text += (i ? ", " : "") + (d == -1 ? std::string("?") : std::to_string(d));
        if (d == -1) continue;
        if (d < 0 || !mul(p, d, p) || p > limit) ok = false;
    }
    if (!ok) fail(where, field, text + "]", "holds more than " + limit_str(limit) + " elements");
    return p;
}

/// The reach of a convolution window, dilation * (k - 1) + 1, with k and dilation at least 1 and
/// the reach at most `limit`.
inline std::int64_t conv_reach(const std::string& where, std::int64_t k, std::int64_t dilation,
                               std::int64_t limit = kMaxElements) {
    in_range(where, "kernel size", k, 1, limit);
    in_range(where, "dilation", dilation, 1, limit);
    std::int64_t r = 0;
    if (!mul(k - 1, dilation, r) || !add(r, 1, r) || r > limit)
        fail(where, "kernel reach", "dilation " + std::to_string(dilation) + " * (kernel " + std::to_string(k) + " - 1) + 1",
             "is beyond " + limit_str(limit));
    return r;
}

}  // namespace checked
}  // namespace graft
