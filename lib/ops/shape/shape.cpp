// The shape family: schemas, native kernel builders and C++ emitters of Reshape, Transpose,
// Concat, Reverse, Pad, DepthToSpace and SpaceToDepth. Both backends run graft_rt's kernels (graft_rt/shape.hpp).
#include "ops/shape/shape.hpp"

#include "cpu/kernels.hpp"
#include "graft_rt/shape.hpp"
#include "ops/emit_util.hpp"
#include "ops/families.hpp"
#include "ops/op_types.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

using i64 = std::int64_t;

constexpr int kMaxRank = graft_rt::max_rank;
using Dims = std::array<i64, kMaxRank>;

ReshapeAttrs ReshapeAttrs::parse(const Operator& op) {
    return {op.attrs().get_order("in_order", op.describe()), op.attrs().get_order("out_order", op.describe()),
            op.attr<std::vector<i64>>("shape"), op.attr_or<std::vector<std::string>>("follow", {})};
}

TransposeAttrs TransposeAttrs::parse(const Operator& op) { return {op.attrs().get_order("order", op.describe())}; }

TransposeAttrs::Geometry TransposeAttrs::geometry(const Operator& op) const {
    const Variable& x = in(op, "x");
    check_rank(op, x.ndim(), kMaxRank, "transpose");
    Geometry g{x.shape(), {}};
    for (auto p : x.order().permutation_to(order)) g.perm.push_back(static_cast<int>(p));
    return g;
}

BlockAttrs BlockAttrs::parse(const Operator& op) {
    const auto mode = op.attr_or<std::string>("mode", "DCR");
    if (mode != "DCR" && mode != "CRD") throw UnsupportedError(op.describe() + ": mode '" + mode + "' (expected DCR or CRD)");
    BlockAttrs a{op.attrs().get_axis("axis", op.describe()), op.attrs().get_order("axes", op.describe()), op.attr<i64>("block"), mode == "CRD"};
    if (a.block < 1) shape_fail(op, "block " + std::to_string(a.block) + " (expected at least 1)");
    if (a.axes.has(a.axis)) shape_fail(op, "the channel axis " + a.axis.name() + " is one of the axes " + a.axes.str());
    return a;
}

Shape BlockAttrs::out_shape(const Operator& op) const {
    const Variable& x = in(op, "x");
    const bool d2s = op.type() == kDepthToSpace;
    Shape s = x.shape();
    auto index = [&](const Axis& a) {
        if (a == Axis::N || !x.order().has(a) || x.size(a) == kDynamic)
            shape_fail(op, "input " + x.describe() + " has no fixed axis " + a.name() + " to rearrange");
        return x.order().index(a);
    };
    i64 blocks = 1;
    for (std::size_t j = 0; j < axes.ndim(); ++j) {
        const auto k = index(axes[j]);
        if (!d2s && s[k] % block != 0)
            shape_fail(op, "axis " + axes[j].name() + " of " + x.describe() + " is not a multiple of the block " + std::to_string(block));
        s[k] = d2s ? s[k] * block : s[k] / block;
        blocks *= block;
    }
    const auto c = index(axis);
    if (d2s && s[c] % blocks != 0)
        shape_fail(op, "axis " + axis.name() + " of " + x.describe() + " is not a multiple of " + std::to_string(blocks) + " (the block's size)");
    s[c] = d2s ? s[c] / blocks : s[c] * blocks;
    return s;
}

