// Helpers shared by the built-in op families (schemas and native generators).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cpu/kernels.hpp"
#include "graft/backend/cpp_emit.hpp"
#include "graft/backend/native_kernel.hpp"
#include "graft/registry.hpp"

namespace graft::ops {

/// y = x for ops whose output is their input's bytes (Identity, Reshape): the memory plan usually
/// gives y x's bytes, and then there is nothing to copy. A kernel builder and its emitter.
std::unique_ptr<native::Kernel> build_copy(native::BuildContext& b);
void emit_copy(cpp::EmitContext& ctx);

/// Inputs named x0, x1, ... (OpSchema::variadic), at least `min_inputs` of them.
struct Variadic {
    std::size_t min_inputs = 1;
};

/// One op type of a built-in family, described and registered in one statement: the schema's
/// common fields (type, inputs, inference, doc) in the constructor, its traits by name, then `add`
/// files the schema with the op's kernel builder (native backend) and emitter (cpp backend):
///
///     OpDef(kSoftmax, {"x"}, infer_softmax, "softmax along axis `axis`")
///         .inplace()
///         .add(r, build_softmax, emit_softmax);
///
/// Every setter sets the OpSchema field of its name (graft/registry.hpp says what each means);
/// x_order is the one shorthand, for the common case of an op that constrains only its input x.
class OpDef {
public:
    using Infer = decltype(OpSchema::infer);
    using RequiredOrder = decltype(OpSchema::required_order);
    using NoopTest = decltype(OpSchema::is_noop);
    using Lowering = decltype(OpSchema::elementwise_program);

    /// Named inputs, in their usual order; a name ending in '?' is optional.
    OpDef(std::string type, std::vector<std::string> inputs, Infer infer, std::string doc);
    /// Inputs x0, x1, ...
    OpDef(std::string type, Variadic v, Infer infer, std::string doc);

    OpDef& required_order(RequiredOrder f) { return set(s_.required_order, std::move(f)); }
    /// Input x must be in the order `f(op)`; any other input may be in any order.
    OpDef& x_order(std::function<Order(const Operator&)> f);
    /// Input x must be in order `o`; any other input may be in any order.
    OpDef& x_order(Order o);
    OpDef& inplace(bool on = true) { return set(s_.inplace, on); }
    OpDef& alias(bool on = true) { return set(s_.alias, on); }
    OpDef& activation_epilogue(bool on = true) { return set(s_.activation_epilogue, on); }
    OpDef& folds_channel_scale(bool on = true) { return set(s_.folds_channel_scale, on); }
    OpDef& is_noop(NoopTest f) { return set(s_.is_noop, std::move(f)); }
    OpDef& elementwise_program(Lowering f) { return set(s_.elementwise_program, std::move(f)); }
    /// These inputs may hold integer or bool values (OpSchema::integer_inputs).
    OpDef& integer_inputs(std::set<std::string> ports) { return set(s_.integer_inputs, std::move(ports)); }

    /// Registers the schema, `build` and `emit` under the op type (RegistryError if it is taken).
    void add(Registry& r, native::KernelBuilder build, cpp::Emitter emit);

private:
    template <class T>
    OpDef& set(T& field, T value) {
        field = std::move(value);
        return *this;
    }

