// The linear family (linear.hpp): Linear and BatchMatMul, their schemas, native kernel builders
// (the run-time dispatched GEMM / GEMV of cpu/gemm) and C++ emitters (graft_rt/linear.hpp).
#include "ops/linear/linear.hpp"

#include "cpu/gemm/gemm.hpp"
#include "cpu/gemm/gemv.hpp"
#include "cpu/gemm/qgemm.hpp"
#include "ops/emit_util.hpp"
#include "ops/families.hpp"
#include "ops/op_types.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

LinearAttrs LinearAttrs::parse(const Operator& op) {
    return {op.attrs().get_axis("axis", op.describe()), op.attr_or<std::string>("activation", "linear")};
}

MatMulDims LinearAttrs::dims(const Operator& op) const {
    const Variable& w = in(op, "w");
    MatMulDims d;
    d.k = w.shape()[0], d.n = w.shape()[1];
    d.m = d.k ? in(op, "x").numel() / d.k : 0;
    return d;
}

BatchMatMulAttrs BatchMatMulAttrs::parse(const Operator& op) {
    const Variable& x = in(op, "x");
    const Variable& y = in(op, "y");
    BatchMatMulAttrs m{op.attrs().get_axis("batch", op.describe()),
                       op.attrs().get_axis("x_axis", op.describe()),
                       op.attrs().get_axis("y_axis", op.describe()),
                       {},
                       {}};
    for (const Variable* v : {&x, &y})
        if (!v->order().has(m.batch)) shape_fail(op, "input " + v->describe() + " has no batch axis " + m.batch.name());
    if (!x.order().has(m.x_axis) || m.x_axis == m.batch)
        shape_fail(op, "input " + x.describe() + " has no axis " + m.x_axis.name() + " to contract");
    if (!y.order().has(m.y_axis) || m.y_axis == m.batch)
        shape_fail(op, "input " + y.describe() + " has no axis " + m.y_axis.name() + " to contract");
    // The free axes in the order the result lists them: attributes x_free / y_free (what the
    // converter saw), so that the result never depends on the memory order of an input. Without
    // them (descriptors written before graft 0.1's x_free), the inputs' memory order.
    auto free_axes = [&](const Variable& v, const Axis& contracted, const char* key) {
        std::vector<Axis> rest;
        for (const auto& a : v.order().axes())
            if (a != m.batch && a != contracted) rest.push_back(a);
        if (!op.attrs().has(key)) return rest;
        std::vector<Axis> listed;
        for (const auto& n : op.attr<std::vector<std::string>>(key)) listed.emplace_back(n);
        if (!Order(listed).same_axes(Order(rest)))
            shape_fail(op, std::string(key) + " " + Order(listed).str() + " should name the free axes " + Order(rest).str() +
                               " of " + v.describe());
        return listed;
    };
    m.x_rest = free_axes(x, m.x_axis, "x_free");
    m.y_rest = free_axes(y, m.y_axis, "y_free");
    if (x.size(m.x_axis) != y.size(m.y_axis))
        shape_fail(op, "contracted axes differ: " + x.describe() + " axis " + m.x_axis.name() + " vs " + y.describe() +
                           " axis " + m.y_axis.name());
    return m;
}

MatMulDims BatchMatMulAttrs::dims(const Operator& op) const {
    const Variable& x = in(op, "x");
    MatMulDims d;
    d.batch = x.size(batch), d.k = x.size(x_axis);
    const std::int64_t bk = d.batch * d.k;
    d.m = bk ? x.numel() / bk : 0, d.n = bk ? in(op, "y").numel() / bk : 0;
    return d;
}

