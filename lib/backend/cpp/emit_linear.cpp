// C++ emitters: Linear (Keras Dense) and BatchMatMul, both on graft_rt::gemm.
#include "ops/emit_util.hpp"
#include "ops/legacy_families.hpp"

namespace graft::cpp {

namespace {

void emit_linear(EmitContext& ctx) {
    const Operator& op = ctx.op();
    const Variable& w = *op.input("w");
    const std::int64_t K = w.shape()[0], N = w.shape()[1];
    const std::int64_t M = K ? op.input("x")->numel() / K : 0;
    use(ctx, "dense");
    const std::string wp = packed_weight(ctx, "w", K, N);
    const std::string act = act_expr(ctx, fused_act(op));
    ctx.constant_i64("M", M, "rows: every position of x but the contracted axis");
    ctx.constant_i64("K", K, "input features");
    ctx.constant_i64("N", N, "units");
    ctx.line("graft_rt::dense({}, {}, {}, {}, M, K, N, {});", ctx.input("x"), wp, input_or_null(ctx, "b"), ctx.output("y"), act);
}

void emit_batch_matmul(EmitContext& ctx) {
    const Operator& op = ctx.op();
    const Variable& x = *op.input("x");
    const Variable& y = *op.input("y");
    const Axis batch = op.attrs().get_axis("batch", op.describe()), xk = op.attrs().get_axis("x_axis", op.describe());
    const std::int64_t B = x.size(batch), K = x.size(xk), BK = B * K;
    const std::int64_t M = BK ? x.numel() / BK : 0, N = BK ? y.numel() / BK : 0;
    use(ctx, "batch_matmul");
    const std::string work = ctx.scratch(static_cast<std::size_t>(packed_floats(K, N)));
    ctx.constant_i64("B", B, "batch axis " + batch.name());
    ctx.constant_i64("M", M, "rows of x");
    ctx.constant_i64("K", K, "contracted: x's axis " + xk.name() + ", y's axis " + op.attr<std::string>("y_axis"));
    ctx.constant_i64("N", N, "columns of y");
    ctx.line("graft_rt::batch_matmul({}, {}, {}, B, M, K, N, {});", ctx.input("x"), ctx.input("y"), ctx.output("y"), work);
}

}  // namespace

void register_linear_emitters(Registry& r) {
    r.add_generator<cpp::Backend>("Linear", emit_linear);
    r.add_generator<cpp::Backend>("BatchMatMul", emit_batch_matmul);
}

}  // namespace graft::cpp
