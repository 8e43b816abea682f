// Identity, Merge and Softmax (elementwise.hpp): schemas, native kernels and emitters (both call
// graft_rt's), and Merge's steps in a fused elementwise program.
#include "ops/elementwise/elementwise.hpp"

#include <algorithm>

#include "cpu/threadpool.hpp"
#include "cpu/vmath.hpp"
#include "graft_rt/softmax.hpp"
#include "ops/emit_util.hpp"
#include "ops/families.hpp"
#include "ops/fused/fused.hpp"
#include "ops/op_types.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

MergeAttrs MergeAttrs::parse(const Operator& op) {
    using graft_rt::MergeOp;
    const auto k = op.attr<std::string>("op");
    for (MergeOp m : {MergeOp::add, MergeOp::sub, MergeOp::mul, MergeOp::avg, MergeOp::max, MergeOp::min})
        if (k == graft_rt::merge_name(m)) return {m};
    throw UnsupportedError(op.describe() + ": merge '" + k + "' (expected add, sub, mul, avg, max or min)");
}

namespace {

using i64 = std::int64_t;

// ---- Merge ---------------------------------------------------------------------------------

Outputs infer_merge(const Operator& op) {
    const auto& ins = op.inputs();
    if (ins.empty()) shape_fail(op, "needs at least one input");
    if (MergeAttrs::parse(op).op == graft_rt::MergeOp::sub && ins.size() != 2)
        shape_fail(op, "subtract needs exactly 2 inputs, got " + std::to_string(ins.size()));
    const Variable& x0 = *ins[0].second;
    for (auto& [n, v] : ins) {
        if (!v->order().same_axes(x0.order()) || v->shape_in(x0.order()) != x0.shape()) {
            bool dyn_ok = v->order().same_axes(x0.order());
            if (dyn_ok) {  // a dynamic batch on one side only is fine
                auto s = v->shape_in(x0.order());
                for (std::size_t i = 0; i < s.size(); ++i)
                    if (s[i] != x0.shape()[i] && s[i] != kDynamic && x0.shape()[i] != kDynamic) dyn_ok = false;
            }
            if (!dyn_ok)
                shape_fail(op, "input '" + n + "' " + v->describe() + " does not match input '" + ins[0].first + "' " +
                                   x0.describe() + " (merges need equal shapes)");
        }
    }
    return {{"y", {x0.order(), x0.shape()}}};
}

std::unique_ptr<native::Kernel> build_merge(native::BuildContext& b) {
    const Operator& op = b.op();
    const auto kind = MergeAttrs::parse(op).op;
    std::vector<native::Slot> xs;
    for (auto& [n, v] : op.inputs()) xs.push_back(b.slot(v));
    const auto y = b.out("y");
    const i64 size = op.output("y")->numel();
    // Pointers are gathered per run into a small fixed array: no allocation in run().
    constexpr std::size_t kMax = 64;
    if (xs.size() > kMax) throw UnsupportedError(op.describe() + ": more than 64 merge inputs");
    return native::make_kernel([=](const native::RunContext& c) {
        // Ranges of whole 16-float groups split over the pool (y may be x0: in place per element).
        const i64 groups = (size + 15) / 16;
        cpu::parallel_ranges(c.pool, groups, size, cpu::kMinFloatsPerTask, [&](i64 g0, i64 g1) {
            const i64 first = g0 * 16, count = std::min(size, g1 * 16) - first;
            const float* ptrs[kMax];
            for (std::size_t i = 0; i < xs.size(); ++i) ptrs[i] = c.at(xs[i]) + first;
            graft_rt::merge(kind, ptrs, static_cast<int>(xs.size()), c.at(y) + first, count);
        });
    });
}

void emit_merge(cpp::EmitContext& ctx) {
    const Operator& op = ctx.op();
    const auto kind = MergeAttrs::parse(op).op;
    std::string xs;
    for (const auto& [port, v] : op.inputs()) xs += (xs.empty() ? "" : ", ") + ctx.input(port);
    cpp::use(ctx, "elementwise");
    ctx.comment("y may be x0's memory (in place): each element is read before it is written");
    ctx.constant_i64("n", op.output("y")->numel(), "elements");
    ctx.line("const float* const xs[] = {{{}}};", xs);
    ctx.line("graft_rt::merge(graft_rt::MergeOp::{}, xs, {}, {}, n);", graft_rt::merge_name(kind), op.inputs().size(),
             ctx.output("y"));
}

/// x0 (op) x1 (op) ...: one step per input after the first (avg: add, then a division).
std::optional<ElementwiseProgram> merge_program(const Operator& op) {
    const auto kind = MergeAttrs::parse(op).op;
    const auto& ins = op.inputs();
    if (ins.size() < 2 || (kind == graft_rt::MergeOp::sub && ins.size() != 2)) return std::nullopt;
    const std::string code = kind == graft_rt::MergeOp::avg ? "add" : graft_rt::merge_name(kind);
    fused::Program p;
    std::vector<ElementwiseProgram::Input> inputs;
    for (const auto& [port, v] : ins) {
        p.bcast.emplace_back();
        inputs.push_back({v, nullptr, ""});
    }
    const auto n = static_cast<std::int64_t>(ins.size());
    for (std::int64_t i = 1; i < n; ++i) p.steps.push_back({code, i == 1 ? 0 : n + i - 2, i, "", {0.0, 0.0, 0.0}});
    if (kind == graft_rt::MergeOp::avg) p.steps.push_back({"div", 2 * n - 2, -1, "", {static_cast<double>(n), 0.0, 0.0}});
    return fused::lowering(std::move(inputs), p);
}

// ---- Softmax -------------------------------------------------------------------------------

Axis softmax_axis(const Operator& op) { return op.attrs().get_axis("axis", op.describe()); }

Outputs infer_softmax(const Operator& op) {
    const Axis axis = softmax_axis(op);
    if (!in(op, "x").order().has(axis)) shape_fail(op, "input " + in(op, "x").describe() + " has no axis " + axis.name());
    return like_x(op);
}

std::unique_ptr<native::Kernel> build_softmax(native::BuildContext& b) {
    const auto sp = split_at(*b.op().input("x"), softmax_axis(b.op()));
    const auto x = b.in("x"), y = b.out("y");
    // Blocks of the outer axis split over the pool.
    const i64 block = sp.len * sp.inner;
    if (sp.inner == 1)  // the axis is the last: rows, with the vectorized exp
        return native::make_kernel([=](const native::RunContext& c) {
            cpu::parallel_ranges(c.pool, sp.outer, sp.outer * block, cpu::kMinRowFloatsPerTask, [&](i64 r0, i64 r1) {
                cpu::vmath::softmax_rows(c.at(x) + r0 * block, c.at(y) + r0 * block, r1 - r0, sp.len);
            });
        });
    return native::make_kernel([=](const native::RunContext& c) {
        cpu::parallel_ranges(c.pool, sp.outer, sp.outer * block, cpu::kMinRowFloatsPerTask, [&](i64 r0, i64 r1) {
            graft_rt::softmax(c.at(x) + r0 * block, c.at(y) + r0 * block, r1 - r0, sp.len, sp.inner);
        });
    });
}

void emit_softmax(cpp::EmitContext& ctx) {
    const Axis axis = softmax_axis(ctx.op());
    cpp::use(ctx, "softmax");
    cpp::emit_split(ctx, split_at(*ctx.op().input("x"), axis), axis);
    ctx.line("graft_rt::softmax({}, {}, outer, len, inner);", ctx.input("x"), ctx.output("y"));
}

}  // namespace

void register_elementwise(Registry& r) {
    OpDef(kIdentity, {"x"}, like_x, "y = x (inference no-ops: Dropout, noise layers); removed by the optimizer")
        .alias()
        .is_noop([](const Operator&) { return true; })
        .add(r, build_copy, emit_copy);
    OpDef(kMerge, Variadic{}, infer_merge,
          "elementwise add|sub|mul|avg|max|min (attr op) of inputs x0, x1, ... of one shape")
        .required_order(order_of_x0)
        .inplace()
        .is_noop([](const Operator& op) {
            return op.inputs().size() == 1 &&
                   op.attr_or<std::string>("op", "") != graft_rt::merge_name(graft_rt::MergeOp::sub);
        })
        .elementwise_program(merge_program)
        .add(r, build_merge, emit_merge);
    OpDef(kSoftmax, {"x"}, infer_softmax, "softmax along axis `axis`").inplace().add(r, build_softmax, emit_softmax);
}

}  // namespace graft::ops