namespace {

// ---- Linear -------------------------------------------------------------------------------------

Outputs infer_linear(const Operator& op) {
    const Variable& x = in(op, "x");
    const Variable& w = in(op, "w");
    const LinearAttrs a = LinearAttrs::parse(op);
    if (!x.order().has(a.axis)) shape_fail(op, "input " + x.describe() + " has no axis " + a.axis.name());
    if (w.order() != OrderCN) shape_fail(op, "weight " + w.describe() + " should be in order CN");
    const std::int64_t k = x.size(a.axis);
    if (w.shape()[0] != k)
        shape_fail(op, "weight " + w.describe() + " expects " + std::to_string(w.shape()[0]) +
                           " input features, the input " + x.describe() + " has " + std::to_string(k));
    const std::int64_t units = w.shape()[1];
    if (auto* b = op.input_or_null("b"); b && (b->order() != OrderC || b->shape()[0] != units))
        shape_fail(op, "bias " + b->describe() + " should be C [" + std::to_string(units) + "]");
    if (op.attrs().has("activation")) act_params(op, a.activation);
    Order out = x.order().with_last(a.axis);
    Shape shape = x.shape_in(out);
    shape.back() = units;
    if (const Variable* r = op.input_or_null("r"); r && (r->order() != out || r->shape() != shape))
        shape_fail(op, "residual " + r->describe() + " should have the output's order and shape");
    return {{"y", {out, shape}}};
}

std::optional<Order> order_linear(const Operator& op, const std::string& input) {
    if (input == "x" || input == "r") return op.input("x")->order().with_last(LinearAttrs::parse(op).axis);
    if (input == "w") return OrderCN;
    return OrderC;
}

std::unique_ptr<native::Kernel> build_linear(native::BuildContext& b) {
    const Operator& op = b.op();
    const LinearAttrs a = LinearAttrs::parse(op);
    const MatMulDims d = a.dims(op);
    const std::int64_t M = d.m, K = d.k, N = d.n;
    const Variable& w = *op.input("w");
    auto act = act_params(op, a.activation);
    auto x = b.in("x"), wt = b.in("w"), y = b.out("y");
    const auto bias = optional_in(b, "b"), res = optional_in(b, "r");  // r: added before the activation
    // Constant weights are packed once, here: for a single row into the matrix-vector layout
    // (gemv.hpp), else into the GEMM micro-kernels' panel layout.
    cpu::gemm::BMatrix packed;
    const float* row_packed = nullptr;
    const Precision lowp = b.precision();
    if (w.is_constant() && (lowp == Precision::bf16 || (lowp == Precision::int8 && K <= cpu::gemm::kQMaxK))) {
        // int8 or bf16 (cpu/gemm/qgemm.hpp): the weights quantised once, the rows at every run.
        const auto& cw = static_cast<const ConstantVariable&>(w);
        const auto qw = cpu::gemm::qview(cpu::gemm::qpack_shared(b, cw, K, N, lowp), K, N);
        const auto work = b.workspace(cpu::gemm::qgemm_work_floats(M, K));
        return native::make_kernel([=](const native::RunContext& c) {
            cpu::gemm::Epilogue e;
            e.bias = at_or_null(c, bias);
            e.residual = at_or_null(c, res), e.ldr = N;
            e.act = &act;
            cpu::gemm::qgemm(M, N, K, c.at(x), K, qw, c.at(y), N, e, c.at(work), c.pool);
        });
    }
    if (w.is_constant()) {
        const auto& cw = static_cast<const ConstantVariable&>(w);
        const std::string dims = std::to_string(N) + "x" + std::to_string(K);
        if (M == 1) {
            row_packed = b.keep_shared(cw, "gemv_pack " + dims, [&] { return cpu::gemm::gemv_pack(cw.data().data(), N, K, N); });
        } else {
            packed.data = b.keep_shared(cw, "pack_b " + dims, [&] { return cpu::gemm::pack_b(cw.data().data(), N, K, N); });
            packed.packed = true;
        }
    }
    return native::make_kernel([=](const native::RunContext& c) {
        cpu::gemm::Epilogue e;
        e.bias = at_or_null(c, bias);
        e.residual = at_or_null(c, res), e.ldr = N;
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

void emit_linear(cpp::EmitContext& ctx) {
    const Operator& op = ctx.op();
    const LinearAttrs a = LinearAttrs::parse(op);
    const MatMulDims d = a.dims(op);
    cpp::use(ctx, "linear");
    const std::string wp = cpp::packed_weight(ctx, "w", d.k, d.n);
    const std::string act = cpp::act_expr(ctx, a.activation);
    ctx.constant_i64("M", d.m, "rows: every position of x but the contracted axis");
    ctx.constant_i64("K", d.k, "input features");
    ctx.constant_i64("N", d.n, "units");
    ctx.line("graft_rt::dense({}, {}, {}, {}, M, K, N, {}, {});", ctx.input("x"), wp, cpp::input_or_null(ctx, "b"),
             ctx.output("y"), act, cpp::input_or_null(ctx, "r"));
}

// ---- BatchMatMul --------------------------------------------------------------------------------

Outputs infer_matmul(const Operator& op) {
    const BatchMatMulAttrs m = BatchMatMulAttrs::parse(op);
    const Variable& x = in(op, "x");
    const Variable& y = in(op, "y");
    auto out = op.attrs().get_order("out_order", op.describe());
    Shape s{x.size(m.batch)};
    for (const auto& a : m.x_rest) s.push_back(x.size(a));
    for (const auto& a : m.y_rest) s.push_back(y.size(a));
    if (out.ndim() != s.size())
        shape_fail(op, "out_order " + out.str() + " should have " + std::to_string(s.size()) + " axes");
    return {{"y", {out, s}}};
}

std::optional<Order> order_matmul(const Operator& op, const std::string& input) {
    const BatchMatMulAttrs m = BatchMatMulAttrs::parse(op);
    std::vector<Axis> o{m.batch};
    if (input == "x") {
        o.insert(o.end(), m.x_rest.begin(), m.x_rest.end());
        o.push_back(m.x_axis);
    } else {
        o.push_back(m.y_axis);
        o.insert(o.end(), m.y_rest.begin(), m.y_rest.end());
    }
    return Order(std::move(o));
}

std::unique_ptr<native::Kernel> build_matmul(native::BuildContext& b) {
    const MatMulDims d = BatchMatMulAttrs::parse(b.op()).dims(b.op());
    auto xs = b.in("x"), ys = b.in("y"), out = b.out("y");
    return native::make_kernel(
        [=](const native::RunContext& c) { cpu::batch_matmul(c.at(xs), c.at(ys), c.at(out), d.batch, d.m, d.k, d.n, c.pool); });
}

void emit_matmul(cpp::EmitContext& ctx) {
    const Operator& op = ctx.op();
    const BatchMatMulAttrs m = BatchMatMulAttrs::parse(op);
    const MatMulDims d = m.dims(op);
    cpp::use(ctx, "linear");
    const std::string work = ctx.scratch(static_cast<std::size_t>(cpp::packed_floats(d.k, d.n)));
    ctx.constant_i64("B", d.batch, "batch axis " + m.batch.name());
    ctx.constant_i64("M", d.m, "rows of x");
    ctx.constant_i64("K", d.k, "contracted: x's axis " + m.x_axis.name() + ", y's axis " + m.y_axis.name());
    ctx.constant_i64("N", d.n, "columns of y");
    ctx.line("graft_rt::batch_matmul({}, {}, {}, B, M, K, N, {});", ctx.input("x"), ctx.input("y"), ctx.output("y"),
             work);
}

}  // namespace

void register_linear(Registry& r) {
    OpDef(kLinear, {"x", "w", "b?", "r?"}, infer_linear,
          "y = act(x . w + b + r) over axis `axis` of x; w is CN [in, out]; optional fused residual r (the "
          "output's order and shape) and activation")
        .required_order(order_linear)
        .activation_epilogue()
        .folds_channel_scale()
        .add(r, build_linear, emit_linear);
    OpDef(kBatchMatMul, {"x", "y"}, infer_matmul,
          "per item of axis `batch`: contract x's x_axis with y's y_axis; result axes named by out_order")
        .required_order(order_matmul)
        .add(r, build_matmul, emit_matmul);
}

}  // namespace graft::ops
