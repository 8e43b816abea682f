// Converters of the nodes only fusion makes (patterns.hpp), in graft's domain graft.fused: PyTorch's
// self-attention (nn.MultiheadAttention as torch 1.x exports it) as graft's Attention op.
//
// PackedSelfAttention, from the projection qkv [T, B, 3D] (queries, keys and values side by side)
// to the result the model reshapes it to (usually [T*B, D]). Inputs: 0 qkv, then the core inputs
// (below).
// BatchFirstSelfAttention, the whole block of a batch_first model, from x [B, T, D] to the
// attention's output projection [B, T, D]: inputs 0 x, 1 the projection's W [D, 3D], 2 its bias
// [3D], the core inputs from 3, then out_proj's weight (transposed when trans_out) and bias, and
// the shape its result is reshaped to before the transpose back. Its graph keeps x's layout: no
// transposes.
// The core inputs: 12 for the starts, ends, axes and steps of the Slices that cut q, k and v; the
// shapes q, k and v are reshaped to ([T, B*H, dh]: H heads of dh features); the result's shape;
// the scale q is divided by (attribute scale_divides = 1) or multiplied by, or none.
// The sizes come from shape arithmetic, so they are checked here; anything else declines, and
// the original nodes convert one by one.
#include <algorithm>
#include <cmath>
#include <optional>

#include "frontend/onnx/ops/ops.hpp"
#include "frontend/onnx/patterns.hpp"
#include "graft/frontend/onnx.hpp"
#include "ops/op_types.hpp"

