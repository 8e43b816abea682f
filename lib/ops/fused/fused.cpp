// FusedElementwise (see fused.hpp): the program's encoding, its checks, the op schema, the native
// generator (lib/cpu/fused.cpp evaluates the program block by block; large tensors are split over
// the session's thread pool) and the C++ emitter (the program as a constant for
// graft_rt::fused_elementwise).
#include "ops/fused/fused.hpp"

#include <algorithm>

#include "cpu/fused.hpp"
#include "cpu/threadpool.hpp"
#include "ops/emit_util.hpp"
#include "ops/families.hpp"
#include "ops/op_types.hpp"
#include "ops/op_util.hpp"

namespace graft::ops::fused {

namespace kern = graft_rt;

namespace {

using i64 = std::int64_t;

const std::pair<const char*, kern::FusedCode> kCodes[] = {
    {"add", kern::FusedCode::add}, {"sub", kern::FusedCode::sub},     {"mul", kern::FusedCode::mul},
    {"max", kern::FusedCode::max}, {"min", kern::FusedCode::min},     {"prelu", kern::FusedCode::prelu},
    {"div", kern::FusedCode::div}, {"act", kern::FusedCode::act},
};

const kern::FusedCode* find_code(const std::string& c) {
    for (const auto& [n, k] : kCodes)
        if (c == n) return &k;
    return nullptr;
}

bool is_binary(kern::FusedCode c) { return c != kern::FusedCode::div && c != kern::FusedCode::act; }

[[noreturn]] void bad(const std::string& owner, const std::string& msg) { throw GraphError(owner + ": " + msg); }

/// The axes of a broadcast spec ("A,B"); empty for "*".
std::vector<Axis> spec_axes(const std::string& spec) {
    std::vector<Axis> out;
    if (spec == "*") return out;
    std::size_t start = 0;
    while (start <= spec.size()) {
        auto end = spec.find(',', start);
        if (end == std::string::npos) end = spec.size();
        out.emplace_back(spec.substr(start, end - start));
        start = end + 1;
    }
    return out;
}

struct Geometry {
    i64 len = 1, inner = 1;  // inner is kDynamic when an axis after the broadcast ones is
};

/// Where a broadcast input's values go in y (order o, shape s); ShapeError naming the op.
Geometry geometry(const Operator& op, const std::string& port, const std::string& spec, const Order& o, const Shape& s) {
    Geometry g;
    const auto axes = spec_axes(spec);
    std::size_t next = 0;
    for (std::size_t k = 0; k < axes.size(); ++k) {
        const auto pos = o.find(axes[k]);
        if (!pos) shape_fail(op, "input '" + port + "' broadcasts along axis " + axes[k].name() + ", which y (" + o.str() + ") does not have");
        if (k > 0 && *pos != next)
            shape_fail(op, "input '" + port + "' broadcasts along axes " + spec + ", which are not adjacent in that order in y (" + o.str() + ")");
        if (s[*pos] == kDynamic) shape_fail(op, "input '" + port + "' broadcasts along axis " + axes[k].name() + ", which has no fixed size");
        g.len *= s[*pos];
        next = *pos + 1;
    }
    if (!axes.empty())
        for (std::size_t i = next; i < s.size(); ++i) g.inner = (g.inner == kDynamic || s[i] == kDynamic) ? kDynamic : g.inner * s[i];
    return g;
}

kern::ActParams act_of(const Operator& op, const Step& s) {
    Attributes a;
    a.set("activation", s.fn);
    a.set("alpha", s.params[0]);
    a.set("max_value", s.params[1]);
    a.set("threshold", s.params[2]);
    const Operator probe(op.type(), op.name(), {}, std::move(a));
    return act_params(probe, s.fn);
}

/// Block buffers the kernels need for `p` (decoded: within the limits on inputs and steps).
int buffers_needed(const Program& p) {
    kern::FusedProgram k;
    for (const auto& b : p.bcast) {
        kern::FusedOperand o;
        o.broadcast = !b.empty();
        k.add_input(o);
    }
    for (const auto& s : p.steps) {
        kern::FusedStep st;
        st.a = static_cast<int>(s.a);
        st.b = static_cast<int>(s.b);
        k.add_step(st);
    }
    return kern::fused_allocate(k);
}

/// The kernel program of a FusedElementwise op with concrete shapes (broadcast geometry resolved
/// against y's order, activation parameters, buffers allocated). ShapeError / UnsupportedError.
kern::FusedProgram compile(const Operator& op) {
    const Program p = decode(op);
    const Variable& y = *op.output("y");
    const auto& ins = op.inputs();
    if (ins.size() != p.bcast.size()) shape_fail(op, "the inputs do not match attribute bcast");
    kern::FusedProgram k;
    for (std::size_t i = 0; i < ins.size(); ++i) {
        kern::FusedOperand o;
        const Variable& v = *ins[i].second;
        if (p.bcast[i].empty()) {
            if (v.numel() != y.numel()) shape_fail(op, "input '" + ins[i].first + "' " + v.describe() + " does not match y " + y.describe());
        } else {
            const Geometry g = geometry(op, ins[i].first, p.bcast[i], y.order(), y.shape());
            if (v.numel() != g.len || g.inner == kDynamic) shape_fail(op, "input '" + ins[i].first + "' " + v.describe() + " does not fit bcast '" + p.bcast[i] + "'");
            o.broadcast = true;
            o.len = g.len;
            o.inner = g.inner;
        }
        k.add_input(o);
    }
    for (const Step& s : p.steps) {
        kern::FusedStep st;
        st.code = *find_code(s.code);
        st.a = static_cast<int>(s.a);
        st.b = static_cast<int>(s.b);
        if (st.code == kern::FusedCode::act) st.act = act_of(op, s);
        st.scalar = static_cast<float>(s.params[0]);
        k.add_step(st);
    }
    if (kern::fused_allocate(k) > kern::kFusedMaxBuffers)
        throw UnsupportedError(op.describe() + ": the program needs more than " + std::to_string(kern::kFusedMaxBuffers) + " block buffers");
    return k;
}

Outputs infer(const Operator& op) {
    const Program p = decode(op);
    const auto& ins = op.inputs();
    if (ins.size() != p.bcast.size())
        shape_fail(op, "has " + std::to_string(ins.size()) + " inputs but bcast describes " + std::to_string(p.bcast.size()));
    const int buffers = buffers_needed(p);
    if (buffers > kern::kFusedMaxBuffers)
        throw UnsupportedError(op.describe() + ": the program needs " + std::to_string(buffers) + " block buffers (at most " +
                               std::to_string(kern::kFusedMaxBuffers) + ")");
    if (!p.bcast[0].empty())
        shape_fail(op, "input x0 should have the output's shape (bcast '', the input y may overwrite), not bcast '" + p.bcast[0] + "'");
    const Variable& y = *ins[0].second;
    for (std::size_t i = 0; i < ins.size(); ++i) {
        const auto& [port, v] = ins[i];
        if (v->dtype() != DType::float32) shape_fail(op, "input '" + port + "' " + v->describe() + " is not float32");
        if (!p.bcast[i].empty()) {
            const Geometry g = geometry(op, port, p.bcast[i], y.order(), y.shape());
            if (v->numel() != g.len)
                shape_fail(op, "input '" + port + "' " + v->describe() + " should hold " + std::to_string(g.len) +
                                   " values (bcast '" + p.bcast[i] + "' of y " + y.describe() + ")");
            continue;
        }
        bool ok = v->order().same_axes(y.order());
        if (ok) {
            const auto s = v->shape_in(y.order());
            for (std::size_t k = 0; k < s.size(); ++k)
                ok = ok && (s[k] == y.shape()[k] || s[k] == kDynamic || y.shape()[k] == kDynamic);
        }
        if (!ok) shape_fail(op, "input '" + port + "' " + v->describe() + " does not match " + y.describe() + " (bcast '')");
    }
    return {{"y", {y.order(), y.shape()}}};
}

std::optional<Order> required_order(const Operator& op, const std::string& input) {
    const Program p = decode(op);
    const auto& ins = op.inputs();
    for (std::size_t i = 0; i < ins.size() && i < p.bcast.size(); ++i)
        if (ins[i].first == input) {
            if (!p.bcast[i].empty()) return std::nullopt;
            return ins[0].second->order();
        }
    return std::nullopt;
}

class FusedKernel final : public native::Kernel {
public:
    FusedKernel(kern::FusedProgram p, std::vector<native::Slot> xs, native::Slot y, i64 n)
        : p_(std::move(p)), xs_(std::move(xs)), y_(y), n_(n) {}

