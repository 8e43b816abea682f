// Values known while converting: Constant, Shape, Size, ConstantOfShape, Range, Cast, Gather,
// Equal / Less / Greater / Not / Where and Expand on known values (Cast, Gather, the comparisons,
// And / Or / Xor / Not and Where also on runtime values: graft's Cast, Gather, Binary and Where). They are what exporters emit
// for shape arithmetic (Shape -> Gather -> Unsqueeze -> Concat -> Reshape); computing them now
// leaves no shape op in the graph graft runs. Gather and Cast also take runtime values where
// graft has an op for them, and Expand and ConstantOfShape give runtime values (graft's Expand)
// for a runtime input or a shape that holds the dynamic batch size.
#include <algorithm>
#include <cmath>

#include "frontend/onnx/host_eval.hpp"
#include "frontend/onnx/ops/ops.hpp"
#include "ops/op_types.hpp"

namespace graft::onnx {

namespace {

using i64 = std::int64_t;

HostTensor ints_tensor(std::vector<i64> v, Shape shape) {
    HostTensor t;
    t.kind = HostTensor::Kind::integer;
    t.shape = std::move(shape);
    t.i = std::move(v);
    return t;
}

void constant(NodeContext& ctx) {
    if (ctx.num_inputs() != 0) ctx.fail_format("a Constant has no inputs");
    const auto& c = ctx.config();
    if (auto t = ctx.tensor_attribute("value")) return ctx.set_known_output(0, *t);
    HostTensor t;
    if (c.has("value_float")) {
        t.f = {static_cast<float>(c.get_float("value_float"))};
    } else if (c.has("value_floats")) {
        const Config l = c.get("value_floats");
        for (std::size_t i = 0; i < l.size(); ++i) t.f.push_back(static_cast<float>(l.at(i).as_float()));
        t.shape = {static_cast<i64>(t.f.size())};
    } else if (c.has("value_int")) {
        t = ints_tensor({c.get_int("value_int")}, {});
    } else if (c.has("value_ints")) {
        auto v = c.get_ints("value_ints");
        t = ints_tensor(v, {static_cast<i64>(v.size())});
    } else {
        ctx.fail_unsupported("a Constant without a tensor, float or int value (sparse and string values are not supported)");
    }
    ctx.set_known_output(0, std::move(t));
}

/// Shape: the input's dimensions, those that depend on a dynamic batch as multiples of it.
void shape(NodeContext& ctx) {
    expect_inputs(ctx, 1, 1);
    const auto s = ctx.dims(0);
    const auto r = static_cast<i64>(s.size());
    i64 start = ctx.config().get_int("start", 0), end = ctx.config().get_int("end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = std::max<i64>(0, std::min(start, r)), end = std::max<i64>(start, std::min(end, r));
    HostTensor t;
    t.kind = HostTensor::Kind::integer;
    t.shape = {end - start};
    for (i64 k = start; k < end; ++k) t.push(s[static_cast<std::size_t>(k)]);
    ctx.set_known_output(0, std::move(t));
}

void size(NodeContext& ctx) {
    expect_inputs(ctx, 1, 1);
    SymInt n{1, 0};
    for (const auto& d : ctx.dims(0)) n = sym_binary("Mul", n, d, ctx.where());
    HostTensor t;
    t.kind = HostTensor::Kind::integer;
    t.push(n);
    ctx.set_known_output(0, std::move(t));
}


void constant_of_shape(NodeContext& ctx) {
    expect_inputs(ctx, 1, 1);
    HostTensor fill;
    fill.f = {0.f};
    if (auto t = ctx.tensor_attribute("value")) {
        if (t->numel() != 1) ctx.fail_format("value holds " + std::to_string(t->numel()) + " elements, expected 1");
        fill = *t;
    }
    if (ctx.known(0) && ctx.known(0)->symbolic()) {  // the batch size is a dimension: a runtime value
        const Value v{ctx.constant(ctx.layer_name() + "/value", Order{}, {}, fill.floats()), Order{}};
        const Value y = expand_to(ctx, v, {}, ctx.known_sym_ints(0, "shape"));
        return ctx.set_output(0, y.var, y.logical, !fill.is_float());
    }
    const auto dims = ctx.known_ints(0, "shape");
    HostTensor out;
    out.kind = fill.kind;
    out.shape = Shape(dims.begin(), dims.end());
    for (auto d : dims)
        if (d < 0) ctx.fail_shape("a negative dimension");
    const auto n = static_cast<std::size_t>(numel(out.shape));
    if (n > kMaxKnownElements)
        ctx.fail_unsupported("a constant of " + std::to_string(n) + " elements (graft computes at most " +
                             std::to_string(kMaxKnownElements) + " while converting)");
    if (out.is_float()) out.f.assign(n, fill.f[0]);
    else out.i.assign(n, fill.i[0]);
    ctx.set_known_output(0, std::move(out));
}

void range(NodeContext& ctx) {
    expect_inputs(ctx, 3, 3);
    const HostTensor *s = ctx.known(0), *l = ctx.known(1), *d = ctx.known(2);
    if (!s || !l || !d)
        ctx.fail_needs_value(!s ? 0 : !l ? 1 : 2, "a Range whose start, limit or delta is computed when the model runs");
    const bool fl = s->is_float() || l->is_float() || d->is_float();
    const double start = s->floats().at(0), limit = l->floats().at(0), delta = d->floats().at(0);
    if (delta == 0) ctx.fail_format("delta is 0");
    const double count = std::max(std::ceil((limit - start) / delta), 0.0);
    if (count > double(kMaxKnownElements))
        ctx.fail_unsupported("a Range of " + std::to_string(count) + " elements (graft computes at most " +
                             std::to_string(kMaxKnownElements) + " while converting)");
    HostTensor out;
    out.kind = fl ? HostTensor::Kind::floating : HostTensor::Kind::integer;
    out.shape = {static_cast<i64>(count)};
    for (i64 k = 0; k < static_cast<i64>(count); ++k) {
        if (fl) out.f.push_back(static_cast<float>(start + static_cast<double>(k) * delta));
        else out.i.push_back(static_cast<i64>(start) + k * static_cast<i64>(delta));
    }
    ctx.set_known_output(0, std::move(out));
}

void cast(NodeContext& ctx) {
    expect_inputs(ctx, 1, 1);
    using P = ::onnx::TensorProto;
    const auto to = ctx.config().get_int("to");
    const bool to_float = to == P::FLOAT || to == P::DOUBLE || to == P::FLOAT16 || to == P::BFLOAT16;
    if (const HostTensor* t = ctx.known(0)) {
        HostTensor r;
        r.shape = t->shape;
        if (to_float) {
            r.f = t->floats();
        } else if (to == P::BOOL) {
            r.kind = HostTensor::Kind::boolean;
            for (float v : t->floats()) r.i.push_back(v != 0.f);
        } else if (to == P::STRING) {
            ctx.fail_unsupported("Cast to string");
        } else {
            r.kind = HostTensor::Kind::integer;
            if (t->is_float())
                for (float v : t->f) r.i.push_back(static_cast<i64>(std::trunc(v)));
            else r.i = t->i, r.batch = t->batch;  // integer to integer: a multiple of the batch stays one
        }
        return ctx.set_known_output(0, std::move(r));
    }
    const Value& x = ctx.input(0);
    if (to_float) return ctx.set_outputs({emit(ctx, ops::kIdentity, {{"x", x.var}}, {}, x.logical)});  // float32 stays float32
    // To an integer or bool type: graft's Cast rounds the values (truncation, x != 0), and a
    // second Cast gives them back as the float32 values the graph holds (graft/ir/dtype.hpp).
    const char* target = to == P::BOOL ? "bool" : to == P::INT32 ? "int32" : to == P::INT8 ? "int8" : to == P::UINT8 ? "uint8"
                         : to == P::UINT16 ? "uint16" : to == P::INT64 ? "int64" : nullptr;
    if (!target) ctx.fail_unsupported("a Cast to " + onnx_type_name(static_cast<int>(to)) + " of a value computed when the model runs");
    Attributes a, f;
    a.set("to", std::string(target));
    f.set("to", std::string("float32"));
    const Value t = emit(ctx, ops::kCast, {{"x", x.var}}, std::move(a), x.logical, "round");
    const Value y = emit(ctx, ops::kCast, {{"x", t.var}}, std::move(f), x.logical);
    ctx.set_output(0, y.var, y.logical, true);
}

/// ONNX Gather as graft's Gather op (runtime indices, or several known ones from a runtime value):
/// x relabeled so that its axes before `axis` and after it carry the output's positional names and
/// the gathered one a name of its own, the indices relabeled to the output's names at `axis`.
void gather_op(NodeContext& ctx, std::size_t axis) {
    const Value& x = ctx.input(0);
    const Value& idx = ctx.input(1);
    const std::size_t r = x.logical.ndim(), q = idx.logical.ndim();
    const Order out = positional_order(r - 1 + q);
    std::vector<Axis> xn, in;
    for (std::size_t i = 0; i < r; ++i) xn.push_back(i < axis ? out[i] : i == axis ? Axis("gathered") : out[i - 1 + q]);
    for (std::size_t j = 0; j < q; ++j) in.push_back(out[axis + j]);
    Attributes a;
    a.set("axis", Axis("gathered"));
    const Value y = emit(ctx, ops::kGather, {{"x", ctx.relabel(x, Order(xn)).var}, {"indices", ctx.relabel(idx, Order(in)).var}},
                         std::move(a), out);
    ctx.set_output(0, y.var, y.logical, ctx.is_integer(0));
}

void gather(NodeContext& ctx) {
    expect_inputs(ctx, 2, 2);
    const HostTensor* idx = ctx.known(1);
    if (!idx) {  // runtime indices (token ids into an embedding table, ...)
        const std::size_t rank = ctx.known(0) ? ctx.known(0)->shape.size() : ctx.input(0).logical.ndim();
        return gather_op(ctx, axis_index(ctx, ctx.config().get_int("axis", 0), rank));
    }
    if (const HostTensor* t = ctx.known(0)) {
        const std::size_t axis = axis_index(ctx, ctx.config().get_int("axis", 0), t->shape.size());
        return ctx.set_known_output(0, host_gather(*t, *idx, axis, ctx.where()));
    }
    // One index of a runtime value (x[:, 0]): a crop, then the axis dropped.
    const Value& x = ctx.input(0);
    const Shape s = logical_shape(x);
    const std::size_t axis = axis_index(ctx, ctx.config().get_int("axis", 0), s.size());
    if (idx->numel() != 1) return gather_op(ctx, axis);
    const i64 len = s[axis];
    i64 i = idx->ints(ctx.where() + ": indices")[0];
    if (len == kDynamic) ctx.fail_unsupported("gathering along the dynamic batch dimension");
    if (i < -len || i >= len) ctx.fail_format("index " + std::to_string(i) + " is out of range for a dimension of size " + std::to_string(len));
    if (i < 0) i += len;
    std::vector<i64> b(s.size(), 0), e(s.size(), 0);
    b[axis] = -i, e[axis] = -(len - i - 1);
    Value y = pad_or_crop(ctx, x, b, e, "pick");
    Shape out = s;
    if (idx->shape.empty()) out.erase(out.begin() + static_cast<std::ptrdiff_t>(axis));
    if (y.var == x.var) y = emit(ctx, ops::kIdentity, {{"x", x.var}}, {}, x.logical);
    ctx.set_outputs({reshape(ctx, y, out, "drop")});
}

/// Equal, Less, Greater, LessOrEqual, GreaterOrEqual, And, Or, Xor: computed now on known values,
/// else graft's Binary op (1 / 0: bool values).
void compare(NodeContext& ctx) {
    expect_inputs(ctx, 2, 2);
    if (!ctx.has_input(1)) ctx.fail_format("input 1 is missing");
    const HostTensor *a = ctx.known(0), *b = ctx.known(1);
    const std::string& op = ctx.node().op_type();
    const bool host = op == "Equal" || op == "Less" || op == "Greater" || op == "And" || op == "Or";
    if (a && b && host) return ctx.set_known_output(0, host_binary(op, *a, *b, ctx.where()));
    const Value y = binary(ctx, op, ctx.input(0), ctx.input(1), "");
    ctx.set_output(0, y.var, y.logical, true);
}

void not_(NodeContext& ctx) {
    expect_inputs(ctx, 1, 1);
    if (const HostTensor* a = ctx.known(0)) {
        HostTensor r = *a;
        r.kind = HostTensor::Kind::boolean;
        for (auto& v : r.i) v = !v;
        return ctx.set_known_output(0, std::move(r));
    }
    const Value y = binary(ctx, "Equal", ctx.input(0), scalar(ctx, 0.f, "false"), "");
    ctx.set_output(0, y.var, y.logical, true);
}

/// `v` (dimensions `dims`) broadcast to `to` (ONNX's rule): relabeled when it has them already,
/// else graft's Expand.
Value broadcast_value(NodeContext& ctx, const Value& v, const std::vector<SymInt>& dims, const std::vector<SymInt>& to) {
    if (dims.size() == to.size() && std::equal(dims.begin(), dims.end(), to.begin())) return ctx.relabel(v, positional_order(to.size()));
    return expand_to(ctx, v, dims, to);
}

void where(NodeContext& ctx) {
    expect_inputs(ctx, 3, 3);
    const HostTensor *c = ctx.known(0), *x = ctx.known(1), *y = ctx.known(2);
    if (c && x && y) return ctx.set_known_output(0, host_where(*c, *x, *y, ctx.where()));
    // Runtime values: the three broadcast to one shape, then graft's Where.
    std::vector<std::vector<SymInt>> dims;
    std::size_t rank = 0;
    for (std::size_t i = 0; i < 3; ++i) dims.push_back(ctx.dims(i)), rank = std::max(rank, dims.back().size());
    std::vector<SymInt> out(rank, SymInt{1, 0});
    for (const auto& d : dims)
        for (std::size_t k = 0; k < d.size(); ++k) {
            SymInt& o = out[rank - d.size() + k];
            if (o == SymInt{1, 0}) o = d[k];
            else if (!(d[k] == SymInt{1, 0}) && !(d[k] == o)) ctx.fail_shape("inputs do not broadcast: " + o.str() + " and " + d[k].str());
        }
    NamedVars ins;
    const char* ports[] = {"c", "a", "b"};
    for (std::size_t i = 0; i < 3; ++i) ins.emplace_back(ports[i], broadcast_value(ctx, ctx.input(i), dims[i], out).var);
    const Value r = emit(ctx, ops::kWhere, std::move(ins), {}, positional_order(rank));
    ctx.set_output(0, r.var, r.logical, ctx.is_integer(1) && ctx.is_integer(2));
}

void expand(NodeContext& ctx) {
    expect_inputs(ctx, 2, 2);
    const HostTensor* x = ctx.known(0);
    // A runtime value, a shape that follows the batch, or a result too large to compute now: an op.
    std::size_t n = 0;
    bool runtime = !x || (ctx.known(1) && ctx.known(1)->symbolic());
    if (!runtime) {
        const auto dims = ctx.known_ints(1, "shape");
        for (auto d : dims)
            if (d < 0) ctx.fail_shape("shape holds a negative dimension " + std::to_string(d));
        std::size_t r = std::max(dims.size(), x->shape.size());
        n = 1;
        for (std::size_t i = 0; i < r && n <= kMaxKnownElements; ++i) {
            const i64 xd = i + x->shape.size() >= r ? x->shape[i + x->shape.size() - r] : 1;
            const i64 td = i + dims.size() >= r ? dims[i + dims.size() - r] : 1;
            n *= static_cast<std::size_t>(std::max<i64>({xd, td, 0}));
        }
        runtime = n > kMaxKnownElements;
    }
    if (runtime) {
        const Value y = expand_to(ctx, ctx.input(0), ctx.dims(0), ctx.known_sym_ints(1, "shape"));
        return ctx.set_output(0, y.var, y.logical, ctx.is_integer(0));
    }
    const auto dims = ctx.known_ints(1, "shape");
    HostTensor ones;
    ones.kind = x->kind == HostTensor::Kind::floating ? HostTensor::Kind::floating : HostTensor::Kind::integer;
    ones.shape = Shape(dims.begin(), dims.end());
    n = static_cast<std::size_t>(numel(ones.shape));
    if (ones.is_float()) ones.f.assign(n, 1.f);
    else ones.i.assign(n, 1);
    ctx.set_known_output(0, host_binary("Mul", *x, ones, ctx.where()));
}

}  // namespace

/// `x` (of dimensions `xdims`) broadcast as numpy does (aligned from the right) to `dims`, a
/// runtime value: graft's Expand, whose dimensions that are the batch size N follow the model's
/// dynamic batch.
Value expand_to(NodeContext& ctx, const Value& x, const std::vector<SymInt>& xdims, const std::vector<SymInt>& dims) {
    const std::size_t r = std::max(xdims.size(), dims.size());
    const Order order = positional_order(r);
    Shape shape;
    for (std::size_t i = 0; i < r; ++i) {
        const SymInt one{1, 0};
        const SymInt xd = i + xdims.size() >= r ? xdims[i + xdims.size() - r] : one;
        const SymInt td = i + dims.size() >= r ? dims[i + dims.size() - r] : one;
        if (!(xd == one) && !(td == one) && !(xd == td))
            ctx.fail_shape("cannot expand dimension " + xd.str() + " to " + td.str());
        const SymInt d = xd == one ? td : xd;
        if (d.fixed() && d.value < 0) ctx.fail_shape("a negative dimension " + d.str());
        if (!d.fixed() && !(d == SymInt{0, 1}))
            ctx.fail_unsupported("a dimension of " + d.str() + " (N: the batch size); graft expands to N itself");
        shape.push_back(d.fixed() ? d.value : kDynamic);
    }
    std::vector<Axis> names(order.axes().end() - static_cast<std::ptrdiff_t>(xdims.size()), order.axes().end());
    NamedVars ins{{"x", ctx.relabel(x, Order(names)).var}};
    Attributes a;
    a.set("order", order);
    a.set("shape", shape);
    if (std::count(shape.begin(), shape.end(), kDynamic)) {
        const auto [like, axis] = ctx.batch().carrier(ctx.where());
        ins.emplace_back("like", like);
        a.set("like_axis", axis);
    }
    return emit(ctx, ops::kExpand, std::move(ins), std::move(a), order);
}

void register_constants(Registry& r) {
    add(r, "Constant", constant);
    add(r, "Shape", shape);
    add(r, "Size", size);
    add(r, "ConstantOfShape", constant_of_shape);
    add(r, "Range", range);
    add(r, "Cast", cast);
    add(r, "Gather", gather);
    for (const char* op : {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"}) add(r, op, compare);
    add(r, "Not", not_);
    add(r, "Where", where);
    add(r, "Expand", expand);
}

}  // namespace graft::onnx
