// The Activation op: schema, native kernel (cpu::activate: sigmoid and tanh vectorized, the rest
// graft_rt::activation), emitter, and its step in a fused elementwise program.
#include "ops/activation/activation.hpp"

#include "ops/emit_util.hpp"
#include "ops/families.hpp"
#include "ops/fused/fused.hpp"
#include "ops/op_types.hpp"
#include "ops/op_util.hpp"

namespace graft::ops {

graft_rt::ActParams activation_of(const Operator& op) { return act_params(op, op.attr<std::string>("activation")); }

namespace {

Outputs infer_activation(const Operator& op) {
    activation_of(op);  // UnsupportedError for an unknown activation
    return like_x(op);
}

std::unique_ptr<native::Kernel> build_activation(native::BuildContext& b) {
    const auto p = activation_of(b.op());
    const auto n = b.op().input("x")->numel();
    const auto x = b.in("x"), y = b.out("y");
    return native::make_kernel([=](const native::RunContext& c) { cpu::activate(c.at(x), c.at(y), n, p); });
}

void emit_activation(cpp::EmitContext& ctx) {
    const Operator& op = ctx.op();
    const std::string act = cpp::act_literal(ctx, activation_of(op));
    ctx.constant_i64("n", op.input("x")->numel(), "elements");
    ctx.line("graft_rt::activation({}, {}, n, {});", ctx.input("x"), ctx.output("y"), act);
}

std::optional<ElementwiseProgram> activation_program(const Operator& op) {
    const auto p = activation_of(op);
    fused::Program prog;
    prog.bcast = {""};
    prog.steps = {{"act", 0, -1, op.attr<std::string>("activation"), {p.alpha, p.max_value, p.threshold}}};
    return fused::lowering({{op.input("x"), nullptr, ""}}, prog);
}

}  // namespace

void register_activation(Registry& r) {
    OpDef(kActivation, {"x"}, infer_activation,
          "y = f(x) elementwise; attrs activation (name), alpha, max_value, threshold")
        .inplace()
        .is_noop([](const Operator& op) { return op.attr_or<std::string>("activation", "") == "linear"; })
        .elementwise_program(activation_program)
        .add(r, build_activation, emit_activation);
}

}  // namespace graft::ops
