#include "ops/op_util.hpp"

#include <limits>

namespace graft::ops {

namespace {
/// The activation named `fn` in graft's IR (graft_rt's table; "silu" is Keras' other name of swish).
bool find_activation(const std::string& fn, graft_rt::Act& kind) {
    const std::string name = fn == "silu" ? "swish" : fn;
#define GRAFT_ACT_LOOKUP(k, value) \
    if (name == #k) {                 \
        kind = graft_rt::Act::k;      \
        return true;                  \
    }
    GRAFT_RT_ACTIVATIONS(GRAFT_ACT_LOOKUP)
#undef GRAFT_ACT_LOOKUP
    return false;
}
}  // namespace

OpDef::OpDef(std::string type, std::vector<std::string> inputs, Infer infer, std::string doc) {
    s_.type = std::move(type);
    s_.inputs = std::move(inputs);
    s_.infer = std::move(infer);
    s_.doc = std::move(doc);
}

OpDef::OpDef(std::string type, Variadic v, Infer infer, std::string doc)
    : OpDef(std::move(type), std::vector<std::string>{}, std::move(infer), std::move(doc)) {
    s_.variadic = true;
    s_.min_inputs = v.min_inputs;
}

OpDef& OpDef::x_order(std::function<Order(const Operator&)> f) {
    s_.required_order = [f = std::move(f)](const Operator& op, const std::string& input) -> std::optional<Order> {
        if (input != "x") return std::nullopt;
        return f(op);
    };
    return *this;
}

OpDef& OpDef::x_order(Order o) {
    return x_order([o = std::move(o)](const Operator&) { return o; });
}

void OpDef::add(Registry& r, native::KernelBuilder build, cpp::Emitter emit) {
    const std::string type = s_.type;
    r.add_op(std::move(s_));
    r.add_generator<native::Backend>(type, std::move(build));
    r.add_generator<cpp::Backend>(type, std::move(emit));
}

std::vector<Axis> axes_attr(const Operator& op, const char* key) {
    std::vector<Axis> out;
    for (const auto& n : op.attr<std::vector<std::string>>(key)) out.emplace_back(n);
    return out;
}

Order axes_last(const Operator& op, const Variable& x, const std::vector<Axis>& axes) {
    std::vector<Axis> out;
    for (const auto& a : x.order().axes()) {
        bool listed = false;
        for (const auto& b : axes) listed = listed || a == b;
        if (!listed) out.push_back(a);
    }
    for (const auto& a : axes) {
        if (!x.order().has(a)) shape_fail(op, "input " + x.describe() + " has no axis " + a.name());
        out.push_back(a);
    }
    return Order(std::move(out));
}

std::optional<Order> order_of_x0(const Operator& op, const std::string&) { return op.inputs().at(0).second->order(); }

Order x_axes_last(const Operator& op) { return axes_last(op, in(op, "x"), axes_attr(op, "axes")); }

std::int64_t size_over(const Variable& x, const std::vector<Axis>& axes) {
    std::int64_t k = 1;
    for (const auto& a : axes) k *= x.size(a);
    return k;
}

void expect_params(const Operator& op, std::int64_t k, std::initializer_list<const char*> names) {
    for (const char* n : names)
        if (auto* v = op.input_or_null(n); v && v->numel() != k)
            shape_fail(op, std::string(n) + " " + v->describe() + " should hold " + std::to_string(k) + " values");
}

Outputs like_x(const Operator& op) {
    const Variable& x = in(op, "x");
    return {{"y", {x.order(), x.shape()}}};
}

Outputs like_x_in(const Operator& op, const Order& o) {
    const Variable& x = in(op, "x");
    return {{"y", {o, x.shape_in(o)}}};
}

std::optional<native::Slot> optional_in(native::BuildContext& b, const char* name) {
    if (!b.op().has_input(name)) return std::nullopt;
    return b.in(name);
}

std::unique_ptr<native::Kernel> build_copy(native::BuildContext& b) {
    const std::int64_t n = b.op().input("x")->numel();
    const auto x = b.in("x"), y = b.out("y");
    return native::make_kernel([=](const native::RunContext& c) { graft_rt::copy(c.at(x), c.at(y), n); });
}

void emit_copy(cpp::EmitContext& ctx) {
    ctx.use("core");
    ctx.comment("the memory plan usually gives y x's bytes; then there is nothing to copy");
    ctx.constant_i64("n", ctx.op().input("x")->numel(), "elements");
    ctx.line("graft_rt::copy({}, {}, n);", ctx.input("x"), ctx.output("y"));
}

bool is_known_activation(const std::string& fn) {
    graft_rt::Act kind;
    return find_activation(fn, kind);
}

cpu::ActParams act_params(const Operator& op, const std::string& fn) {
    cpu::ActParams p;
    if (!find_activation(fn, p.kind)) throw UnsupportedError(op.describe() + ": unknown activation '" + fn + "'");
    // Defaults where an attribute is absent: Keras' for elu, ONNX's for the ONNX functions.
    double alpha = 0.0, max_value = -1.0, threshold = 0.0;
    if (fn == "elu" || fn == "celu") alpha = 1.0;
    if (fn == "hard_sigmoid_general") alpha = 0.2, threshold = 0.5;
    if (fn == "shrink") alpha = 0.5;
    if (fn == "clip") alpha = -std::numeric_limits<float>::max(), max_value = std::numeric_limits<float>::max();
    p.alpha = static_cast<float>(op.attr_or<double>("alpha", alpha));
    p.max_value = static_cast<float>(op.attr_or<double>("max_value", max_value));
    p.threshold = static_cast<float>(op.attr_or<double>("threshold", threshold));
    return p;
}

Span conv_span(const Operator& op, std::int64_t in, std::int64_t k, std::int64_t stride, std::int64_t dilation,
               const std::string& padding) {
    // Every factor at most kMaxElements: the products and sums below stay far inside int64.
    checked::in_range(op.describe(), "stride", stride);
    const std::int64_t span = checked::conv_reach(op.describe(), k, dilation);
    if (in == kDynamic) {  // a free size: the output's is free too, known (and checked) per run
        if (padding != "valid" && padding != "same" && padding != "causal")
            throw UnsupportedError(op.describe() + ": padding '" + padding + "' (expected valid, same or causal)");
        return {kDynamic, padding == "causal" ? span - 1 : 0};
    }
    checked::in_range(op.describe(), "input size", in, 0);
    if (padding == "valid") {
        if (in < span)
            shape_fail(op, "input size " + std::to_string(in) + " is smaller than the kernel's reach " + std::to_string(span) +
                               " with 'valid' padding");
        return {(in - span) / stride + 1, 0};
    }
    if (padding == "same") {
        std::int64_t out = (in + stride - 1) / stride;
        std::int64_t total = std::max<std::int64_t>((out - 1) * stride + span - in, 0);
        return {out, total / 2};
    }
    if (padding == "causal") {
        return {(in - 1) / stride + 1, span - 1};
    }
    throw UnsupportedError(op.describe() + ": padding '" + padding + "' (expected valid, same or causal)");
}

Span explicit_span(const Operator& op, std::int64_t in, std::int64_t k, std::int64_t stride, std::int64_t dilation,
                   std::int64_t begin, std::int64_t end, bool ceil) {
    checked::in_range(op.describe(), "stride", stride);
    checked::in_range(op.describe(), "leading pad", begin, 0);
    checked::in_range(op.describe(), "trailing pad", end, 0);
    const std::int64_t span = checked::conv_reach(op.describe(), k, dilation);
    if (in == kDynamic) return {kDynamic, begin};  // a free size: the output's is free too, known per run
    checked::in_range(op.describe(), "input size", in, 0);
    const std::int64_t room = in + begin + end - span;
    if (room < 0)
        shape_fail(op, "input size " + std::to_string(in) + " with pads " + std::to_string(begin) + " + " + std::to_string(end) +
                           " is smaller than the kernel's reach " + std::to_string(span));
    std::int64_t out = (ceil ? (room + stride - 1) / stride : room / stride) + 1;
    if (ceil && (out - 1) * stride >= in + begin) --out;  // the last window would start in the trailing pad
    return {out, begin};
}

void check_rank(const Operator& op, std::size_t rank, int max, const std::string& what) {
    if (rank > static_cast<std::size_t>(max))
        throw UnsupportedError(op.describe() + ": " + what + " of rank " + std::to_string(rank) + " (at most " +
                               std::to_string(max) + ")");
}

}  // namespace graft::ops