TransposeAttrs::Geometry BlockAttrs::geometry(const Operator& op) const {
    const Variable& x = in(op, "x");
    const bool d2s = op.type() == kDepthToSpace;
    const Shape ys = out_shape(op);
    const int k = static_cast<int>(axes.ndim());
    // The views' axes: 0 the channel within a block, 1 + j the block's index along axes[j], 1 + k + j
    // the position along axes[j], 1 + 2k + i x's axis i otherwise. x's view holds every one once.
    const i64 chan = d2s ? ys[x.order().index(axis)] : x.size(axis);
    std::vector<std::pair<int, i64>> split;  // the channel axis split: DCR (i1, i2, ..., c) or CRD (c, i1, ...)
    if (crd) split.emplace_back(0, chan);
    for (int j = 0; j < k; ++j) split.emplace_back(1 + j, block);
    if (!crd) split.emplace_back(0, chan);
    std::vector<int> xv, yv;
    Shape xs;
    auto view_axis = [&](int id, i64 len) { xv.push_back(id), xs.push_back(len); };
    for (std::size_t i = 0; i < x.ndim(); ++i) {
        const Axis& a = x.order()[i];
        const auto found = axes.find(a);
        if (a == axis) {
            for (const auto& [id, len] : split) {
                if (d2s) view_axis(id, len);
                else yv.push_back(id);
            }
            if (d2s) yv.push_back(0);
            else view_axis(0, chan);
        } else if (found) {
            const int j = static_cast<int>(*found);
            view_axis(1 + k + j, d2s ? x.shape()[i] : ys[i]);
            yv.push_back(1 + k + j);
            if (d2s) yv.push_back(1 + j);  // y's position along axes[j] is s * block + i
            else view_axis(1 + j, block);
        } else {
            view_axis(1 + 2 * k + static_cast<int>(i), x.shape()[i]);
            yv.push_back(xv.back());
        }
    }
    check_rank(op, xv.size(), kMaxRank, "a block rearrangement of " + x.describe() + ", viewed with");
    TransposeAttrs::Geometry g{xs, {}};
    for (int id : yv) g.perm.push_back(static_cast<int>(std::find(xv.begin(), xv.end(), id) - xv.begin()));
    return g;
}

ConcatAttrs ConcatAttrs::parse(const Operator& op) { return {op.attrs().get_axis("axis", op.describe())}; }

ConcatAttrs::Geometry ConcatAttrs::geometry(const Operator& op) const {
    Geometry g;
    for (const auto& [port, v] : op.inputs()) {
        const Split3 s = split_at(*v, axis);
        g.outer = s.outer, g.inner = s.inner;
        g.lens.push_back(s.len);
    }
    return g;
}

ReverseAttrs ReverseAttrs::parse(const Operator& op) { return {op.attrs().get_axis("axis", op.describe())}; }

PadAttrs PadAttrs::parse(const Operator& op) {
    PadAttrs a{op.attrs().get_order("axes", op.describe()), op.attr<std::vector<i64>>("begin"), op.attr<std::vector<i64>>("end")};
    if (a.begin.size() != a.axes.ndim() || a.end.size() != a.axes.ndim())
        shape_fail(op, "begin and end need one entry per axis of " + a.axes.str());
    const std::string mode = op.attr_or<std::string>("mode", "constant");
    if (mode == "edge") a.mode = graft_rt::pad_edge;
    else if (mode == "reflect") a.mode = graft_rt::pad_reflect;
    else if (mode != "constant") throw GraphError(op.describe() + ": mode '" + mode + "', expected constant, edge or reflect");
    a.value = static_cast<float>(op.attr_or<double>("value", 0.0));
    return a;
}

PadAttrs::Geometry PadAttrs::geometry(const Operator& op) const {
    const Variable& x = in(op, "x");
    check_rank(op, x.ndim(), kMaxRank, "padding");
    Geometry g{x.shape(), x.shape(), std::vector<i64>(x.ndim(), 0)};
    for (std::size_t i = 0; i < axes.ndim(); ++i) {
        if (axes[i] == Axis::N || !x.order().has(axes[i])) shape_fail(op, "cannot pad axis " + axes[i].name() + " of " + x.describe());
        const std::size_t k = x.order().index(axes[i]);
        for (i64 p : {begin[i], end[i]})  // cropping is negative padding
            checked::in_range(op.describe(), "padding of axis " + axes[i].name(), p, -kMaxElements);
        const i64 out = x.shape()[k] + begin[i] + end[i];
        if (x.shape()[k] == kDynamic || out < 0)  // 0 entries is an empty result (a slice past the end)
            shape_fail(op, "padding " + std::to_string(begin[i]) + "/" + std::to_string(end[i]) + " of axis " + axes[i].name() +
                               " of " + x.describe() + " leaves " + std::to_string(out) + " entries");
        if (mode != graft_rt::pad_constant && x.shape()[k] == 0 && out > 0)
            shape_fail(op, "edge or reflect padding of axis " + axes[i].name() + " of " + x.describe() + ", which is empty");
        g.out[k] = out;
        g.begin[k] = begin[i];
    }
    return g;
}

