// Helpers shared by the Keras convolution, pooling and reshaping handlers: logical orders of
// spatial data, 1-D data as 2-D (NTC memory is NHWC with H = 1), nested-pair configs.
#pragma once

#include <utility>
#include <vector>

#include "frontend/keras/layers/layers.hpp"
#include "ops/shape/shape.hpp"

namespace graft::keras::spatial {

/// Keras' positional axes of data with `nd` spatial dims: channels_last NTC / NHWC / NDHWC,
/// channels_first NCT / NCHW / NCDHW.
inline Order logical(std::size_t nd, bool cf) {
    switch (nd) {
        case 1: return cf ? OrderNCT : OrderNTC;
        case 2: return cf ? OrderNCHW : OrderNHWC;
        default: return cf ? OrderNCDHW : OrderNDHWC;
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
    return ctx.op(ops::kReshape, {{"x", x}}, std::move(a), "as_2d")->output("y");
}

/// The inverse of to_2d: NHWC with H = 1 back to NTC.
inline Variable* from_2d(LayerContext& ctx, Variable* y) {
    if (y->size(Axis::H) != 1) ctx.fail_shape("expected a height of 1 after a 1-D operation, got " + y->describe());
    Attributes a;
    a.set("in_order", OrderNHWC);
    a.set("out_order", OrderNTC);
    a.set("shape", Shape{kDynamic, y->size(Axis::W), y->size(Axis::C)});
    return ctx.op(ops::kReshape, {{"x", y}}, std::move(a), "as_1d")->output("y");
}

/// A config entry giving (before, after) amounts per spatial axis, in every spelling Keras
/// uses: an int (all sides), a list of nd ints (symmetric per axis; for nd == 1 a list of two
/// is (before, after)), or a list of nd pairs. Keras 1's 4-entry (top, bottom, left, right) too.
inline std::vector<std::pair<std::int64_t, std::int64_t>> pairs(const LayerContext& ctx, const char* key, std::size_t nd) {
    const auto& c = ctx.config();
    if (!c.has(key)) c.fail(std::string("config has no '") + key + "'");
    const auto& v = c.raw()[key];
    auto bad = [&]() { c.fail(std::string("config '") + key + "' should be an int, a list of ints or a list of pairs"); };
    auto num = [&](const rapidjson::Value& e) -> std::int64_t {
        if (!e.IsInt64() || e.GetInt64() < 0) bad();
        return e.GetInt64();
    };
    std::vector<std::pair<std::int64_t, std::int64_t>> out;
    if (v.IsInt64()) {
        out.assign(nd, {num(v), num(v)});
    } else if (v.IsArray() && v.Size() == nd && nd > 0 && v[0].IsArray()) {
        for (const auto& e : v.GetArray()) {
            if (!e.IsArray() || e.Size() != 2) bad();
            out.emplace_back(num(e[0]), num(e[1]));
        }
    } else if (v.IsArray() && nd == 1 && v.Size() == 2) {
        out.emplace_back(num(v[0]), num(v[1]));
    } else if (v.IsArray() && nd == 1 && v.Size() == 1) {
        out.emplace_back(num(v[0]), num(v[0]));
    } else if (v.IsArray() && v.Size() == nd) {
        for (const auto& e : v.GetArray()) out.emplace_back(num(e), num(e));
    } else if (v.IsArray() && v.Size() == 2 * nd) {
        for (rapidjson::SizeType i = 0; i < v.Size(); i += 2) out.emplace_back(num(v[i]), num(v[i + 1]));
    } else {
        bad();
    }
    return out;
}

}  // namespace graft::keras::spatial
