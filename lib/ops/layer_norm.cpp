// Normalizations over named axes and weighted activations (Keras LayerNormalization,
// GroupNormalization, UnitNormalization, Rescaling / Normalization / multi-axis BatchNormalization
// as an affine map, PReLU):
//   LayerNorm   x, gamma?, beta?  attrs axes (names), epsilon: mean/variance over `axes`;
//               gamma/beta hold the product of those sizes, flattened in the order of `axes`.
//   GroupNorm   x, gamma?, beta?  attrs batch_axis, axis, groups, epsilon: statistics per batch
//               item and group of `axis` over every other axis.
//   L2Normalize x                 attrs axes, epsilon: x / sqrt(max(sum x^2, epsilon)).
//   Affine      x, scale, shift   attr axes: y = x * scale + shift, scale/shift constants over
//               `axes` (in that order; none: scalars).
//   PReLU       x, alpha          attr batch_axis: y = x < 0 ? alpha * x : x, alpha over every
//               axis of x but the batch (its own order names them).
// Each op asks for the reduced / parameter axes last (GroupNorm: batch first, axis last), so the
// kernels see rows.
#include "ops/legacy_families.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

namespace {

Outputs infer_layer_norm(const Operator& op) {
    const Variable& x = in(op, "x");
    auto axes = axes_attr(op, "axes");
    axes_last(op, x, axes);
    expect_params(op, size_over(x, axes), {"gamma", "beta"});
    op.attr<double>("epsilon");
    return like_x_in(op, axes_last(op, x, axes));
}

std::optional<Order> order_axes_last(const Operator& op, const std::string& input) {
    if (input != "x") return std::nullopt;
    return axes_last(op, in(op, "x"), axes_attr(op, "axes"));
}

const float* opt_slot(const native::RunContext& c, const std::optional<native::Slot>& s) { return s ? c.at(*s) : nullptr; }

std::unique_ptr<native::Kernel> build_layer_norm(native::BuildContext& b) {
    const Operator& op = b.op();
    const Variable& x = *op.input("x");
    const std::int64_t K = size_over(x, axes_attr(op, "axes"));
    const std::int64_t M = K != 0 ? x.numel() / K : 0;
    const float eps = static_cast<float>(op.attr<double>("epsilon"));
    std::optional<native::Slot> g, be;
    if (op.has_input("gamma")) g = b.in("gamma");
    if (op.has_input("beta")) be = b.in("beta");
    auto xs = b.in("x"), y = b.out("y");
    return native::make_kernel([=](const native::RunContext& c) {
        cpu::layer_norm(c.at(xs), opt_slot(c, g), opt_slot(c, be), c.at(y), M, K, eps);
    });
}

Order group_order(const Operator& op) {
    const Variable& x = in(op, "x");
    const Axis batch = op.attrs().get_axis("batch_axis", op.describe()), axis = op.attrs().get_axis("axis", op.describe());
    if (batch == axis || !x.order().has(batch) || !x.order().has(axis))
        shape_fail(op, "input " + x.describe() + " needs distinct axes " + batch.name() + " (batch) and " + axis.name());
    std::vector<Axis> out{batch};
    for (const auto& a : x.order().axes())
        if (a != batch && a != axis) out.push_back(a);
    out.push_back(axis);
    return Order(std::move(out));
}

Outputs infer_group_norm(const Operator& op) {
    const Variable& x = in(op, "x");
    const Order o = group_order(op);
    const std::int64_t c = x.size(op.attrs().get_axis("axis")), groups = op.attr<std::int64_t>("groups");
    if (groups < 1 || c % groups != 0)
        shape_fail(op, std::to_string(groups) + " groups do not divide the " + std::to_string(c) + " channels of " + x.describe());
    expect_params(op, c, {"gamma", "beta"});
    op.attr<double>("epsilon");
    return like_x_in(op, o);
}

std::unique_ptr<native::Kernel> build_group_norm(native::BuildContext& b) {
    const Operator& op = b.op();
    const Variable& x = *op.input("x");
    const std::int64_t N = x.size(op.attrs().get_axis("batch_axis")), C = x.size(op.attrs().get_axis("axis"));
    const std::int64_t NC = N * C;
    const std::int64_t S = NC != 0 ? x.numel() / NC : 0, G = op.attr<std::int64_t>("groups");
    const float eps = static_cast<float>(op.attr<double>("epsilon"));
    std::optional<native::Slot> g, be;
    if (op.has_input("gamma")) g = b.in("gamma");
    if (op.has_input("beta")) be = b.in("beta");
    auto xs = b.in("x"), y = b.out("y");
    return native::make_kernel([=](const native::RunContext& c) {
        cpu::group_norm(c.at(xs), opt_slot(c, g), opt_slot(c, be), c.at(y), N, S, C, G, eps);
    });
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
    OpSchema ln;
    ln.type = "LayerNorm";
    ln.inputs = {"x", "gamma?", "beta?"};
    ln.infer = infer_layer_norm;
    ln.required_order = order_axes_last;
    ln.inplace = true;
    ln.doc = "layer normalization over `axes` (attr epsilon); gamma/beta flattened over `axes` in that order";
    r.add_op(std::move(ln));
    r.add_generator<native::Backend>("LayerNorm", build_layer_norm);

    OpSchema gn;
    gn.type = "GroupNorm";
    gn.inputs = {"x", "gamma?", "beta?"};
    gn.infer = infer_group_norm;
    gn.required_order = [](const Operator& op, const std::string& input) -> std::optional<Order> {
        if (input != "x") return std::nullopt;
        return group_order(op);
    };
    gn.inplace = true;
    gn.doc = "group normalization: `groups` groups of axis `axis`, statistics per batch_axis item over all other axes";
    r.add_op(std::move(gn));
    r.add_generator<native::Backend>("GroupNorm", build_group_norm);

    OpSchema l2;
    l2.type = "L2Normalize";
    l2.inputs = {"x"};
    l2.infer = [](const Operator& op) {
        const Order o = axes_last(op, in(op, "x"), axes_attr(op, "axes"));
        op.attr<double>("epsilon");
        return like_x_in(op, o);
    };
    l2.required_order = order_axes_last;
    l2.inplace = true;
    l2.doc = "y = x / sqrt(max(sum over `axes` of x^2, epsilon))";
    r.add_op(std::move(l2));
    r.add_generator<native::Backend>("L2Normalize", [](native::BuildContext& b) {
        const Operator& op = b.op();
        const Variable& x = *op.input("x");
        const std::int64_t K = size_over(x, axes_attr(op, "axes"));
        const std::int64_t M = K != 0 ? x.numel() / K : 0;
        const float eps = static_cast<float>(op.attr<double>("epsilon"));
        auto xs = b.in("x"), y = b.out("y");
        return native::make_kernel([=](const native::RunContext& c) { cpu::l2_normalize(c.at(xs), c.at(y), M, K, eps); });
    });

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
