// Gemm and MatMul: graft's Linear (the GEMM / GEMV kernels) for one matrix (a constant one
// rearranged to Linear's w CN [in, out] now, alpha and a per-column C folded in), BatchMatMul
// for batches of matrices computed when the model runs.
#include <algorithm>

#include "frontend/onnx/ops/ops.hpp"
#include "ops/op_types.hpp"

namespace graft::onnx {

namespace {

/// `m` (2-D, [rows, cols]) as [cols, rows].
std::vector<float> transposed(const std::vector<float>& m, std::int64_t rows, std::int64_t cols) {
    std::vector<float> t(m.size());
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < cols; ++c) t[static_cast<std::size_t>(c * rows + r)] = m[static_cast<std::size_t>(r * cols + c)];
    return t;
}

}  // namespace

Value linear(NodeContext& ctx, const Value& x, std::vector<float> w, std::int64_t K, std::int64_t N, std::vector<float> bias) {
    const Axis ax = x.logical[x.logical.ndim() - 1];
    if (x.var->size(ax) != K)
        ctx.fail_shape("input " + x.var->describe() + " has " + std::to_string(x.var->size(ax)) + " features, the matrix " + std::to_string(K));
    NamedVars ins{{"x", x.var}, {"w", ctx.constant(ctx.layer_name() + "/w", OrderCN, {K, N}, std::move(w))}};
    if (!bias.empty()) ins.emplace_back("b", ctx.constant(ctx.layer_name() + "/b", OrderC, {N}, std::move(bias)));
    Attributes a;
    a.set("axis", ax);
    return emit(ctx, ops::kLinear, std::move(ins), std::move(a), x.logical);
}