    OpSchema s_;
};

/// The slot of the optional input `name` if the op has it, else nullopt.
std::optional<native::Slot> optional_in(native::BuildContext& b, const char* name);
/// Where an optional input or output is while a kernel runs: null when the op has none.
inline float* at_or_null(const native::RunContext& c, const std::optional<native::Slot>& s) {
    return s ? c.at(*s) : nullptr;
}

using Outputs = std::vector<std::pair<std::string, TensorType>>;

[[noreturn]] inline void shape_fail(const Operator& op, const std::string& msg) {
    throw ShapeError(op.describe() + ": " + msg);
}

inline const Variable& in(const Operator& op, const char* name) { return *op.input(name); }

/// Checks that `v` has exactly the axes of `o` (in any order).
inline void expect_axes(const Operator& op, const Variable& v, const Order& o, const char* what) {
    if (!v.order().same_axes(o))
        shape_fail(op, std::string(what) + " " + v.describe() + " should have the axes " + o.str());
}

/// Product of dimensions [from, to) of a shape.
inline std::int64_t prod(const Shape& s, std::size_t from, std::size_t to) {
    std::int64_t p = 1;
    for (std::size_t i = from; i < to && i < s.size(); ++i) p *= s[i];
    return p;
}

/// View of a variable as [outer, len, inner] around axis `a`.
struct Split3 {
    std::int64_t outer, len, inner;
};
inline Split3 split_at(const Variable& v, const Axis& a) {
    std::size_t i = v.order().index(a);
    return {prod(v.shape(), 0, i), v.shape()[i], prod(v.shape(), i + 1, v.ndim())};
}

/// The axes named by the string-list attribute `key`.
std::vector<Axis> axes_attr(const Operator& op, const char* key);
/// x's order with `axes` moved to the end, in the order given; ShapeError if x lacks one.
Order axes_last(const Operator& op, const Variable& x, const std::vector<Axis>& axes);
/// OpSchema::required_order of a variadic op whose inputs must agree: all in x0's order.
std::optional<Order> order_of_x0(const Operator& op, const std::string& input);
/// The order of input x with the op's attribute `axes` last (OpDef::x_order of Affine).
Order x_axes_last(const Operator& op);
/// Product of the sizes of `axes` in x.
std::int64_t size_over(const Variable& x, const std::vector<Axis>& axes);
/// ShapeError unless each of the inputs `names` the op has holds k values.
void expect_params(const Operator& op, std::int64_t k, std::initializer_list<const char*> names);
/// y has x's type (elementwise ops).
Outputs like_x(const Operator& op);
/// y has x's type laid out in `o`, the order the op asks x to be in: the result is the same
/// before and after the optimizer legalizes the input's layout.
Outputs like_x_in(const Operator& op, const Order& o);

/// Activation attributes ("activation", "alpha", "max_value", "threshold") as kernel params.
/// Absent ones default to 0 (max_value -1: none), except elu and celu alpha 1, and ONNX's
/// defaults of hard_sigmoid_general (alpha 0.2, beta = threshold 0.5), shrink (lambd = alpha
/// 0.5) and clip (alpha = -FLT_MAX, max_value = FLT_MAX: unbounded).
cpu::ActParams act_params(const Operator& op, const std::string& fn);
/// Every activation name the kernels know.
bool is_known_activation(const std::string& fn);

/// Output size and leading pad of one spatial dimension, TF/Keras rules.
struct Span {
    std::int64_t out, pad_begin;
};
Span conv_span(const Operator& op, std::int64_t in, std::int64_t k, std::int64_t stride, std::int64_t dilation,
               const std::string& padding);
/// The same with explicit pads (ONNX, PyTorch): `begin` / `end` zeros around the input, the
/// output size rounded down, or up with `ceil` (a window must still start inside the input or
/// the leading pad).
Span explicit_span(const Operator& op, std::int64_t in, std::int64_t k, std::int64_t stride, std::int64_t dilation,
                   std::int64_t begin, std::int64_t end, bool ceil);

/// For kernels that take a fixed array of axes (graft_rt::max_rank): UnsupportedError ("OP: WHAT
/// of rank R (at most MAX)") when `rank` exceeds `max`.
void check_rank(const Operator& op, std::size_t rank, int max, const std::string& what);
/// v's entries at the start of an array of N (v.size() <= N, checked by check_rank), zeros after.
template <std::size_t N, class T>
std::array<T, N> fixed_array(const std::vector<T>& v) {
    std::array<T, N> a{};
    std::copy(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(std::min(v.size(), N)), a.begin());
    return a;
}

}  // namespace graft::ops
