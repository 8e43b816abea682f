// Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Concat, Split, Slice, Tile, Pad, DepthToSpace
// and SpaceToDepth. A known input
// gives a known output (shape arithmetic); a runtime one becomes graft's aliasing Reshape, its
// Concat, or its Pad (zero padding, or cropping with negative amounts: Slice and Split with
// step 1). Transpose costs nothing at all: it renames the value's logical dimensions, and the
// optimizer chooses the memory layout.
#include <algorithm>
#include <optional>

#include "frontend/onnx/host_eval.hpp"
#include "frontend/onnx/ops/ops.hpp"
#include "ops/op_types.hpp"

namespace graft::onnx {

namespace {

using i64 = std::int64_t;

/// The shape of input 0, known or not.
Shape input_shape(NodeContext& ctx) {
    if (const HostTensor* t = ctx.known(0)) return t->shape;
    return logical_shape(ctx.input(0));
}

/// Sets output 0 to input 0 reshaped to `shape` (known stays known).
void reshape_to(NodeContext& ctx, const Shape& shape) {
    if (const HostTensor* t = ctx.known(0)) {
        HostTensor r = *t;
        r.shape = shape;
        return ctx.set_known_output(0, std::move(r));
    }
    ctx.set_outputs({reshape(ctx, ctx.input(0), shape)});
}

/// x / y when it is exact for every batch size (y may depend on it only if x is a whole multiple of y).
std::optional<SymInt> exact_quotient(SymInt x, SymInt y) {
    if (y.fixed()) {
        if (y.value == 0 || x.value % y.value != 0 || x.batch % y.value != 0) return std::nullopt;
        return SymInt{x.value / y.value, x.batch / y.value};
    }
    if (x.batch % y.batch != 0) return std::nullopt;
    const i64 q = x.batch / y.batch;
    if (x.value != q * y.value) return std::nullopt;
    return SymInt{q, 0};
}

/// The product of `dims` (at most one of them may depend on the batch size).
SymInt product(const NodeContext& ctx, const std::vector<SymInt>& dims) {
    SymInt p{1, 0};
    for (const auto& d : dims) p = sym_binary("Mul", p, d, ctx.where());
    return p;
}

std::string dims_str(const std::vector<SymInt>& dims) {
    std::string s = "[";
    for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + dims[i].str();
    return s + "]";
}

}  // namespace

Shape reshape_target(NodeContext& ctx, const std::vector<SymInt>& in, std::vector<SymInt> t, bool allowzero) {
    for (std::size_t i = 0; i < t.size(); ++i)
        if (t[i] == SymInt{0, 0} && !allowzero) {
            if (i >= in.size()) ctx.fail_shape("shape entry " + std::to_string(i) + " is 0 (copy) but the input has rank " + std::to_string(in.size()));
            t[i] = in[i];
        }
    const SymInt total = product(ctx, in);
    int infer = -1;
    std::vector<SymInt> rest;
    for (std::size_t i = 0; i < t.size(); ++i) {
        if (t[i] == SymInt{-1, 0}) {
            if (infer >= 0) ctx.fail_shape("shape has more than one -1");
            infer = static_cast<int>(i);
        } else if (t[i].fixed() && t[i].value < 0) {
            ctx.fail_shape("shape entry " + std::to_string(t[i].value));
        } else {
            rest.push_back(t[i]);
        }
    }
    const SymInt known = product(ctx, rest);
    if (infer >= 0) {
        const auto q = exact_quotient(total, known);
        if (!q) ctx.fail_shape("cannot reshape " + dims_str(in) + " to " + dims_str(t));
        t[static_cast<std::size_t>(infer)] = *q;
    } else if (!(known == total)) {
        ctx.fail_shape("cannot reshape " + dims_str(in) + " (" + total.str() + " elements) to " + dims_str(t));
    }
    Shape out;
    for (const auto& d : t) {
        if (!d.fixed() && std::count(out.begin(), out.end(), kDynamic))
            ctx.fail_unsupported("a reshape to " + dims_str(t) + " (N: the batch size): graft's Reshape takes one dimension that depends on N");
        out.push_back(d.fixed() ? d.value : kDynamic);
    }
    return out;
}

namespace {

void reshape_op(NodeContext& ctx) {
    if (ctx.opset() < 5) ctx.fail_unsupported("Reshape-1 (shape as an attribute)");
    expect_inputs(ctx, 2, 2);
    reshape_to(ctx, reshape_target(ctx, ctx.dims(0), ctx.known_sym_ints(1, "shape"), ctx.config().get_int("allowzero", 0) != 0));
}

void flatten(NodeContext& ctx) {
    expect_inputs(ctx, 1, 1);
    const Shape in = input_shape(ctx);
    const auto r = static_cast<i64>(in.size());
    const i64 a = ctx.config().get_int("axis", 1);
    if (a < -r || a > r) ctx.fail_format("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(r));
    const auto axis = static_cast<std::size_t>(a < 0 ? a + r : a);
    i64 outer = 1, inner = 1;
    for (std::size_t i = 0; i < in.size(); ++i) {
        i64& acc = i < axis ? outer : inner;
        acc = (acc == kDynamic || in[i] == kDynamic) ? kDynamic : acc * in[i];
    }
    if (inner == kDynamic && outer == kDynamic) ctx.fail_unsupported("flattening dimensions that depend on the batch size into both halves");
    reshape_to(ctx, {outer, inner});
}

/// The axes of Squeeze / Unsqueeze: an attribute before opset 13, an input since.
std::vector<i64> axes_arg(NodeContext& ctx, bool required) {
    if (ctx.opset() < 13) {
        if (!ctx.config().has("axes")) {
            if (required) ctx.fail_format("has no 'axes'");
            return {};
        }
        return ctx.config().get_ints("axes");
    }
    if (!ctx.has_input(1)) {
        if (required) ctx.fail_format("has no axes input");
        return {};
    }
    return ctx.known_ints(1, "axes");
}

void squeeze(NodeContext& ctx) {
    expect_inputs(ctx, 1, 2);
    const Shape in = input_shape(ctx);
    std::vector<bool> drop(in.size(), false);
    const auto axes = axes_arg(ctx, false);
    if (axes.empty())
        for (std::size_t i = 0; i < in.size(); ++i) drop[i] = in[i] == 1;
    for (auto a : axes) {
        const std::size_t i = axis_index(ctx, a, in.size());
        if (in[i] != 1) ctx.fail_shape("cannot squeeze dimension " + std::to_string(a) + " of size " + std::to_string(in[i]));
        drop[i] = true;
    }
    Shape out;
    for (std::size_t i = 0; i < in.size(); ++i)
        if (!drop[i]) out.push_back(in[i]);
    reshape_to(ctx, out);
}

void unsqueeze(NodeContext& ctx) {
    expect_inputs(ctx, 1, 2);
    const Shape in = input_shape(ctx);
    const auto axes = axes_arg(ctx, true);
    const std::size_t r = in.size() + axes.size();
    std::vector<bool> added(r, false);
    for (auto a : axes) {
        const std::size_t i = axis_index(ctx, a, r);
        if (added[i]) ctx.fail_format("axis " + std::to_string(a) + " is listed twice");
        added[i] = true;
    }
    Shape out;
    for (std::size_t i = 0, j = 0; i < r; ++i) out.push_back(added[i] ? 1 : in[j++]);
    reshape_to(ctx, out);
}

void transpose(NodeContext& ctx) {
    expect_inputs(ctx, 1, 1);
    const Shape in = input_shape(ctx);
    std::vector<i64> perm;
    if (ctx.config().has("perm")) perm = ctx.config().get_ints("perm");
    else
        for (std::size_t i = in.size(); i-- > 0;) perm.push_back(static_cast<i64>(i));
    if (perm.size() != in.size()) ctx.fail_format("perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(in.size()));
    std::vector<bool> seen(in.size(), false);
    for (auto p : perm) {
        if (p < 0 || p >= static_cast<i64>(in.size()) || seen[static_cast<std::size_t>(p)]) ctx.fail_format("perm is not a permutation");
        seen[static_cast<std::size_t>(p)] = true;
    }
    if (const HostTensor* t = ctx.known(0)) {
        Shape out;
        for (auto p : perm) out.push_back(in[static_cast<std::size_t>(p)]);
        const auto n = static_cast<std::size_t>(t->numel());
        std::vector<std::size_t> in_stride(in.size(), 1), src(n);
        for (std::size_t d = in.size(); d-- > 1;) in_stride[d - 1] = in_stride[d] * static_cast<std::size_t>(in[d]);
        for (std::size_t k = 0; k < n; ++k) {
            std::size_t rem = k;
            for (std::size_t d = out.size(); d-- > 0;) {
                const auto sd = static_cast<std::size_t>(out[d]);
                src[k] += (rem % sd) * in_stride[static_cast<std::size_t>(perm[d])];
                rem /= sd;
            }
        }
        return ctx.set_known_output(0, host_take(*t, out, src));
    }
    const Value& x = ctx.input(0);
    std::vector<Axis> names;
    for (auto p : perm) names.push_back(x.logical[static_cast<std::size_t>(p)]);
    ctx.set_outputs({Value{x.var, Order(names)}});  // the same elements, dimensions renamed
}

void concat(NodeContext& ctx) {
    if (ctx.num_inputs() < 1) ctx.fail_format("has no inputs");
    bool all_known = true;
    for (std::size_t i = 0; i < ctx.num_inputs(); ++i) {
        if (!ctx.has_input(i)) ctx.fail_format("input " + std::to_string(i) + " is missing");
        all_known = all_known && ctx.known(i);
    }
    const std::size_t rank = all_known ? ctx.known(0)->shape.size() : ctx.input(0).logical.ndim();
    const std::size_t axis = axis_index(ctx, ctx.config().get_int("axis"), rank);
    if (all_known) {  // along `axis`: outer blocks of each input in turn
        HostTensor r;
        r.kind = ctx.known(0)->kind;
        r.shape = ctx.known(0)->shape;
        r.shape[axis] = 0;
        for (std::size_t i = 0; i < ctx.num_inputs(); ++i) {
            const HostTensor& t = *ctx.known(i);
            if (t.shape.size() != rank) ctx.fail_shape("inputs of different ranks");
            for (std::size_t d = 0; d < rank; ++d)
                if (d != axis && t.shape[d] != r.shape[d]) ctx.fail_shape("inputs of shapes " + shape_str(ctx.known(0)->shape) + " and " + shape_str(t.shape));
            r.shape[axis] += t.shape[axis];
            if (t.is_float()) r.kind = HostTensor::Kind::floating;
        }
        std::size_t outer = 1;
        for (std::size_t d = 0; d < axis; ++d) outer *= static_cast<std::size_t>(r.shape[d]);
        for (std::size_t o = 0; o < outer; ++o)
            for (std::size_t i = 0; i < ctx.num_inputs(); ++i) {
                const HostTensor& t = *ctx.known(i);
                const std::size_t block = static_cast<std::size_t>(t.numel()) / outer;
                for (std::size_t k = o * block; k < (o + 1) * block; ++k) r.push(t, k);
            }
        return ctx.set_known_output(0, std::move(r));
    }
    const Order logical = ctx.input(0).logical;
    NamedVars ins;
    for (std::size_t i = 0; i < ctx.num_inputs(); ++i) {
        const Value& v = ctx.input(i);
        if (v.logical.ndim() != rank) ctx.fail_shape("inputs of different ranks");
        if (numel(logical_shape(v)) == 0) continue;  // an empty input adds nothing
        ins.emplace_back("x" + std::to_string(ins.size()), ctx.relabel(v, logical).var);
    }
    Attributes a;
    a.set("axis", logical[axis]);
    ctx.set_outputs({emit(ctx, ops::kConcat, std::move(ins), std::move(a), logical)});
}

void split(NodeContext& ctx) {
    expect_inputs(ctx, 1, 2);
    const Value& x = ctx.input(0);
    const Shape s = logical_shape(x);
    const std::size_t axis = axis_index(ctx, ctx.config().get_int("axis", 0), s.size());
    std::vector<i64> parts;
    if (ctx.opset() >= 13 && ctx.has_input(1)) parts = ctx.known_ints(1, "split");
    else if (ctx.config().has("split")) parts = ctx.config().get_ints("split");
    const std::size_t n = ctx.num_outputs();
    if (parts.empty()) {
        if (s[axis] % static_cast<i64>(n) != 0) ctx.fail_shape("dimension " + std::to_string(s[axis]) + " does not split into " + std::to_string(n) + " equal parts");
        parts.assign(n, s[axis] / static_cast<i64>(n));
    }
    i64 total = 0;
    for (auto p : parts) total += p;
    if (parts.size() != n || total != s[axis]) ctx.fail_shape("split sizes do not add up to dimension " + std::to_string(s[axis]));
    i64 start = 0;
    for (std::size_t k = 0; k < n; ++k) {
        if (ctx.wants_output(k)) {
            const Value part = crop(ctx, x, axis, start, start + parts[k], "part" + std::to_string(k));
            ctx.set_output(k, part.var == x.var ? emit(ctx, ops::kIdentity, {{"x", x.var}}, {}, x.logical).var : part.var, x.logical);
        }
        start += parts[k];
    }
}

void slice(NodeContext& ctx) {
    if (ctx.opset() < 10) ctx.fail_unsupported("Slice-1 (attributes)");
    expect_inputs(ctx, 3, 5);
    const Shape s = input_shape(ctx);
    const auto starts = ctx.known_sym_ints(1, "starts"), ends = ctx.known_sym_ints(2, "ends");
    std::vector<i64> axes, steps;
    if (ctx.has_input(3)) axes = ctx.known_ints(3, "axes");
    else
        for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<i64>(i));
    steps = ctx.has_input(4) ? ctx.known_ints(4, "steps") : std::vector<i64>(starts.size(), 1);
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
        ctx.fail_format("starts, ends, axes and steps differ in length");
    std::vector<i64> lo(s.size(), 0), hi(s), step(s.size(), 1);
    for (std::size_t j = 0; j < axes.size(); ++j) {
        const std::size_t a = axis_index(ctx, axes[j], s.size());
        const i64 dim = s[a];
        if (steps[j] == 0) ctx.fail_format("a step of 0");
        if (dim == kDynamic) {  // a dimension that depends on the batch size: graft takes it whole
            const SymInt len = ctx.dims(0)[a];
            const auto from_end = [&](SymInt v) { return v.fixed() && v.value < 0 ? sym_binary("Add", v, len, ctx.where()) : v; };
            const SymInt b = from_end(starts[j]), e = from_end(ends[j]);
            if (steps[j] != 1 || !(b == SymInt{0, 0}) || !(e == len || (e.fixed() && e.value >= (i64{1} << 31))))
                ctx.fail_unsupported("slicing [" + b.str() + ", " + e.str() + ") of dimension " + std::to_string(a) + ", of size " + len.str() +
                                     " (N: the batch size); graft takes such a dimension only whole");
            continue;
        }
        if (!starts[j].fixed() || !ends[j].fixed())
            ctx.fail_unsupported("slice bounds " + starts[j].str() + ", " + ends[j].str() + " that depend on the batch size N");
        auto clampi = [](i64 v, i64 l, i64 h) { return std::max(l, std::min(v, h)); };
        const i64 sj = starts[j].value, ej = ends[j].value;
        i64 b = sj < 0 ? sj + dim : sj, e = ej < 0 ? ej + dim : ej;
        if (steps[j] > 0) b = clampi(b, 0, dim), e = clampi(e, 0, dim);
        else b = clampi(b, -1, dim - 1), e = clampi(e, -1, dim - 1);
        lo[a] = b, hi[a] = e, step[a] = steps[j];
    }
    if (const HostTensor* t = ctx.known(0)) {  // shape arithmetic: slice now
        Shape out;
        for (std::size_t d = 0; d < s.size(); ++d) {
            const i64 len = step[d] > 0 ? (hi[d] - lo[d] + step[d] - 1) / step[d] : (lo[d] - hi[d] - step[d] - 1) / -step[d];
            out.push_back(std::max<i64>(len, 0));
        }
        const auto n = static_cast<std::size_t>(numel(out));
        std::vector<std::size_t> src(n);
        for (std::size_t k = 0; k < n; ++k) {
            std::size_t rem = k, stride = 1;
            for (std::size_t d = s.size(); d-- > 0;) {
                const auto od = static_cast<std::size_t>(out[d]);
                src[k] += static_cast<std::size_t>(lo[d] + static_cast<i64>(rem % od) * step[d]) * stride;
                rem /= od;
                stride *= static_cast<std::size_t>(s[d]);
            }
        }
        return ctx.set_known_output(0, host_take(*t, out, src));
    }
    // A runtime value: steps of 1 crop, other steps gather the entries they take.
    std::vector<i64> b(s.size(), 0), e(s.size(), 0);
    for (std::size_t d = 0; d < s.size(); ++d) {
        if (s[d] == kDynamic || step[d] != 1) continue;  // whole, or gathered below
        b[d] = -lo[d], e[d] = -(s[d] - std::max(hi[d], lo[d]));  // nothing when hi <= lo: an empty result
    }
    const Value& x = ctx.input(0);
    Value y = pad_or_crop(ctx, x, b, e, "slice");
    for (std::size_t d = 0; d < s.size(); ++d) {
        if (s[d] == kDynamic || step[d] == 1) continue;
        std::vector<float> idx;
        for (i64 k = lo[d]; step[d] > 0 ? k < hi[d] : k > hi[d]; k += step[d]) idx.push_back(static_cast<float>(k));
        if (idx.empty()) ctx.fail_unsupported("an empty slice");
        const Order out = positional_order(s.size());
        std::vector<Axis> xn = out.axes();
        xn[d] = Axis("gathered");
        const auto n = static_cast<i64>(idx.size());
        Variable* indices = ctx.constant(ctx.layer_name() + "/step" + std::to_string(d), Order{out[d]}, {n}, std::move(idx));
        Attributes a;
        a.set("axis", Axis("gathered"));
        y = emit(ctx, ops::kGather, {{"x", ctx.relabel(y, Order(xn)).var}, {"indices", indices}}, std::move(a), out,
                 "step" + std::to_string(d));
    }
    if (y.var == x.var) y = emit(ctx, ops::kIdentity, {{"x", x.var}}, {}, x.logical);
    ctx.set_output(0, y.var, y.logical, ctx.is_integer(0));
}

/// Tile: known values now; a runtime value as a Concat of copies along each repeated axis.
void tile(NodeContext& ctx) {
    expect_inputs(ctx, 2, 2);
    const Shape in = input_shape(ctx);
    const auto reps = ctx.known_ints(1, "repeats");
    if (reps.size() != in.size()) ctx.fail_format("repeats has " + std::to_string(reps.size()) + " entries for rank " + std::to_string(in.size()));
    for (auto r : reps) {
        if (r < 0) ctx.fail_format("a negative repeat count " + std::to_string(r));
        if (r == 0) ctx.fail_unsupported("a repeat count of 0 (an empty result)");
    }
    const HostTensor* t = ctx.known(0);
    Shape out;  // of a known value (no free dimension)
    if (t)
        for (std::size_t d = 0; d < in.size(); ++d) out.push_back(checked::product(ctx.where(), "tiled axis " + std::to_string(d), {in[d], reps[d]}));
    if (t && static_cast<std::size_t>(numel(out)) <= kMaxKnownElements) {  // computed now; a larger one is an op
        const auto n = static_cast<std::size_t>(numel(out));
        std::vector<std::size_t> src(n);
        for (std::size_t k = 0; k < n; ++k) {
            std::size_t rem = k, stride = 1;
            for (std::size_t d = in.size(); d-- > 0;) {
                const auto od = static_cast<std::size_t>(out[d]);
                src[k] += (rem % od) % static_cast<std::size_t>(in[d]) * stride;
                rem /= od;
                stride *= static_cast<std::size_t>(in[d]);
            }
        }
        return ctx.set_known_output(0, host_take(*t, out, src));
    }
    // Each copy is one input of a Concat: a count from the file must not make millions of them
    // (fuzz_onnx: repeats 2^30 kept the converter busy building names for minutes).
    constexpr i64 kMaxTileCopies = 4096;
    for (std::size_t d = 0; d < in.size(); ++d)
        if (reps[d] > kMaxTileCopies)
            ctx.fail_unsupported("repeats[" + std::to_string(d) + "] = " + std::to_string(reps[d]) +
                                 " on a value computed when the model runs (graft makes a copy per repetition: at most " +
                                 std::to_string(kMaxTileCopies) + ")");
    Value y = ctx.input(0);
    for (std::size_t d = 0; d < in.size(); ++d) {
        if (reps[d] == 1) continue;
        NamedVars copies;
        for (i64 j = 0; j < reps[d]; ++j) copies.emplace_back("x" + std::to_string(j), y.var);
        Attributes a;
        a.set("axis", y.logical[d]);
        y = emit(ctx, ops::kConcat, std::move(copies), std::move(a), y.logical, "tile" + std::to_string(d));
    }
    ctx.set_outputs({y.var == ctx.input(0).var ? emit(ctx, ops::kIdentity, {{"x", y.var}}, {}, y.logical) : y});
}

void pad(NodeContext& ctx) {
    expect_inputs(ctx, 1, 4);
    const std::string mode = ctx.config().get_string("mode", "constant");
    if (mode != "constant" && mode != "edge" && mode != "reflect") ctx.fail_format("mode '" + mode + "' (expected constant, edge or reflect)");
    const Value& x = ctx.input(0);
    const std::size_t r = x.logical.ndim();
    std::vector<i64> pads = ctx.opset() < 11 ? ctx.config().get_ints("pads") : ctx.known_ints(1, "pads");
    float value = 0.f;
    if (ctx.opset() >= 11 && ctx.has_input(2)) {
        const HostTensor* v = ctx.known(2);
        if (!v) ctx.fail_needs_value(2, "a constant_value computed when the model runs");
        if (v->numel() != 1) ctx.fail_format("constant_value holds " + std::to_string(v->numel()) + " values, expected one");
        value = v->floats()[0];
    } else if (ctx.opset() < 11) {
        value = static_cast<float>(ctx.config().get_float("value", 0.0));
    }
    std::vector<i64> axes;
    if (ctx.opset() >= 18 && ctx.has_input(3)) axes = ctx.known_ints(3, "axes");
    else
        for (std::size_t i = 0; i < r; ++i) axes.push_back(static_cast<i64>(i));
    if (pads.size() != 2 * axes.size()) ctx.fail_format("pads has " + std::to_string(pads.size()) + " entries, expected " + std::to_string(2 * axes.size()));
    std::vector<i64> b(r, 0), e(r, 0);
    for (std::size_t j = 0; j < axes.size(); ++j) {
        const std::size_t a = axis_index(ctx, axes[j], r);
        b[a] = pads[j], e[a] = pads[j + axes.size()];
    }
    Value y = pad_or_crop(ctx, x, b, e, "", mode, mode == "constant" ? value : 0.f);
    if (y.var == x.var) y = emit(ctx, ops::kIdentity, {{"x", x.var}}, {}, x.logical);
    ctx.set_output(0, y.var, y.logical, ctx.is_integer(0));
}

/// DepthToSpace (mode DCR or CRD) and SpaceToDepth of [N, C, H, W]: blocks of `blocksize` along
/// H and W taken from / put into C (graft's ops of the same names, over the value's logical axes).
void depth_space(NodeContext& ctx) {
    expect_inputs(ctx, 1, 1);
    const bool d2s = ctx.node().op_type() == "DepthToSpace";
    const Value x = ctx.input(0);
    if (x.logical.ndim() != 4) ctx.fail_unsupported("a rank-" + std::to_string(x.logical.ndim()) + " input (expected N, C, H, W)");
    const i64 block = ctx.config().get_int("blocksize");
    if (block < 1) ctx.fail_format("blocksize " + std::to_string(block) + " (expected at least 1)");
    const std::string mode = d2s ? ctx.config().get_string("mode", "DCR") : "DCR";
    if (mode != "DCR" && mode != "CRD") ctx.fail_format("mode '" + mode + "' (expected DCR or CRD)");
    Attributes a;
    a.set("axis", x.logical[1]);
    a.set("axes", Order{x.logical[2], x.logical[3]});
    a.set("block", block);
    a.set("mode", mode);
    ctx.set_outputs({emit(ctx, d2s ? ops::kDepthToSpace : ops::kSpaceToDepth, {{"x", x.var}}, std::move(a), x.logical)});
}

}  // namespace

void register_shape(Registry& r) {
    add(r, "Reshape", reshape_op);
    add(r, "Flatten", flatten);
    add(r, "Squeeze", squeeze);
    add(r, "Unsqueeze", unsqueeze);
    add(r, "Transpose", transpose);
    add(r, "Concat", concat);
    add(r, "Split", split);
    add(r, "Slice", slice);
    add(r, "Pad", pad);
    add(r, "DepthToSpace", depth_space);
    add(r, "SpaceToDepth", depth_space);
    add(r, "Tile", tile);
}

}  // namespace graft::onnx
