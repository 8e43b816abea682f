// Linear: y = act(x . w + b), contracting one axis of x (Keras Dense, also TimeDistributed Dense).
#include "cpu/gemm/gemm.hpp"
#include "cpu/gemm/gemv.hpp"
#include "ops/legacy_families.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

namespace {

Outputs infer_linear(const Operator& op) {
    const Variable& x = in(op, "x");
    const Variable& w = in(op, "w");
    const Axis axis = op.attrs().get_axis("axis", op.describe());
    if (!x.order().has(axis)) shape_fail(op, "input " + x.describe() + " has no axis " + axis.name());
    if (w.order() != OrderCN) shape_fail(op, "weight " + w.describe() + " should be in order CN");
    const std::int64_t k = x.size(axis);
    if (w.shape()[0] != k)
        shape_fail(op, "weight " + w.describe() + " expects " + std::to_string(w.shape()[0]) + " input features, the input " +
                           x.describe() + " has " + std::to_string(k));
    const std::int64_t units = w.shape()[1];
    if (auto* b = op.input_or_null("b"); b && (b->order() != OrderC || b->shape()[0] != units))
        shape_fail(op, "bias " + b->describe() + " should be C [" + std::to_string(units) + "]");
    if (op.attrs().has("activation")) act_params(op, op.attr<std::string>("activation"));
    Order out = x.order().with_last(axis);
    Shape shape = x.shape_in(out);
    shape.back() = units;
    return {{"y", {out, shape}}};
}

std::optional<Order> order_linear(const Operator& op, const std::string& input) {
    if (input == "x") return op.input("x")->order().with_last(op.attrs().get_axis("axis", op.describe()));
    if (input == "w") return OrderCN;
    return OrderC;
}

std::unique_ptr<native::Kernel> build_linear(native::BuildContext& b) {
    const Operator& op = b.op();
    const Variable& w = *op.input("w");
    const std::int64_t K = w.shape()[0], N = w.shape()[1];
    const std::int64_t M = op.input("x")->numel() / K;
    auto act = act_params(op, op.attr_or<std::string>("activation", "linear"));
    auto x = b.in("x"), wt = b.in("w"), y = b.out("y");
    std::optional<native::Slot> bias;
    if (op.has_input("b")) bias = b.in("b");
    // Constant weights are packed once, here: for a single row into the matrix-vector layout
    // (gemv.hpp), else into the GEMM micro-kernels' panel layout.
    cpu::gemm::BMatrix packed;
    const float* row_packed = nullptr;
    if (w.is_constant()) {
        const auto& data = static_cast<const ConstantVariable&>(w).data();
        if (M == 1) {
            row_packed = b.keep(std::make_shared<const std::vector<float>>(cpu::gemm::gemv_pack(data.data(), N, K, N)));
        } else {
            packed.data = b.keep(std::make_shared<const std::vector<float>>(cpu::gemm::pack_b(data.data(), N, K, N)));
            packed.packed = true;
        }
    }
    return native::make_kernel([=](const native::RunContext& c) {
        cpu::gemm::Epilogue e;
        e.bias = bias ? c.at(*bias) : nullptr;
        e.act = &act;
        if (row_packed) {
            cpu::gemm::gemv(N, K, c.at(x), row_packed, c.at(y), e, c.pool);
            return;
        }
        cpu::gemm::BMatrix bm = packed;
        if (!bm.packed) bm.data = c.at(wt), bm.ld = N;
        cpu::gemm::gemm(M, N, K, c.at(x), K, bm, c.at(y), N, e, c.pool);
    });
}

}  // namespace

void register_linear(Registry& r) {
    OpSchema s;
    s.type = "Linear";
    s.inputs = {"x", "w", "b?"};
    s.infer = infer_linear;
    s.required_order = order_linear;
    s.activation_epilogue = true;
    s.doc = "y = act(x . w + b) over axis `axis` of x; w is CN [in, out]; optional fused activation";
    r.add_op(std::move(s));
    r.add_generator<native::Backend>("Linear", build_linear);
}

}  // namespace graft::ops