namespace {

void gemm(NodeContext& ctx) {
    expect_inputs(ctx, 2, 3);
    const auto& c = ctx.config();
    const double alpha = c.get_float("alpha", 1.0), beta = c.get_float("beta", 1.0);
    Value x = ctx.input(0);
    if (x.logical.ndim() != 2) ctx.fail_shape("A has rank " + std::to_string(x.logical.ndim()) + ", expected 2");
    if (c.get_int("transA", 0) != 0) x.logical = Order{x.logical[1], x.logical[0]};  // A^T: the dimensions renamed
    const bool tb = c.get_int("transB", 0) != 0;
    const HostTensor* B = ctx.known(1);
    const HostTensor* C = ctx.has_input(2) ? ctx.known(2) : nullptr;
    bool c_done = !ctx.has_input(2);  // C is applied (or there is none)
    Value y;
    if (B) {
        if (B->shape.size() != 2) ctx.fail_shape("B has shape " + shape_str(B->shape) + ", expected 2-D");
        const std::int64_t K = tb ? B->shape[1] : B->shape[0];
        const std::int64_t N = tb ? B->shape[0] : B->shape[1];
        std::vector<float> w = tb ? transposed(B->floats(), B->shape[0], B->shape[1]) : B->floats();
        for (auto& v : w) v = static_cast<float>(v * alpha);
        // A constant C of one value per column (or a scalar) is Linear's bias.
        std::vector<float> bias;
        if (C && (numel(C->shape) == 1 || (numel(C->shape) == N && (C->shape.size() == 1 || C->shape[0] == 1)))) {
            const auto cv = C->floats();
            for (std::int64_t j = 0; j < N; ++j) bias.push_back(static_cast<float>(beta * cv[cv.size() == 1 ? 0 : static_cast<std::size_t>(j)]));
            c_done = true;
        }
        y = linear(ctx, x, std::move(w), K, N, std::move(bias));
    } else {
        // B computed when the model runs: Linear reads w as [in, out] by name (C, N); the
        // optimizer transposes it.
        const Value& b = ctx.input(1);
        if (b.logical.ndim() != 2) ctx.fail_shape("B has rank " + std::to_string(b.logical.ndim()) + ", expected 2");
        Variable* w = laid_out(ctx, b, tb ? OrderNC : OrderCN, OrderCN, "w");
        Attributes a;
        a.set("axis", x.logical[1]);
        y = emit(ctx, ops::kLinear, {{"x", x.var}, {"w", w}}, std::move(a), x.logical);
        if (alpha != 1.0) y = binary(ctx, "Mul", y, scalar(ctx, static_cast<float>(alpha), "alpha"), "alpha");
    }
    if (!c_done && beta != 0.0) {
        Value cv = ctx.input(2);
        if (beta != 1.0) cv = binary(ctx, "Mul", cv, scalar(ctx, static_cast<float>(beta), "beta"), "beta");
        y = binary(ctx, "Add", y, cv, "c");
    }
    ctx.set_outputs({y});
}

void matmul(NodeContext& ctx) {
    expect_inputs(ctx, 2, 2);
    const Value& x = ctx.input(0);
    const HostTensor* B = ctx.known(1);
    if (x.logical.ndim() < 2) ctx.fail_unsupported("a rank-1 left-hand side");
    if (B && B->shape.size() == 2) return ctx.set_outputs({linear(ctx, x, B->floats(), B->shape[0], B->shape[1], {})});
    const Value& y = ctx.input(1);
    if (y.logical.ndim() < 2) ctx.fail_unsupported("a rank-1 right-hand side");
    if (y.logical.ndim() == 2) {  // one matrix for every row of x: Linear with a runtime w (C, N by name)
        Variable* w = laid_out(ctx, y, OrderCN, OrderCN, "w");
        Attributes a;
        a.set("axis", x.logical[x.logical.ndim() - 1]);
        return ctx.set_outputs({emit(ctx, ops::kLinear, {{"x", x.var}, {"w", w}}, std::move(a), x.logical)});
    }
    // Batches of matrices: both as [B, M, K] and [B, K, N] (B the batch dimensions flattened),
    // graft's BatchMatMul, and the result viewed with the batch dimensions again.
    const Shape xs = logical_shape(x), ys = logical_shape(y);
    if (xs.size() != ys.size() || !std::equal(xs.begin(), xs.end() - 2, ys.begin()))
        ctx.fail_unsupported("batch dimensions that differ (" + shape_str(xs) + " x " + shape_str(ys) + "); graft multiplies batches of one shape");
    std::int64_t batch = 1;
    for (std::size_t i = 0; i + 2 < xs.size(); ++i) batch = (batch == kDynamic || xs[i] == kDynamic) ? kDynamic : batch * xs[i];
    const std::int64_t M = xs[xs.size() - 2], K = xs.back(), N = ys.back();
    const Value x3 = reshape(ctx, x, {batch, M, K}, "x3"), y3 = reshape(ctx, y, {batch, K, N}, "y3");
    const Value r = batch_matmul(ctx, x3, y3);
    Shape out(xs.begin(), xs.end() - 1);
    out.push_back(N);
    ctx.set_outputs({reshape(ctx, r, out, "unbatch")});
}

}  // namespace

Value batch_matmul(NodeContext& ctx, const Value& x3, const Value& y3, const std::string& suffix) {
    // x3 [N, C, T] = [B, M, K], y3 [N, C, T] = [B, K, N]: contract x's T with y's C.
    Attributes a;
    a.set("batch", Axis::N);
    a.set("x_axis", Axis::T);
    a.set("y_axis", Axis::C);
    a.set("out_order", OrderNCT);
    a.set("x_free", std::vector<std::string>{"C"});
    a.set("y_free", std::vector<std::string>{"T"});
    return emit(ctx, ops::kBatchMatMul, {{"x", x3.var}, {"y", y3.var}}, std::move(a), OrderNCT, suffix);
}

void register_linear(Registry& r) {
    add(r, "Gemm", gemm);
    add(r, "MatMul", matmul);
}

}  // namespace graft::onnx