    void run(const native::RunContext& c) const override {
        Job j{&p_, {}, c.at(y_), n_, 0};
        for (std::size_t i = 0; i < xs_.size(); ++i) j.xs[i] = c.at(xs_[i]);
        const int threads = cpu::pool_size(c.pool);
        constexpr i64 kParallelMin = i64{1} << 15;  // below this, one thread is faster
        if (threads <= 1 || n_ < kParallelMin) {
            cpu::fused_eval(p_, j.xs, j.y, 0, n_);
            return;
        }
        const i64 blocks = (n_ + kern::kFusedBlock - 1) / kern::kFusedBlock;
        const i64 tasks = std::min<i64>(blocks, 4 * threads);
        j.chunk = (blocks + tasks - 1) / tasks * kern::kFusedBlock;
        const Job* jp = &j;  // one pointer: the std::function keeps it without allocating
        cpu::parallel_for(c.pool, (n_ + j.chunk - 1) / j.chunk, [jp](i64 t) {
            cpu::fused_eval(*jp->p, jp->xs, jp->y, t * jp->chunk, std::min(jp->n, (t + 1) * jp->chunk));
        });
    }

private:
    struct Job {
        const kern::FusedProgram* p;
        const float* xs[kern::kFusedMaxInputs];
        float* y;
        i64 n, chunk;
    };
    kern::FusedProgram p_;
    std::vector<native::Slot> xs_;
    native::Slot y_;
    i64 n_;
};

std::unique_ptr<native::Kernel> build(native::BuildContext& b) {
    const Operator& op = b.op();
    kern::FusedProgram p = compile(op);
    std::vector<native::Slot> xs;
    for (const auto& [n, v] : op.inputs()) xs.push_back(b.slot(v));
    return std::make_unique<FusedKernel>(std::move(p), std::move(xs), b.out("y"), op.output("y")->numel());
}

const char* code_name(kern::FusedCode c) {
    for (const auto& [n, k] : kCodes)
        if (k == c) return n;
    return "?";
}

/// The program as a constant of the generated code, evaluated by graft_rt::fused_elementwise
/// (the native kernel's evaluation order and block buffers).
void emit(cpp::EmitContext& ctx) {
    const Operator& op = ctx.op();
    const kern::FusedProgram p = compile(op);
    const auto bcast = op.attr<std::vector<std::string>>("bcast");
    std::string xs;
    for (const auto& [port, v] : op.inputs()) xs += (xs.empty() ? "" : ", ") + ctx.input(port);
    cpp::use(ctx, "fused");
    ctx.comment("y may be x0's memory (in place): every block reads its inputs before the last step writes y");
    ctx.constant_i64("n", op.output("y")->numel(), "elements");
    ctx.line("static constexpr graft_rt::FusedProgram p = {{");
    ctx.line("    {}, {}, {},  // inputs, steps, block buffers", p.n_inputs, p.n_steps, p.buffers);
    for (int i = 0; i < p.n_inputs; ++i) {
        const auto& in = p.inputs[i];
        ctx.line("    {}{{{}, {}, {}, {}}}{}  // {}{}", i == 0 ? "{" : " ", cpp::lit(in.broadcast), in.len, in.inner, in.buffer,
                 i + 1 == p.n_inputs ? "}," : ",", op.inputs()[static_cast<std::size_t>(i)].first,
                 in.broadcast ? ": bcast " + bcast[static_cast<std::size_t>(i)] : std::string());
    }
    for (int s = 0; s < p.n_steps; ++s) {
        const auto& st = p.steps[s];
        ctx.line("    {}{{graft_rt::FusedCode::{}, {}, {}, {}, {}, {}}}{}  // step {}: value {}", s == 0 ? "{" : " ", code_name(st.code), st.a,
                 st.b, cpp::act_literal(ctx, st.act), cpp::lit(st.scalar), st.buffer, s + 1 == p.n_steps ? "}};" : ",",
                 s, p.n_inputs + s);
    }
    ctx.line("const float* const xs[] = {{{}}};", xs);
    ctx.line("graft_rt::fused_elementwise(p, xs, {}, 0, n);", ctx.output("y"));
}

std::optional<ElementwiseProgram> itself(const Operator& op) {
    std::vector<ElementwiseProgram::Input> ins;
    for (const auto& [port, v] : op.inputs()) ins.push_back({v, nullptr, ""});
    return ElementwiseProgram{std::move(ins), op.attrs()};
}

}  // namespace

Attributes encode(const Program& p) {
    Attributes a;
    std::vector<std::string> steps, fns;
    std::vector<std::int64_t> args;
    std::vector<double> params;
    for (const Step& s : p.steps) {
        steps.push_back(s.code);
        fns.push_back(s.fn);
        args.push_back(s.a);
        args.push_back(s.b);
        params.insert(params.end(), s.params.begin(), s.params.end());
    }
    a.set("bcast", p.bcast);
    a.set("steps", std::move(steps));
    a.set("args", std::move(args));
    a.set("fns", std::move(fns));
    a.set("params", std::move(params));
    return a;
}

Program decode(const Attributes& a, const std::string& owner) {
    Program p;
    p.bcast = a.get<std::vector<std::string>>("bcast", owner);
    const auto steps = a.get<std::vector<std::string>>("steps", owner);
    const auto args = a.get<std::vector<std::int64_t>>("args", owner);
    const auto fns = a.get<std::vector<std::string>>("fns", owner);
    const auto params = a.get<std::vector<double>>("params", owner);
    const std::size_t n = steps.size();
    if (n == 0 || n > static_cast<std::size_t>(kern::kFusedMaxSteps))
        bad(owner, std::to_string(n) + " steps (expected 1 to " + std::to_string(kern::kFusedMaxSteps) + ")");
    if (p.bcast.empty() || p.bcast.size() > static_cast<std::size_t>(kern::kFusedMaxInputs))
        bad(owner, std::to_string(p.bcast.size()) + " inputs in bcast (expected 1 to " + std::to_string(kern::kFusedMaxInputs) + ")");
    if (args.size() != 2 * n || fns.size() != n || params.size() != 3 * n)
        bad(owner, "attributes args, fns and params should hold 2, 1 and 3 entries per step (" + std::to_string(n) + " steps)");
    const auto n_in = static_cast<std::int64_t>(p.bcast.size());
    for (std::size_t s = 0; s < n; ++s) {
        Step st;
        st.code = steps[s];
        st.a = args[2 * s];
        st.b = args[2 * s + 1];
        st.fn = fns[s];
        st.params = {params[3 * s], params[3 * s + 1], params[3 * s + 2]};
        const kern::FusedCode* code = find_code(st.code);
        if (!code) bad(owner, "step " + std::to_string(s) + ": unknown opcode '" + st.code + "'");
        const std::int64_t limit = n_in + static_cast<std::int64_t>(s);  // inputs and earlier steps
        const std::string where = "step " + std::to_string(s) + " (" + st.code + ")";
        if (st.a < 0 || st.a >= limit) bad(owner, where + ": operand " + std::to_string(st.a) + " is not an input or an earlier step");
        if (is_binary(*code) ? (st.b < 0 || st.b >= limit) : st.b != -1)
            bad(owner, where + ": second operand " + std::to_string(st.b) + (is_binary(*code) ? " is not an input or an earlier step" : " should be -1"));
        if (*code == kern::FusedCode::act ? !is_known_activation(st.fn) : !st.fn.empty())
            bad(owner, where + ": activation name '" + st.fn + "'" + (*code == kern::FusedCode::act ? " is unknown" : " on a step that is no act"));
        p.steps.push_back(std::move(st));
    }
    return p;
}

ElementwiseProgram lowering(std::vector<ElementwiseProgram::Input> inputs, const Program& p) {
    return {std::move(inputs), encode(p)};
}

}  // namespace graft::ops::fused

namespace graft::ops {

void register_fused(Registry& r) {
    OpDef(kFusedElementwise, Variadic{}, fused::infer,
          "elementwise ops fused by the optimizer: a program (attrs bcast, steps, args, fns, params) over inputs "
          "x0, x1, ...")
        .required_order(fused::required_order)
        .inplace()
        .elementwise_program(fused::itself)
        .add(r, fused::build, fused::emit);
}

}  // namespace graft::ops