namespace {

// ---- Reshape -----------------------------------------------------------------------------------

/// The output shape: entries that follow an axis of x take its size; of the others, one may be
/// kDynamic (the batch), solved from x's element count.
Outputs infer_reshape(const Operator& op) {
    const Variable& x = in(op, "x");
    auto a = ReshapeAttrs::parse(op);
    Shape& shape = a.shape;
    if (!x.order().same_axes(a.in_order)) shape_fail(op, "input " + x.describe() + " does not have the axes of " + a.in_order.str());
    if (shape.size() != a.out_order.ndim()) shape_fail(op, "shape " + shape_str(shape) + " does not fit order " + a.out_order.str());
    if (!a.follow.empty() && a.follow.size() != shape.size())
        shape_fail(op, "follow lists " + std::to_string(a.follow.size()) + " entries for a shape of " + std::to_string(shape.size()));
    int dynamic = 0;
    bool follows_free = false;  // an entry follows a free size of x
    for (std::size_t k = 0; k < shape.size(); ++k) {
        if (!a.follow.empty() && !a.follow[k].empty()) {
            // "T": x's axis T; "like:T": axis T of input `like`, read for its shape only
            const bool of_like = a.follow[k].rfind("like:", 0) == 0;
            const Variable* src = of_like ? op.input_or_null("like") : &x;
            if (!src) shape_fail(op, "follow names " + a.follow[k] + " but the op has no input 'like'");
            const Axis axis(of_like ? a.follow[k].substr(5) : a.follow[k]);
            if (!src->order().has(axis)) shape_fail(op, "follow names axis " + axis.name() + ", which " + src->describe() + " lacks");
            shape[k] = src->size(axis);
            follows_free = follows_free || shape[k] == kDynamic;
        } else if (shape[k] == kDynamic) {
            ++dynamic;
        } else if (shape[k] < 0) {
            shape_fail(op, "bad target shape " + shape_str(shape));
        }
    }
    const i64 known = checked::static_elements(op.describe(), "target shape", shape);
    if (dynamic > 1) shape_fail(op, "target shape " + shape_str(shape) + " has more than one free dimension");
    const i64 total = x.numel();
    if (total == kDynamic) {
        if (!dynamic && !follows_free)
            shape_fail(op, "a dynamic input " + x.describe() + " needs a free dimension in the target shape");
        // The free dimension follows the batch: it may absorb dimensions, (N, T, C) -> (N*T, C),
        // give some back (TimeDistributed), or both ([4N, 7, 8] -> [7N, 32] when attention folds
        // the batch into its heads). Whether the counts divide is known once the batch size is,
        // when the graph is compiled for it.
        if (known == 0) shape_fail(op, "cannot reshape " + x.describe() + " to " + shape_str(shape) + ": element counts differ");
    } else if (follows_free) {
        shape_fail(op, "input " + x.describe() + " has fixed sizes, yet a followed size is free");
    } else if (dynamic) {
        if (known == 0 || total % known != 0)
            shape_fail(op, "cannot reshape " + x.describe() + " to " + shape_str(shape) + ": element counts differ");
        for (auto& d : shape)
            if (d == kDynamic) d = total / known;
    } else if (known != total) {
        shape_fail(op, "cannot reshape " + x.describe() + " (" + std::to_string(total) + " elements) to " + shape_str(shape));
    }
    return {{"y", {a.out_order, shape}}};
}

/// A Reshape reads x laid out in `in_order`: only with that order equal to x's and y's (and the
/// same shape) does it keep every element in place.
bool reshape_is_noop(const Operator& op) {
    const auto a = ReshapeAttrs::parse(op);
    const Variable& x = in(op, "x");
    return a.in_order == x.order() && a.out_order == x.order() && op.output("y")->shape() == x.shape();
}

// ---- Transpose ---------------------------------------------------------------------------------

Outputs infer_transpose(const Operator& op) {
    const Variable& x = in(op, "x");
    const Order order = TransposeAttrs::parse(op).order;
    if (!x.order().same_axes(order)) shape_fail(op, "cannot transpose " + x.describe() + " to order " + order.str());
    return {{"y", {order, x.shape_in(order)}}};
}

/// graft_rt::transpose over the geometry `g` (a Transpose, or a view of a block rearrangement).
std::unique_ptr<native::Kernel> transpose_kernel(native::BuildContext& b, const TransposeAttrs::Geometry& g) {
    const Dims shape = fixed_array<kMaxRank>(g.in_shape);
    const auto perm = fixed_array<kMaxRank>(g.perm);
    const int rank = static_cast<int>(g.perm.size());
    auto x = b.in("x"), y = b.out("y");
    return native::make_kernel(
        [=](const native::RunContext& c) { cpu::transpose(c.at(x), c.at(y), shape.data(), perm.data(), rank, c.pool); });
}

std::unique_ptr<native::Kernel> build_transpose(native::BuildContext& b) {
    return transpose_kernel(b, TransposeAttrs::parse(b.op()).geometry(b.op()));
}

/// The call of graft_rt::transpose over `g`; `shape_what`, `perm_what`: comments.
void emit_transpose_call(cpp::EmitContext& ctx, const TransposeAttrs::Geometry& g, const std::string& shape_what,
                         const std::string& perm_what) {
    cpp::use(ctx, "shape");
    ctx.constant_list("in_shape", g.in_shape, shape_what);
    std::string p;
    for (std::size_t i = 0; i < g.perm.size(); ++i) p += (i ? ", " : "") + std::to_string(g.perm[i]);
    ctx.line("constexpr int perm[] = {{{}}};  // {}", p, perm_what);
    ctx.line("graft_rt::transpose({}, {}, in_shape, perm, {});", ctx.input("x"), ctx.output("y"), g.perm.size());
}

void emit_transpose(cpp::EmitContext& ctx) {
    const Operator& op = ctx.op();
    const auto a = TransposeAttrs::parse(op);
    const Order& from = op.input("x")->order();
    emit_transpose_call(ctx, a.geometry(op), from.str(), from.str() + " -> " + a.order.str());
}

// ---- DepthToSpace, SpaceToDepth ----------------------------------------------------------------

Outputs infer_block(const Operator& op) { return {{"y", {in(op, "x").order(), BlockAttrs::parse(op).out_shape(op)}}}; }

std::unique_ptr<native::Kernel> build_block(native::BuildContext& b) {
    return transpose_kernel(b, BlockAttrs::parse(b.op()).geometry(b.op()));
}

void emit_block(cpp::EmitContext& ctx) {
    const Operator& op = ctx.op();
    const auto a = BlockAttrs::parse(op);
    ctx.comment(op.input("x")->describe() + ": blocks of " + std::to_string(a.block) + " along " + a.axes.str() +
                (op.type() == kDepthToSpace ? " from " : " into ") + a.axis.name() + (a.crd ? " (CRD)" : " (DCR)"));
    emit_transpose_call(ctx, a.geometry(op), "x viewed with the block's axes split", "the view's axes in y's order");
}

// ---- Concat ------------------------------------------------------------------------------------

Outputs infer_concat(const Operator& op) {
    const auto& ins = op.inputs();
    if (ins.empty()) shape_fail(op, "needs at least one input");
    const Axis axis = ConcatAttrs::parse(op).axis;
    const Variable& x0 = *ins[0].second;
    if (!x0.order().has(axis)) shape_fail(op, "input " + x0.describe() + " has no axis " + axis.name());
    Shape out = x0.shape();
    const auto ai = x0.order().index(axis);
    out[ai] = 0;
    for (auto& [n, v] : ins) {
        if (!v->order().same_axes(x0.order())) shape_fail(op, "input '" + n + "' " + v->describe() + " has other axes than " + x0.describe());
        auto s = v->shape_in(x0.order());
        for (std::size_t i = 0; i < s.size(); ++i)
            if (i != ai && s[i] != x0.shape()[i] && s[i] != kDynamic && x0.shape()[i] != kDynamic)
                shape_fail(op, "input '" + n + "' " + v->describe() + " differs from " + x0.describe() + " outside axis " + axis.name());
        out[ai] = out[ai] == kDynamic || s[ai] == kDynamic ? kDynamic : out[ai] + s[ai];  // along the batch: known per batch size
    }
    return {{"y", {x0.order(), out}}};
}

/// The memory plan may have placed every input in its slice of y (concat elimination): the
/// kernel then copies nothing.
std::unique_ptr<native::Kernel> build_concat(native::BuildContext& b) {
    const Operator& op = b.op();
    constexpr std::size_t kMax = 64;
    if (op.inputs().size() > kMax) throw UnsupportedError(op.describe() + ": more than 64 concatenated inputs");
    const auto g = ConcatAttrs::parse(op).geometry(op);
    std::vector<native::Slot> xs;
    for (const auto& [port, v] : op.inputs()) xs.push_back(b.slot(v));
    auto y = b.out("y");
    return native::make_kernel([=](const native::RunContext& c) {
        const float* ptrs[kMax];
        for (std::size_t i = 0; i < xs.size(); ++i) ptrs[i] = c.at(xs[i]);
        graft_rt::concat(ptrs, g.lens.data(), static_cast<int>(xs.size()), c.at(y), g.outer, g.inner);
    });
}

void emit_concat(cpp::EmitContext& ctx) {
    const Operator& op = ctx.op();
    const auto a = ConcatAttrs::parse(op);
    const auto g = a.geometry(op);
    std::string xs;
    for (const auto& [port, v] : op.inputs()) xs += (xs.empty() ? "" : ", ") + ctx.input(port);
    cpp::use(ctx, "shape");
    ctx.constant_i64("outer", g.outer, "axes before " + a.axis.name());
    ctx.constant_i64("inner", g.inner, "axes after " + a.axis.name());
    ctx.constant_list("lens", g.lens, "axis " + a.axis.name() + " of each input");
    ctx.line("const float* const xs[] = {{{}}};", xs);
    ctx.line("graft_rt::concat(xs, lens, {}, {}, outer, inner);", g.lens.size(), ctx.output("y"));
}

// ---- Reverse -----------------------------------------------------------------------------------

Outputs infer_reverse(const Operator& op) {
    const Variable& x = in(op, "x");
    const Axis axis = ReverseAttrs::parse(op).axis;
    if (!x.order().has(axis)) shape_fail(op, "input " + x.describe() + " has no axis " + axis.name());
    return {{"y", {x.order(), x.shape()}}};
}

std::unique_ptr<native::Kernel> build_reverse(native::BuildContext& b) {
    const Split3 s = split_at(in(b.op(), "x"), ReverseAttrs::parse(b.op()).axis);
    auto x = b.in("x"), y = b.out("y");
    return native::make_kernel([=](const native::RunContext& c) { graft_rt::reverse(c.at(x), c.at(y), s.outer, s.len, s.inner); });
}

void emit_reverse(cpp::EmitContext& ctx) {
    const Axis axis = ReverseAttrs::parse(ctx.op()).axis;
    const Split3 s = split_at(in(ctx.op(), "x"), axis);
    cpp::use(ctx, "shape");
    ctx.constant_i64("outer", s.outer, "axes before " + axis.name());
    ctx.constant_i64("len", s.len, "axis " + axis.name() + ", reversed");
    ctx.constant_i64("inner", s.inner, "axes after " + axis.name());
    ctx.line("graft_rt::reverse({}, {}, outer, len, inner);", ctx.input("x"), ctx.output("y"));
}

// ---- Pad ---------------------------------------------------------------------------------------

Outputs infer_pad(const Operator& op) { return {{"y", {in(op, "x").order(), PadAttrs::parse(op).geometry(op).out}}}; }

std::unique_ptr<native::Kernel> build_pad(native::BuildContext& b) {
    const auto a = PadAttrs::parse(b.op());
    const auto g = a.geometry(b.op());
    const int rank = static_cast<int>(g.in.size());
    const Dims in = fixed_array<kMaxRank>(g.in), out = fixed_array<kMaxRank>(g.out), begin = fixed_array<kMaxRank>(g.begin);
    auto x = b.in("x"), y = b.out("y");
    const int mode = a.mode;
    const float value = a.value;
    return native::make_kernel([=](const native::RunContext& c) {
        cpu::pad_nd(c.at(x), c.at(y), in.data(), out.data(), begin.data(), rank, mode, value, c.pool);
    });
}

void emit_pad(cpp::EmitContext& ctx) {
    const Operator& op = ctx.op();
    const auto a = PadAttrs::parse(op);
    const auto g = a.geometry(op);
    cpp::use(ctx, "shape");
    ctx.constant_list("in_shape", g.in, op.input("x")->order().str());
    ctx.constant_list("out_shape", g.out);
    ctx.constant_list("begin", g.begin, "leading padding (negative: cropped)");
    static const char* modes[] = {"graft_rt::pad_constant", "graft_rt::pad_edge", "graft_rt::pad_reflect"};
    ctx.line("graft_rt::pad_nd({}, {}, in_shape, out_shape, begin, {}, {}, {});", ctx.input("x"), ctx.output("y"), g.in.size(),
             modes[a.mode], a.value);
}

}  // namespace

