// The attention family (attention.hpp): the schema, native kernel builder and C++ emitter of
// Attention. The generated C++ runs graft_rt/attention.hpp; the native backend runs dot scores on
// the GEMM (cpu/attention.hpp), tanh scores through graft_rt too.
#include "ops/attention/attention.hpp"

#include "cpu/attention.hpp"
#include "cpu/threadpool.hpp"
#include "ops/emit_util.hpp"
#include "ops/families.hpp"
#include "ops/op_types.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

AttentionAttrs AttentionAttrs::parse(const Operator& op) {
    AttentionAttrs a;
    a.heads = op.attr<std::int64_t>("heads");
    if (a.heads < 1) shape_fail(op, "heads must be at least 1");
    const auto score = op.attr<std::string>("score");
    if (score != "dot" && score != "tanh")
        throw UnsupportedError(op.describe() + ": score '" + score + "' (expected dot or tanh)");
    a.score = score == "dot" ? graft_rt::AttentionScore::dot : graft_rt::AttentionScore::tanh;
    a.scale = static_cast<float>(op.attr<double>("scale"));
    a.causal = op.attr_or<bool>("causal", false);
    a.packed = op.attr_or<bool>("packed", false);
    return a;
}

graft_rt::AttentionParams AttentionAttrs::params(const Operator& op) const {
    const Variable& q = in(op, "q");
    const Variable& k = in(op, "k");
    const Variable& v = in(op, "v");
    for (const Variable* t : {&q, &k, &v}) expect_axes(op, *t, OrderNTC, "input");
    graft_rt::AttentionParams p;
    p.heads = heads;
    const std::int64_t qc = q.size(Axis::C), vc = v.size(Axis::C), parts = packed ? 3 : 1;
    p.b = q.size(Axis::N), p.tq = q.size(Axis::T), p.tv = k.size(Axis::T);
    if (qc % (parts * p.heads) || vc % (parts * p.heads))
        shape_fail(op, "features of " + q.describe() + " and " + v.describe() + " must split into " +
                           (packed ? "3 x " : "") + std::to_string(p.heads) + " heads");
    p.dk = qc / (parts * p.heads), p.dv = vc / (parts * p.heads);
    if (packed && vc != qc)
        shape_fail(op, "packed value " + v.describe() + " and query " + q.describe() + " differ in features");
    if (k.size(Axis::C) != qc)
        shape_fail(op, "key " + k.describe() + " and query " + q.describe() + " differ in features");
    if (v.size(Axis::T) != p.tv)
        shape_fail(op, "value " + v.describe() + " and key " + k.describe() + " differ in time steps");
    for (const Variable* t : {&k, &v})
        if (t->size(Axis::N) != p.b && t->size(Axis::N) != kDynamic && p.b != kDynamic)
            shape_fail(op, "input " + t->describe() + " and query " + q.describe() + " differ in batch");
    p.score = score;
    p.scale = scale;
    p.causal = causal;
    p.packed = packed;
    if (auto* a = op.input_or_null("a"); a && a->numel() != p.dk)
        shape_fail(op, "score weights " + a->describe() + " should hold " + std::to_string(p.dk) + " values");
    if (auto* m = op.input_or_null("vmask")) {
        expect_axes(op, *m, OrderNT, "value mask");
        if (m->size(Axis::T) != p.tv)
            shape_fail(op, "value mask " + m->describe() + " should have " + std::to_string(p.tv) + " steps");
    }
    return p;
}

namespace {

Outputs infer_attention(const Operator& op) {
    const auto p = AttentionAttrs::parse(op).params(op);
    return {{"y", {OrderNTC, {p.b, p.tq, p.heads * p.dv}}}};
}

std::unique_ptr<native::Kernel> build_attention(native::BuildContext& b) {
    const Operator& op = b.op();
    const auto p = AttentionAttrs::parse(op).params(op);
    auto q = b.in("q"), k = b.in("k"), v = b.in("v"), y = b.out("y");
    const auto a = optional_in(b, "a"), m = optional_in(b, "vmask");
    if (p.score == graft_rt::AttentionScore::dot) {  // on the GEMM, (batch, head) pairs over the threads
        const int max_tasks = cpu::ThreadPool::hardware_threads();
        auto work = b.workspace(static_cast<std::size_t>(cpu::attention_dot_floats(p) * max_tasks));
        return native::make_kernel([=](const native::RunContext& c) {
            cpu::attention_dot(c.at(q), c.at(k), c.at(v), at_or_null(c, m), c.at(y), p, c.at(work), max_tasks, c.pool);
        });
    }
    auto work = b.workspace(static_cast<std::size_t>(p.tv));
    return native::make_kernel([=](const native::RunContext& c) {
        graft_rt::attention(c.at(q), c.at(k), c.at(v), at_or_null(c, a), at_or_null(c, m), c.at(y), p, c.at(work));
    });
}

void emit_attention(cpp::EmitContext& ctx) {
    const Operator& op = ctx.op();
    const auto p = AttentionAttrs::parse(op).params(op);
    cpp::use(ctx, "attention");
    const std::string work = ctx.scratch(static_cast<std::size_t>(p.tv));
    cpp::emit_struct(ctx, "AttentionParams", "p",
                     {{"b, tq, tv, heads, dk, dv", cpp::csv({p.b, p.tq, p.tv, p.heads, p.dk, p.dv})},
                      {"score", p.score == graft_rt::AttentionScore::tanh ? "graft_rt::AttentionScore::tanh"
                                                                          : "graft_rt::AttentionScore::dot"},
                      {"scale", cpp::lit(p.scale)},
                      {"causal", cpp::lit(p.causal)},
                      {"packed", cpp::lit(p.packed)}});
    ctx.line("graft_rt::attention({}, {}, {}, {}, {}, {}, p, {});", ctx.input("q"), ctx.input("k"), ctx.input("v"),
             cpp::input_or_null(ctx, "a"), cpp::input_or_null(ctx, "vmask"), ctx.output("y"), work);
}

}  // namespace

void register_attention(Registry& r) {
    OpDef(kAttention, {"q", "k", "v", "a?", "vmask?"}, infer_attention,
          "multi-head attention core over q, k, v [batch, time, heads*features]; attrs heads, score dot|tanh, scale, "
          "causal, packed (q, k, v each hold queries, keys and values side by side)")
        .required_order([](const Operator&, const std::string& input) -> std::optional<Order> {
            if (input == "a") return std::nullopt;
            return input == "vmask" ? OrderNT : OrderNTC;
        })
        .add(r, build_attention, emit_attention);
}

}  // namespace graft::ops
