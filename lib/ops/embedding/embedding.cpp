// The embedding family (embedding.hpp): schemas, native kernel builders and C++ emitters of
// Embedding, NonZeroMask and Masking. Both backends run graft_rt/embedding.hpp.
#include "ops/embedding/embedding.hpp"

#include "graft_rt/embedding.hpp"
#include "ops/emit_util.hpp"
#include "ops/families.hpp"
#include "ops/op_types.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

EmbeddingAttrs EmbeddingAttrs::parse(const Operator& op) { return {op.attrs().get_axis("axis", op.describe())}; }

EmbeddingAttrs::Lookup EmbeddingAttrs::lookup(const Operator& op) {
    const Variable& t = in(op, "table");
    return {in(op, "x").numel(), t.shape()[0], t.shape()[1]};
}

MaskingAttrs MaskingAttrs::parse(const Operator& op) {
    return {op.attrs().get_axis("axis", op.describe()), static_cast<float>(op.attr<double>("mask_value"))};
}

MaskingAttrs::Rows MaskingAttrs::rows(const Variable& x) const {
    const auto s = split_at(x, axis);  // the axis is last (the op's required order)
    return {s.outer, s.len};
}

namespace {

// ---- schemas ----------------------------------------------------------------------------------

Outputs infer_embedding(const Operator& op) {
    const Variable& x = in(op, "x");
    const Variable& t = in(op, "table");
    if (t.order() != OrderCN || !t.is_constant())
        shape_fail(op, "table " + t.describe() + " should be a constant in order CN");
    const Axis axis = EmbeddingAttrs::parse(op).axis;
    if (x.order().has(axis)) shape_fail(op, "input " + x.describe() + " already has axis " + axis.name());
    std::vector<Axis> axes = x.order().axes();
    axes.push_back(axis);
    Shape s = x.shape();
    s.push_back(t.shape()[1]);
    return {{"y", {Order(std::move(axes)), s}}};
}

Outputs infer_nonzero_mask(const Operator& op) {
    const Variable& x = in(op, "x");
    return {{"mask", {x.order(), x.shape()}}};
}

Outputs infer_masking(const Operator& op) {
    const Variable& x = in(op, "x");
    const auto a = MaskingAttrs::parse(op);
    if (!x.order().has(a.axis)) shape_fail(op, "input " + x.describe() + " has no axis " + a.axis.name());
    std::vector<Axis> axes;
    Shape s;
    for (std::size_t i = 0; i < x.ndim(); ++i)
        if (x.order()[i] != a.axis) axes.push_back(x.order()[i]), s.push_back(x.shape()[i]);
    const Order o = a.order(x);
    return {{"y", {o, x.shape_in(o)}}, {"mask", {Order(std::move(axes)), s}}};
}

// ---- native kernels ---------------------------------------------------------------------------

std::unique_ptr<native::Kernel> build_embedding(native::BuildContext& b) {
    const auto l = EmbeddingAttrs::lookup(b.op());
    auto x = b.in("x"), table = b.in("table"), y = b.out("y");
    return native::make_kernel(
        [=](const native::RunContext& c) { graft_rt::embedding(c.at(x), c.at(table), c.at(y), l.m, l.v, l.d); });
}

std::unique_ptr<native::Kernel> build_nonzero_mask(native::BuildContext& b) {
    const auto n = b.op().input("x")->numel();
    auto x = b.in("x"), m = b.out("mask");
    return native::make_kernel([=](const native::RunContext& c) { graft_rt::nonzero_mask(c.at(x), c.at(m), n); });
}

std::unique_ptr<native::Kernel> build_masking(native::BuildContext& b) {
    const auto a = MaskingAttrs::parse(b.op());
    const auto r = a.rows(*b.op().input("x"));
    auto x = b.in("x"), y = b.out("y"), m = b.out("mask");
    return native::make_kernel(
        [=](const native::RunContext& c) { graft_rt::masking(c.at(x), c.at(y), c.at(m), r.m, r.k, a.mask_value); });
}

// ---- C++ emitters -----------------------------------------------------------------------------

void emit_embedding(cpp::EmitContext& ctx) {
    const auto l = EmbeddingAttrs::lookup(ctx.op());
    cpp::use(ctx, "embedding");
    ctx.constant_i64("M", l.m, "indices");
    ctx.constant_i64("V", l.v, "vocabulary");
    ctx.constant_i64("D", l.d, "features");
    ctx.line("graft_rt::embedding({}, {}, {}, M, V, D);", ctx.input("x"), ctx.input("table"), ctx.output("y"));
}

void emit_nonzero_mask(cpp::EmitContext& ctx) {
    cpp::use(ctx, "embedding");
    ctx.constant_i64("n", ctx.op().input("x")->numel(), "elements");
    ctx.line("graft_rt::nonzero_mask({}, {}, n);", ctx.input("x"), ctx.output("mask"));
}

void emit_masking(cpp::EmitContext& ctx) {
    const auto a = MaskingAttrs::parse(ctx.op());
    const auto r = a.rows(*ctx.op().input("x"));
    cpp::use(ctx, "embedding");
    ctx.constant_i64("M", r.m, "rows");
    ctx.constant_i64("K", r.k, "features (axis " + a.axis.name() + ")");
    ctx.constant_f32("mask_value", a.mask_value);
    ctx.line("graft_rt::masking({}, {}, {}, M, K, mask_value);", ctx.input("x"), ctx.output("y"), ctx.output("mask"));
}

}  // namespace

void register_embedding(Registry& r) {
    OpDef(kEmbedding, {"x", "table"}, infer_embedding,
          "y[..., :] = table[int(x[...]), :] (zeros for an index outside [0, V) or NaN); new last axis `axis`")
        .add(r, build_embedding, emit_embedding);
    OpDef(kNonZeroMask, {"x"}, infer_nonzero_mask, "mask = (x != 0) as 1/0 (Keras Embedding mask_zero)")
        .add(r, build_nonzero_mask, emit_nonzero_mask);
    OpDef(kMasking, {"x"}, infer_masking,
          "Keras Masking: rows (along `axis`) all equal to mask_value become 0; mask = 1 where a row is kept")
        .x_order([](const Operator& op) { return MaskingAttrs::parse(op).order(in(op, "x")); })
        .add(r, build_masking, emit_masking);
}

}  // namespace graft::ops