void register_shape(Registry& r) {
    OpDef(kTranspose, {"x"}, infer_transpose, "y = x laid out in order `order` (same axes)")
        .is_noop([](const Operator& op) { return in(op, "x").order() == TransposeAttrs::parse(op).order; })
        .add(r, build_transpose, emit_transpose);
    OpDef(kReshape, {"x", "like?"}, infer_reshape,
          "x's elements, read in order `in_order`, viewed as `out_order` with `shape` (one free dimension; "
          "entries named in `follow` take the size of an axis of x or, as like:AXIS, of input `like`)")
        .x_order([](const Operator& op) { return ReshapeAttrs::parse(op).in_order; })
        .alias()
        .is_noop(reshape_is_noop)
        .add(r, build_copy, emit_copy);  // a view: a copy only when the plan could not alias
    OpDef(kConcat, Variadic{}, infer_concat, "concatenation of x0, x1, ... along axis `axis`")
        .required_order(order_of_x0)
        .add(r, build_concat, emit_concat);
    OpDef(kReverse, {"x"}, infer_reverse, "y = x with the entries along axis `axis` in reverse order")
        .add(r, build_reverse, emit_reverse);
    OpDef(kPad, {"x"}, infer_pad,
          "padding (begin/end > 0: `mode` constant with `value`, edge or reflect) or cropping (< 0) along the axes `axes`, any layout")
        .add(r, build_pad, emit_pad);
    OpDef(kDepthToSpace, {"x"}, infer_block,
          "blocks of `block` entries along each of the axes `axes` taken from the channel axis `axis` (mode DCR or CRD), any layout")
        .add(r, build_block, emit_block);
    OpDef(kSpaceToDepth, {"x"}, infer_block,
          "blocks of `block` entries along each of the axes `axes` moved into the channel axis `axis` (mode DCR or CRD), any layout")
        .add(r, build_block, emit_block);
}

}  // namespace graft::ops