namespace graft::onnx {

namespace {

using i64 = std::int64_t;

constexpr std::size_t kCoreInputs = 17;

struct SelfAttentionPlan {
    i64 heads = 0;
    float scale = 1.f;
    Shape out;  // the core result's shape
};

/// Inputs `base` .. `base + 3` cut features [from, to) of the last axis of a rank-3 tensor with
/// `features` of them, in steps of 1.
bool slices_features(NodeContext& ctx, std::size_t base, i64 features, i64 from, i64 to) {
    const auto starts = ctx.known_ints(base, "starts"), ends = ctx.known_ints(base + 1, "ends");
    if (starts.size() != 1 || ends.size() != 1) return false;
    if (!ctx.has_input(base + 2)) return false;  // the default axes start at 0
    const auto axes = ctx.known_ints(base + 2, "axes");
    if (axes.size() != 1 || (axes[0] != -1 && axes[0] != 2)) return false;
    if (ctx.has_input(base + 3) && ctx.known_ints(base + 3, "steps") != std::vector<i64>{1}) return false;
    const auto clamp = [&](i64 v) { return std::clamp<i64>(v < 0 ? v + features : v, 0, features); };
    return clamp(starts[0]) == from && clamp(ends[0]) == to;
}

/// The core inputs from `base`, for a projection [t, b, 3d].
std::optional<SelfAttentionPlan> plan_core(NodeContext& ctx, std::size_t base, SymInt t, SymInt b, i64 d) {
    for (std::size_t s = 0; s < 3; ++s)
        if (!slices_features(ctx, base + 4 * s, 3 * d, static_cast<i64>(s) * d, static_cast<i64>(s + 1) * d))
            return std::nullopt;
    SelfAttentionPlan p;
    for (std::size_t s = 0; s < 3; ++s) {
        const auto shape = ctx.known_sym_ints(base + 12 + s, "shape");
        if (shape.size() != 3 || !(shape[0] == t) || !shape[2].fixed() || shape[2].value <= 0 || d % shape[2].value)
            return std::nullopt;
        const i64 heads = d / shape[2].value;
        if (!(shape[1] == SymInt{b.value * heads, b.batch * heads}) || (p.heads && heads != p.heads))
            return std::nullopt;
        p.heads = heads;
    }
    if (ctx.has_input(base + 16)) {
        const HostTensor* c = ctx.known(base + 16);
        if (!c || !c->is_float() || c->numel() != 1) return std::nullopt;
        p.scale = ctx.config().get_int("scale_divides", 0) ? 1.f / c->f[0] : c->f[0];
        if (!std::isfinite(p.scale)) return std::nullopt;
    }
    const i64 dh = d / p.heads;
    p.out = reshape_target(ctx, {t, SymInt{b.value * p.heads, b.batch * p.heads}, SymInt{dh, 0}},
                           ctx.known_sym_ints(base + 15, "shape"), false);
    return p;
}

/// graft's Attention over the packed projection `qkv` (NTC by name).
Variable* attention(NodeContext& ctx, Variable* qkv, const SelfAttentionPlan& p) {
    Attributes a;
    a.set("heads", p.heads);
    a.set("score", std::string("dot"));
    a.set("scale", static_cast<double>(p.scale));
    a.set("causal", false);
    a.set("packed", true);
    return ctx.op(ops::kAttention, {{"q", qkv}, {"k", qkv}, {"v", qkv}}, std::move(a))->output("y");
}

/// `f` (the checks), or nullopt when it throws: sizes graft cannot read while converting, or
/// that do not fit.
template <typename F>
auto checked(F f) -> decltype(f()) {
    try {
        return f();
    } catch (const Error&) {
        return std::nullopt;
    }
}

void packed_self_attention(NodeContext& ctx) {
    const auto p = checked([&]() -> std::optional<SelfAttentionPlan> {
        if (ctx.num_inputs() != 1 + kCoreInputs || !ctx.has_input(0)) return std::nullopt;
        const auto dims = ctx.dims(0);
        if (dims.size() != 3 || !dims[0].fixed() || !dims[2].fixed() || dims[2].value <= 0 || dims[2].value % 3)
            return std::nullopt;
        return plan_core(ctx, 1, dims[0], dims[1], dims[2].value / 3);
    });
    if (!p) NodeContext::decline();
    // qkv's dimensions are (T, B, 3D): graft's Attention reads it as N, T, C; its result
    // [B, T, D] is, seen as (T, N, C), the [T, B*H, dh] the model reshapes.
    const Value qkv = ctx.relabel(ctx.input(0), Order{Axis::T, Axis::N, Axis::C});
    ctx.set_outputs({reshape(ctx, Value{attention(ctx, qkv.var, *p), Order{Axis::T, Axis::N, Axis::C}}, p->out)});
}

/// A known float input of `shape`, or nullptr.
const HostTensor* weight(NodeContext& ctx, std::size_t i, const Shape& shape) {
    const HostTensor* t = ctx.known(i);
    return t && t->is_float() && t->shape == shape ? t : nullptr;
}

void batch_first_self_attention(NodeContext& ctx) {
    constexpr std::size_t kOut = 3 + kCoreInputs;  // out_proj's weight, bias, the shape before the transpose
    struct Plan {
        SelfAttentionPlan core;
        i64 d = 0;
        const HostTensor *w, *b, *wo, *bo;
    };
    const auto p = checked([&]() -> std::optional<Plan> {
        if (ctx.num_inputs() != kOut + 3 || !ctx.has_input(0)) return std::nullopt;
        const auto dims = ctx.dims(0);  // [B, T, D]
        if (dims.size() != 3 || !dims[1].fixed() || !dims[2].fixed() || dims[2].value <= 0) return std::nullopt;
        const SymInt b = dims[0], t = dims[1];
        Plan r;
        r.d = dims[2].value;
        r.w = weight(ctx, 1, {r.d, 3 * r.d});
        r.b = weight(ctx, 2, {3 * r.d});
        r.wo = weight(ctx, kOut, {r.d, r.d});
        r.bo = weight(ctx, kOut + 1, {r.d});
        if (!r.w || !r.b || !r.wo || !r.bo) return std::nullopt;
        auto core = plan_core(ctx, 3, t, b, r.d);
        const SymInt rows{t.value * b.value, t.value * b.batch};
        if (!core || core->out != Shape{rows.fixed() ? rows.value : kDynamic, r.d}) return std::nullopt;
        const Shape back = reshape_target(ctx, {rows, SymInt{r.d, 0}}, ctx.known_sym_ints(kOut + 2, "shape"), false);
        if (back != Shape{t.value, b.fixed() ? b.value : kDynamic, r.d}) return std::nullopt;
        r.core = *core;
        return r;
    });
    if (!p) NodeContext::decline();
    // x [B, T, D] named N, T, C, as the projection and graft's Attention read it.
    const Value& x = ctx.input(0);
    const Value xn = ctx.relabel(x, OrderNTC);
    const Value qkv = linear(ctx, xn, p->w->floats(), p->d, 3 * p->d, p->b->floats());
    std::vector<float> wo = p->wo->floats();
    if (ctx.config().get_int("trans_out", 0))  // Gemm's B [out, in]: Linear's w is [in, out]
        for (i64 r = 0; r < p->d; ++r)
            for (i64 c = r + 1; c < p->d; ++c)
                std::swap(wo[static_cast<std::size_t>(r * p->d + c)], wo[static_cast<std::size_t>(c * p->d + r)]);
    // The attention's result named as x is (an alias), so that the output projection writes the
    // value the model adds to x, and the optimizer can fuse that residual into it.
    const Value y = ctx.relabel(Value{attention(ctx, qkv.var, p->core), OrderNTC}, x.logical);
    ctx.set_outputs({linear(ctx, y, std::move(wo), p->d, p->d, p->bo->floats())});
}

}  // namespace

void register_fused(Registry& r) {
    r.add_converter(kFrontend, converter_key(kFusedDomain, "PackedSelfAttention"),
                    [](LayerContext& ctx) { packed_self_attention(static_cast<NodeContext&>(ctx)); });
    r.add_converter(kFrontend, converter_key(kFusedDomain, "BatchFirstSelfAttention"),
                    [](LayerContext& ctx) { batch_first_self_attention(static_cast<NodeContext&>(ctx)); });
}

}  // namespace graft::onnx
