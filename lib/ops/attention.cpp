// Batched products (Attention: lib/ops/attention/):
//   BatchMatMul x, y  attrs batch (axis), x_axis, y_axis (contracted), out_order (names of the
//               result: batch, x's other axes, then y's other axes).
#include "ops/legacy_families.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

namespace {

struct MatMulAxes {
    Axis batch, xk, yk;
    std::vector<Axis> xr, yr;  // the other axes of x and y
};

MatMulAxes matmul_axes(const Operator& op) {
    const Variable& x = in(op, "x");
    const Variable& y = in(op, "y");
    MatMulAxes m{op.attrs().get_axis("batch", op.describe()), op.attrs().get_axis("x_axis", op.describe()),
                 op.attrs().get_axis("y_axis", op.describe()), {}, {}};
    for (const Variable* v : {&x, &y})
        if (!v->order().has(m.batch)) shape_fail(op, "input " + v->describe() + " has no batch axis " + m.batch.name());
    if (!x.order().has(m.xk) || m.xk == m.batch) shape_fail(op, "input " + x.describe() + " has no axis " + m.xk.name() + " to contract");
    if (!y.order().has(m.yk) || m.yk == m.batch) shape_fail(op, "input " + y.describe() + " has no axis " + m.yk.name() + " to contract");
    for (const auto& a : x.order().axes())
        if (a != m.batch && a != m.xk) m.xr.push_back(a);
    for (const auto& a : y.order().axes())
        if (a != m.batch && a != m.yk) m.yr.push_back(a);
    if (x.size(m.xk) != y.size(m.yk))
        shape_fail(op, "contracted axes differ: " + x.describe() + " axis " + m.xk.name() + " vs " + y.describe() + " axis " + m.yk.name());
    return m;
}

Outputs infer_matmul(const Operator& op) {
    auto m = matmul_axes(op);
    const Variable& x = in(op, "x");
    const Variable& y = in(op, "y");
    auto out = op.attrs().get_order("out_order", op.describe());
    Shape s{x.size(m.batch)};
    for (const auto& a : m.xr) s.push_back(x.size(a));
    for (const auto& a : m.yr) s.push_back(y.size(a));
    if (out.ndim() != s.size())
        shape_fail(op, "out_order " + out.str() + " should have " + std::to_string(s.size()) + " axes");
    return {{"y", {out, s}}};
}

std::optional<Order> order_matmul(const Operator& op, const std::string& input) {
    auto m = matmul_axes(op);
    std::vector<Axis> o{m.batch};
    if (input == "x") {
        o.insert(o.end(), m.xr.begin(), m.xr.end());
        o.push_back(m.xk);
    } else {
        o.push_back(m.yk);
        o.insert(o.end(), m.yr.begin(), m.yr.end());
    }
    return Order(std::move(o));
}

std::unique_ptr<native::Kernel> build_matmul(native::BuildContext& b) {
    const Operator& op = b.op();
    auto m = matmul_axes(op);
    const Variable& x = *op.input("x");
    const Variable& y = *op.input("y");
    const std::int64_t B = x.size(m.batch), K = x.size(m.xk);
    const std::int64_t BK = B * K;
    const std::int64_t M = BK != 0 ? x.numel() / BK : 0, N = BK != 0 ? y.numel() / BK : 0;
    auto xs = b.in("x"), ys = b.in("y"), out = b.out("y");
    return native::make_kernel(
        [=](const native::RunContext& c) { cpu::batch_matmul(c.at(xs), c.at(ys), c.at(out), B, M, K, N); });
}

}  // namespace

void register_batch_matmul(Registry& r) {
    OpSchema m;
    m.type = "BatchMatMul";
    m.inputs = {"x", "y"};
    m.infer = infer_matmul;
    m.required_order = order_matmul;
    m.doc = "per item of axis `batch`: contract x's x_axis with y's y_axis; result axes named by out_order";
    r.add_op(std::move(m));
    r.add_generator<native::Backend>("BatchMatMul", build_matmul);
}

}  // namespace graft::ops
