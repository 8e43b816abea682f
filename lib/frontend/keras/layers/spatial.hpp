// Helpers shared by the Keras convolution, pooling and reshaping handlers: logical orders of
// spatial data, 1-D data as 2-D (NTC memory is NHWC with H = 1), nested-pair configs.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "frontend/keras/layers/layers.hpp"
#include "ops/op_types.hpp"

namespace graft::keras::spatial {

/// Keras' positional axes of data with `nd` (1 to 3) spatial dims: channels_last NTC / NHWC /
/// NDHWC (positional_order), channels_first NCT / NCHW / NCDHW.
inline Order logical(std::size_t nd, bool cf) {
    if (!cf) return positional_order(nd + 2);
    switch (nd) {
        case 1: return OrderNCT;
        case 2: return OrderNCHW;
        default: return OrderNCDHW;
    }
}

/// The spatial axes, outermost first.
inline std::vector<Axis> axes(std::size_t nd) {
    if (nd == 1) return {Axis::T};
    if (nd == 2) return {Axis::H, Axis::W};
    return {Axis::D, Axis::H, Axis::W};
}

/// A (batch, time, channels) variable viewed as NHWC with H = 1 (free: an aliased Reshape).
inline Variable* to_2d(LayerContext& ctx, Variable* x) {
    Attributes a;
    a.set("in_order", OrderNTC);
    a.set("out_order", OrderNHWC);
    a.set("shape", Shape{kDynamic, 1, x->size(Axis::T), x->size(Axis::C)});
    a.set("follow", std::vector<std::string>{"", "", "T", ""});  // the length, free or not
    return ctx.op(ops::kReshape, {{"x", x}}, std::move(a), "as_2d")->output("y");
}

/// The inverse of to_2d: NHWC with H = 1 back to NTC.
inline Variable* from_2d(LayerContext& ctx, Variable* y) {
    if (y->size(Axis::H) != 1) ctx.fail_shape("expected a height of 1 after a 1-D operation, got " + y->describe());
    Attributes a;
    a.set("in_order", OrderNHWC);
    a.set("out_order", OrderNTC);
    a.set("shape", Shape{kDynamic, y->size(Axis::W), y->size(Axis::C)});
    a.set("follow", std::vector<std::string>{"", "W", ""});
    return ctx.op(ops::kReshape, {{"x", y}}, std::move(a), "as_1d")->output("y");
}

/// A config entry giving (before, after) amounts per spatial axis, in every spelling Keras
/// uses: an int (all sides), a list of nd ints (symmetric per axis; for nd == 1 a list of two
/// is (before, after)), or a list of nd pairs. Keras 1's 4-entry (top, bottom, left, right) too.
inline std::vector<std::pair<std::int64_t, std::int64_t>> pairs(const LayerContext& ctx, const char* key, std::size_t nd) {
    const Config v = ctx.config().get(key);  // "config has no 'key'" if absent
    auto bad = [&]() { v.fail(std::string("config '") + key + "' should be an int, a list of ints or a list of pairs"); };
    auto num = [&](const Config& e) -> std::int64_t {
        if (e.kind() != Config::Kind::integer || e.as_int() < 0) bad();
        return checked::in_range(ctx.where(), std::string("config '") + key + "'", e.as_int(), 0);
    };
    const bool list = v.kind() == Config::Kind::list;
    const std::size_t n = v.size();
    std::vector<std::pair<std::int64_t, std::int64_t>> out;
    if (v.kind() == Config::Kind::integer) {
        out.assign(nd, {num(v), num(v)});
    } else if (list && n == nd && nd > 0 && v.at(0).kind() == Config::Kind::list) {
        for (std::size_t i = 0; i < n; ++i) {
            const Config e = v.at(i);
            if (e.size() != 2) bad();  // not a list, or not a pair
            out.emplace_back(num(e.at(0)), num(e.at(1)));
        }
    } else if (list && nd == 1 && n == 2) {
        out.emplace_back(num(v.at(0)), num(v.at(1)));
    } else if (list && nd == 1 && n == 1) {
        out.emplace_back(num(v.at(0)), num(v.at(0)));
    } else if (list && n == nd) {
        for (std::size_t i = 0; i < n; ++i) out.emplace_back(num(v.at(i)), num(v.at(i)));
    } else if (list && n == 2 * nd) {
        for (std::size_t i = 0; i < n; i += 2) out.emplace_back(num(v.at(i)), num(v.at(i + 1)));
    } else {
        bad();
    }
    return out;
}

}  // namespace graft::keras::spatial
