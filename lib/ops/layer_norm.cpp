// Weighted activations (Keras Rescaling / Normalization / multi-axis BatchNormalization as an
// affine map, PReLU). (LayerNorm, GroupNorm, L2Normalize: lib/ops/normalization/.)
//   Affine      x, scale, shift   attr axes: y = x * scale + shift, scale/shift constants over
//               `axes` (in that order; none: scalars).
//   PReLU       x, alpha          attr batch_axis: y = x < 0 ? alpha * x : x, alpha over every
//               axis of x but the batch (its own order names them).
// Each op asks for its parameter axes last, so the kernels see rows.
#include "ops/legacy_families.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

namespace {

std::optional<Order> order_axes_last(const Operator& op, const std::string& input) {
    if (input != "x") return std::nullopt;
    return axes_last(op, in(op, "x"), axes_attr(op, "axes"));
}

Outputs infer_affine(const Operator& op) {
    const Variable& x = in(op, "x");
    auto axes = axes_attr(op, "axes");
    const Order o = axes_last(op, x, axes);
    expect_params(op, size_over(x, axes), {"scale", "shift"});
    for (const char* n : {"scale", "shift"})
        if (!op.input(n)->is_constant()) shape_fail(op, std::string(n) + " must be a constant");
    return like_x_in(op, o);
}

std::unique_ptr<native::Kernel> build_affine(native::BuildContext& b) {
    const Operator& op = b.op();
    const Variable& x = *op.input("x");
    const std::int64_t K = size_over(x, axes_attr(op, "axes"));
    const std::int64_t M = K != 0 ? x.numel() / K : 0;
    auto xs = b.in("x"), sc = b.in("scale"), sh = b.in("shift"), y = b.out("y");
    return native::make_kernel([=](const native::RunContext& c) {
        cpu::channel_affine(c.at(xs), c.at(sc), c.at(sh), c.at(y), M, K, 1);
    });
}

std::optional<Order> order_prelu(const Operator& op, const std::string& input) {
    if (input != "x") return std::nullopt;
    std::vector<Axis> out{op.attrs().get_axis("batch_axis", op.describe())};
    for (const auto& a : in(op, "alpha").order().axes()) out.push_back(a);
    return Order(std::move(out));
}

Outputs infer_prelu(const Operator& op) {
    const Variable& x = in(op, "x");
    auto want = *order_prelu(op, "x");
    if (!x.order().same_axes(want)) shape_fail(op, "input " + x.describe() + " and alpha " + in(op, "alpha").describe() +
                                                       " should have the same axes besides the batch");
    for (const auto& a : in(op, "alpha").order().axes())
        if (x.size(a) != in(op, "alpha").size(a))
            shape_fail(op, "alpha " + in(op, "alpha").describe() + " does not match input " + x.describe());
    return like_x_in(op, want);
}

std::unique_ptr<native::Kernel> build_prelu(native::BuildContext& b) {
    const Operator& op = b.op();
    const std::int64_t K = op.input("alpha")->numel();
    const std::int64_t N = K != 0 ? op.input("x")->numel() / K : 0;
    auto xs = b.in("x"), al = b.in("alpha"), y = b.out("y");
    return native::make_kernel([=](const native::RunContext& c) { cpu::prelu(c.at(xs), c.at(al), c.at(y), N, K); });
}

}  // namespace

void register_layer_norm(Registry& r) {
    OpSchema af;
    af.type = "Affine";
    af.inputs = {"x", "scale", "shift"};
    af.infer = infer_affine;
    af.required_order = order_axes_last;
    af.inplace = true;
    af.doc = "y = x * scale + shift; constants over `axes` (flattened in that order) or scalars";
    r.add_op(std::move(af));
    r.add_generator<native::Backend>("Affine", build_affine);

    OpSchema pr;
    pr.type = "PReLU";
    pr.inputs = {"x", "alpha"};
    pr.infer = infer_prelu;
    pr.required_order = order_prelu;
    pr.inplace = true;
    pr.doc = "y = x < 0 ? alpha * x : x; alpha over every axis of x but batch_axis";
    r.add_op(std::move(pr));
    r.add_generator<native::Backend>("PReLU", build_prelu);
}

}  // namespace graft::ops
