// C++ emitters: Embedding, NonZeroMask and Masking (Keras masks).
#include "ops/emit_util.hpp"
#include "ops/legacy_families.hpp"

namespace graft::cpp {

namespace {

void emit_embedding(EmitContext& ctx) {
    const Operator& op = ctx.op();
    const Variable& t = *op.input("table");
    use(ctx, "embedding");
    ctx.constant_i64("M", op.input("x")->numel(), "indices");
    ctx.constant_i64("V", t.shape()[0], "vocabulary");
    ctx.constant_i64("D", t.shape()[1], "features");
    ctx.line("graft_rt::embedding({}, {}, {}, M, V, D);", ctx.input("x"), ctx.input("table"), ctx.output("y"));
}

void emit_nonzero_mask(EmitContext& ctx) {
    use(ctx, "masks");
    ctx.constant_i64("n", ctx.op().input("x")->numel(), "elements");
    ctx.line("graft_rt::nonzero_mask({}, {}, n);", ctx.input("x"), ctx.output("mask"));
}

void emit_masking(EmitContext& ctx) {
    const Operator& op = ctx.op();
    const Axis axis = op.attrs().get_axis("axis", op.describe());
    const auto s = ops::split_at(*op.input("x"), axis);  // the axis is last (the op's required order)
    use(ctx, "masks");
    ctx.constant_i64("M", s.outer, "rows");
    ctx.constant_i64("K", s.len, "features (axis " + axis.name() + ")");
    ctx.constant_f32("mask_value", static_cast<float>(op.attr<double>("mask_value")));
    ctx.line("graft_rt::masking({}, {}, {}, M, K, mask_value);", ctx.input("x"), ctx.output("y"), ctx.output("mask"));
}

}  // namespace

void register_embedding_emitters(Registry& r) {
    r.add_generator<cpp::Backend>("Embedding", emit_embedding);
    r.add_generator<cpp::Backend>("NonZeroMask", emit_nonzero_mask);
    r.add_generator<cpp::Backend>("Masking", emit_masking);
}

}  // namespace graft::cpp
