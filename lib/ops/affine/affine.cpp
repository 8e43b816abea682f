// BiasAdd, Affine, BatchNormalization and PReLU (affine.hpp): schemas, native kernels and emitters
// (both call graft_rt/elementwise.hpp), and each op's steps in a fused elementwise program. The
// geometry a kernel sees is computed once per op (the *_view functions) for both backends.
#include "ops/affine/affine.hpp"

#include <cmath>

#include "graft_rt/elementwise.hpp"
#include "ops/emit_util.hpp"
#include "ops/families.hpp"
#include "ops/fused/fused.hpp"
#include "ops/op_types.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

BatchNormAttrs BatchNormAttrs::parse(const Operator& op) {
    return {op.attrs().get_axis("axis", op.describe()), op.attr<double>("epsilon")};
}

BatchNormAttrs::Folded BatchNormAttrs::fold(const Operator& op) const {
    auto constant = [&](const char* n) -> const std::vector<float>* {
        auto* v = op.input_or_null(n);
        if (!v) return nullptr;
        if (!v->is_constant()) throw UnsupportedError(op.describe() + ": '" + n + "' must be a constant");
        return &static_cast<const ConstantVariable*>(v)->data();
    };
    const auto* mean = constant("mean");
    const auto* var = constant("var");
    const auto* gamma = constant("gamma");
    const auto* beta = constant("beta");
    Folded f;
    for (std::size_t i = 0; i < mean->size(); ++i) {
        const double s = (gamma ? (*gamma)[i] : 1.0) / std::sqrt(static_cast<double>((*var)[i]) + epsilon);
        f.scale.push_back(static_cast<float>(s));
        f.shift.push_back(static_cast<float>((beta ? (*beta)[i] : 0.0) - (*mean)[i] * s));
    }
    return f;
}

