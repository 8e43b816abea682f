// Embedding lookups and Keras masks:
//   Embedding   x (float indices), table CN [V, D]  attr axis (name of the new last axis):
//               y = x's axes + axis; out-of-range or NaN indices give zero rows (see kernels.hpp).
//   NonZeroMask x -> mask = (x != 0), same type (Embedding mask_zero).
//   Masking     x  attrs axis (feature axis), mask_value -> y (rows equal to mask_value
//               everywhere zeroed) and mask (x's order without `axis`).
#include "ops/legacy_families.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

namespace {

Outputs infer_embedding(const Operator& op) {
    const Variable& x = in(op, "x");
    const Variable& t = in(op, "table");
    if (t.order() != OrderCN || !t.is_constant()) shape_fail(op, "table " + t.describe() + " should be a constant in order CN");
    const Axis axis = op.attrs().get_axis("axis", op.describe());
    if (x.order().has(axis)) shape_fail(op, "input " + x.describe() + " already has axis " + axis.name());
    std::vector<Axis> axes = x.order().axes();
    axes.push_back(axis);
    Shape s = x.shape();
    s.push_back(t.shape()[1]);
    return {{"y", {Order(std::move(axes)), s}}};
}

std::unique_ptr<native::Kernel> build_embedding(native::BuildContext& b) {
    const Operator& op = b.op();
    const Variable& t = *op.input("table");
    const std::int64_t V = t.shape()[0], D = t.shape()[1], M = op.input("x")->numel();
    auto x = b.in("x"), tab = b.in("table"), y = b.out("y");
    return native::make_kernel(
        [=](const native::RunContext& c) { cpu::embedding(c.at(x), c.at(tab), c.at(y), M, V, D); });
}

Outputs infer_masking(const Operator& op) {
    const Variable& x = in(op, "x");
    const Axis axis = op.attrs().get_axis("axis", op.describe());
    if (!x.order().has(axis)) shape_fail(op, "input " + x.describe() + " has no axis " + axis.name());
    op.attr<double>("mask_value");
    std::vector<Axis> axes;
    Shape s;
    for (std::size_t i = 0; i < x.ndim(); ++i)
        if (x.order()[i] != axis) axes.push_back(x.order()[i]), s.push_back(x.shape()[i]);
    const Order o = x.order().with_last(axis);  // the order the op reads x in (see required_order)
    return {{"y", {o, x.shape_in(o)}}, {"mask", {Order(std::move(axes)), s}}};
}

std::unique_ptr<native::Kernel> build_masking(native::BuildContext& b) {
    const Operator& op = b.op();
    auto sp = split_at(*op.input("x"), op.attrs().get_axis("axis"));
    const float mv = static_cast<float>(op.attr<double>("mask_value"));
    auto x = b.in("x"), y = b.out("y"), m = b.out("mask");
    return native::make_kernel(
        [=](const native::RunContext& c) { cpu::masking(c.at(x), c.at(y), c.at(m), sp.outer, sp.len, mv); });
}

}  // namespace

void register_embedding(Registry& r) {
    OpSchema e;
    e.type = "Embedding";
    e.inputs = {"x", "table"};
    e.infer = infer_embedding;
    e.doc = "y[..., :] = table[int(x[...]), :] (zeros for an index outside [0, V) or NaN); new last axis `axis`";
    r.add_op(std::move(e));
    r.add_generator<native::Backend>("Embedding", build_embedding);

    OpSchema z;
    z.type = "NonZeroMask";
    z.inputs = {"x"};
    z.infer = [](const Operator& op) -> Outputs {
        const Variable& x = in(op, "x");
        return {{"mask", {x.order(), x.shape()}}};
    };
    z.doc = "mask = (x != 0) as 1/0 (Keras Embedding mask_zero)";
    r.add_op(std::move(z));
    r.add_generator<native::Backend>("NonZeroMask", [](native::BuildContext& b) {
        const auto n = b.op().input("x")->numel();
        auto x = b.in("x"), m = b.out("mask");
        return native::make_kernel([=](const native::RunContext& c) { cpu::nonzero_mask(c.at(x), c.at(m), n); });
    });

    OpSchema m;
    m.type = "Masking";
    m.inputs = {"x"};
    m.infer = infer_masking;
    m.required_order = [](const Operator& op, const std::string&) -> std::optional<Order> {
        return in(op, "x").order().with_last(op.attrs().get_axis("axis", op.describe()));
    };
    m.doc = "Keras Masking: rows (along `axis`) all equal to mask_value become 0; mask = 1 where a row is kept";
    r.add_op(std::move(m));
    r.add_generator<native::Backend>("Masking", build_masking);
}

}  // namespace graft::ops