namespace {

using i64 = std::int64_t;
using Input = ElementwiseProgram::Input;

/// A broadcast spec of a fused program: "A,B" for those axes, "*" for none.
std::string spec(const std::vector<std::string>& axes) {
    std::string s;
    for (const auto& n : axes) s += (s.empty() ? "" : ",") + n;
    return s.empty() ? "*" : s;
}

/// A fused program of one input at y's shape and parameters broadcast along `specs`.
fused::Program program(const std::vector<std::string>& specs, std::vector<fused::Step> steps) {
    fused::Program p;
    p.bcast.push_back("");
    p.bcast.insert(p.bcast.end(), specs.begin(), specs.end());
    p.steps = std::move(steps);
    return p;
}

fused::Step step(const char* code, std::int64_t a, std::int64_t b) { return {code, a, b, "", {0.0, 0.0, 0.0}}; }

/// `constexpr` M and K: x as rows of K parameters' worth.
void emit_rows(cpp::EmitContext& ctx, const Split3& rows, const std::string& what) {
    ctx.constant_i64("M", rows.outer, "rows");
    ctx.constant_i64("K", rows.len, what);
}

// ---- BiasAdd -------------------------------------------------------------------------------

Axis bias_axis(const Operator& op) { return op.attrs().get_axis("axis", op.describe()); }

Outputs infer_bias_add(const Operator& op) {
    const Variable& x = in(op, "x");
    const Variable& b = in(op, "b");
    const Axis axis = bias_axis(op);
    if (!x.order().has(axis)) shape_fail(op, "input " + x.describe() + " has no axis " + axis.name());
    const auto len = x.size(axis);
    if (len == kDynamic) shape_fail(op, "axis " + axis.name() + " of " + x.describe() + " has no fixed size");
    if (b.ndim() != 1 || b.shape()[0] != len)
        shape_fail(op, "bias " + b.describe() + " should be 1-D [" + std::to_string(len) + "] like axis " + axis.name() +
                           " of the input");
    return {{"y", {x.order(), x.shape()}}};
}

std::unique_ptr<native::Kernel> build_bias_add(native::BuildContext& b) {
    const auto sp = split_at(*b.op().input("x"), bias_axis(b.op()));
    const auto x = b.in("x"), bias = b.in("b"), y = b.out("y");
    return native::make_kernel([=](const native::RunContext& c) {
        graft_rt::channel_affine(c.at(x), nullptr, c.at(bias), c.at(y), sp.outer, sp.len, sp.inner);  // x * 1 + b
    });
}

void emit_bias_add(cpp::EmitContext& ctx) {
    const Axis axis = bias_axis(ctx.op());
    cpp::use(ctx, "elementwise");
    cpp::emit_split(ctx, split_at(*ctx.op().input("x"), axis), axis);
    ctx.line("graft_rt::channel_affine({}, nullptr, {}, {}, outer, len, inner);", ctx.input("x"), ctx.input("b"), ctx.output("y"));
}

std::optional<ElementwiseProgram> bias_add_program(const Operator& op) {
    return fused::lowering({{op.input("x"), nullptr, ""}, {op.input("b"), nullptr, ""}},
                           program({bias_axis(op).name()}, {step("add", 0, 1)}));
}

// ---- Affine --------------------------------------------------------------------------------

/// x as [M, K] (K: the parameters, over `axes`, last).
Split3 affine_view(const Operator& op) {
    const Variable& x = *op.input("x");
    const i64 K = size_over(x, axes_attr(op, "axes"));
    return {K != 0 ? x.numel() / K : 0, K, 1};
}

Outputs infer_affine(const Operator& op) {
    const Variable& x = in(op, "x");
    const auto axes = axes_attr(op, "axes");
    const Order o = axes_last(op, x, axes);
    expect_params(op, size_over(x, axes), {"scale", "shift"});
    for (const char* n : {"scale", "shift"})
        if (!op.input(n)->is_constant()) shape_fail(op, std::string(n) + " must be a constant");
    return like_x_in(op, o);
}

std::unique_ptr<native::Kernel> build_affine(native::BuildContext& b) {
    const auto rows = affine_view(b.op());
    const auto xs = b.in("x"), sc = b.in("scale"), sh = b.in("shift"), y = b.out("y");
    return native::make_kernel([=](const native::RunContext& c) {
        graft_rt::channel_affine(c.at(xs), c.at(sc), c.at(sh), c.at(y), rows.outer, rows.len, 1);
    });
}

void emit_affine(cpp::EmitContext& ctx) {
    const Operator& op = ctx.op();
    cpp::use(ctx, "elementwise");
    emit_rows(ctx, affine_view(op), "parameters over axes " + spec(op.attr<std::vector<std::string>>("axes")));
    ctx.line("graft_rt::channel_affine({}, {}, {}, {}, M, K, 1);", ctx.input("x"), ctx.input("scale"), ctx.input("shift"),
             ctx.output("y"));
}

std::optional<ElementwiseProgram> affine_program(const Operator& op) {
    const std::string s = spec(op.attr<std::vector<std::string>>("axes"));
    return fused::lowering({{op.input("x"), nullptr, ""}, {op.input("scale"), nullptr, ""}, {op.input("shift"), nullptr, ""}},
                           program({s, s}, {step("mul", 0, 1), step("add", 3, 2)}));
}

// ---- BatchNormalization --------------------------------------------------------------------

Outputs infer_bn(const Operator& op) {
    const Variable& x = in(op, "x");
    const auto bn = BatchNormAttrs::parse(op);
    if (!x.order().has(bn.axis)) shape_fail(op, "input " + x.describe() + " has no axis " + bn.axis.name());
    const auto c = x.size(bn.axis);
    for (const char* n : {"mean", "var", "gamma", "beta"}) {
        auto* v = op.input_or_null(n);
        if (v && (v->order() != OrderC || v->shape()[0] != c))
            shape_fail(op, std::string(n) + " " + v->describe() + " should be C [" + std::to_string(c) + "] like axis " +
                               bn.axis.name() + " of the input");
    }
    return {{"y", {x.order(), x.shape()}}};
}

std::unique_ptr<native::Kernel> build_bn(native::BuildContext& b) {
    const auto bn = BatchNormAttrs::parse(b.op());
    const auto sp = split_at(*b.op().input("x"), bn.axis);
    auto f = bn.fold(b.op());
    const float* sc = b.keep(std::make_shared<const std::vector<float>>(std::move(f.scale)));
    const float* sh = b.keep(std::make_shared<const std::vector<float>>(std::move(f.shift)));
    const auto x = b.in("x"), y = b.out("y");
    return native::make_kernel([=](const native::RunContext& c) {
        graft_rt::channel_affine(c.at(x), sc, sh, c.at(y), sp.outer, sp.len, sp.inner);
    });
}

void emit_bn(cpp::EmitContext& ctx) {
    const auto bn = BatchNormAttrs::parse(ctx.op());
    auto f = bn.fold(ctx.op());
    cpp::use(ctx, "elementwise");
    ctx.comment("scale = gamma / sqrt(var + epsilon), shift = beta - mean * scale (computed by graft)");
    const std::string sc = ctx.constant("scale", std::move(f.scale)), sh = ctx.constant("shift", std::move(f.shift));
    cpp::emit_split(ctx, split_at(*ctx.op().input("x"), bn.axis), bn.axis);
    ctx.line("graft_rt::channel_affine({}, {}, {}, {}, outer, len, inner);", ctx.input("x"), sc, sh, ctx.output("y"));
}

/// x * scale + shift with the folded scale and shift as new constants.
std::optional<ElementwiseProgram> bn_program(const Operator& op) {
    const auto bn = BatchNormAttrs::parse(op);
    auto f = bn.fold(op);
    const std::string axis = bn.axis.name();
    return fused::lowering({{op.input("x"), nullptr, ""},
                            {nullptr, std::make_shared<const std::vector<float>>(std::move(f.scale)), op.name() + "/scale"},
                            {nullptr, std::make_shared<const std::vector<float>>(std::move(f.shift)), op.name() + "/shift"}},
                           program({axis, axis}, {step("mul", 0, 1), step("add", 3, 2)}));
}

// ---- PReLU ---------------------------------------------------------------------------------

/// The order PReLU reads x in: the batch axis, then alpha's axes in alpha's order.
Order prelu_x_order(const Operator& op) {
    std::vector<Axis> out{op.attrs().get_axis("batch_axis", op.describe())};
    for (const auto& a : in(op, "alpha").order().axes()) out.push_back(a);
    return Order(std::move(out));
}

/// x as [N, K] (K: one alpha each).
Split3 prelu_view(const Operator& op) {
    const i64 K = op.input("alpha")->numel();
    return {K != 0 ? op.input("x")->numel() / K : 0, K, 1};
}

Outputs infer_prelu(const Operator& op) {
    const Variable& x = in(op, "x");
    const Variable& alpha = in(op, "alpha");
    const Order want = prelu_x_order(op);
    if (!x.order().same_axes(want))
        shape_fail(op, "input " + x.describe() + " and alpha " + alpha.describe() + " should have the same axes besides the batch");
    for (const auto& a : alpha.order().axes())
        if (x.size(a) != alpha.size(a)) shape_fail(op, "alpha " + alpha.describe() + " does not match input " + x.describe());
    return like_x_in(op, want);
}

std::unique_ptr<native::Kernel> build_prelu(native::BuildContext& b) {
    const auto rows = prelu_view(b.op());
    const auto xs = b.in("x"), al = b.in("alpha"), y = b.out("y");
    return native::make_kernel(
        [=](const native::RunContext& c) { graft_rt::prelu(c.at(xs), c.at(al), c.at(y), rows.outer, rows.len); });
}

void emit_prelu(cpp::EmitContext& ctx) {
    const auto rows = prelu_view(ctx.op());
    cpp::use(ctx, "elementwise");
    ctx.constant_i64("N", rows.outer, "batch");
    ctx.constant_i64("K", rows.len, "one alpha each");
    ctx.line("graft_rt::prelu({}, {}, {}, N, K);", ctx.input("x"), ctx.input("alpha"), ctx.output("y"));
}

std::optional<ElementwiseProgram> prelu_program(const Operator& op) {
    return fused::lowering({{op.input("x"), nullptr, ""}, {op.input("alpha"), nullptr, ""}},
                           program({spec(op.input("alpha")->order().names())}, {step("prelu", 0, 1)}));
}

}  // namespace

void register_affine(Registry& r) {
    OpDef(kBiasAdd, {"x", "b"}, infer_bias_add,
          "y = x + b along axis `axis` (b: 1-D, one value per index of that axis); any order")
        .inplace()
        .elementwise_program(bias_add_program)
        .add(r, build_bias_add, emit_bias_add);
    OpDef(kAffine, {"x", "scale", "shift"}, infer_affine,
          "y = x * scale + shift; constants over `axes` (flattened in that order) or scalars")
        .x_order(x_axes_last)
        .inplace()
        .elementwise_program(affine_program)
        .add(r, build_affine, emit_affine);
    OpDef(kBatchNormalization, {"x", "mean", "var", "gamma?", "beta?"}, infer_bn,
          "inference batch normalization along axis `axis`; attr epsilon; gamma/beta optional (scale/center off)")
        .inplace()
        .elementwise_program(bn_program)
        .add(r, build_bn, emit_bn);
    OpDef(kPReLU, {"x", "alpha"}, infer_prelu, "y = x < 0 ? alpha * x : x; alpha over every axis of x but batch_axis")
        .x_order(prelu_x_order)
        .inplace()
        .elementwise_program(prelu_program)
        .add(r, build_prelu, emit_prelu);
}

}  // namespace graft::ops
