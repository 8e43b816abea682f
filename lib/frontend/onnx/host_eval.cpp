#include "frontend/onnx/host_eval.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "graft/error.hpp"

namespace graft::onnx {

Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& what) {
    const std::size_t r = std::max(a.size(), b.size());
    Shape out(r);
    for (std::size_t i = 0; i < r; ++i) {
        const std::int64_t da = i + a.size() >= r ? a[i + a.size() - r] : 1;
        const std::int64_t db = i + b.size() >= r ? b[i + b.size() - r] : 1;
        if (da != db && da != 1 && db != 1)
            throw ShapeError(what + ": shapes " + shape_str(a) + " and " + shape_str(b) + " do not broadcast");
        out[i] = da == 1 ? db : da;
    }
    return out;
}

namespace {

/// The flat index into a tensor of shape `s` (right-aligned in `out`) for output element `k`.
std::size_t source_index(std::size_t k, const Shape& out, const Shape& s) {
    std::size_t idx = 0, stride = 1;
    for (std::size_t d = out.size(); d-- > 0;) {
        const auto od = static_cast<std::size_t>(out[d]);
        const std::size_t i = k % od;
        k /= od;
        if (d + s.size() >= out.size()) {
            const auto sd = static_cast<std::size_t>(s[d + s.size() - out.size()]);
            idx += (sd == 1 ? 0 : i) * stride;
            stride *= sd;
        }
    }
    return idx;
}

template <class T>
T apply(const std::string& op, T x, T y, const std::string& what) {
    if (op == "Add") return x + y;
    if (op == "Sub") return x - y;
    if (op == "Mul") return x * y;
    if (op == "Div") {
        if constexpr (std::is_integral_v<T>) {
            if (y == 0) throw FormatError(what + ": integer division by zero");
            if (y == -1 && x == std::numeric_limits<T>::min()) throw FormatError(what + ": integer overflow");
        }
        return x / y;
    }
    if (op == "Max") return std::max(x, y);
    if (op == "Min") return std::min(x, y);
    if (op == "Pow") return static_cast<T>(std::pow(static_cast<double>(x), static_cast<double>(y)));
    if (op == "Mod") {
        if constexpr (std::is_integral_v<T>) {
            if (y == 0) throw FormatError(what + ": integer modulo by zero");
            if (y == -1) return 0;
            const T m = x % y;
            return (m != 0 && ((m < 0) != (y < 0))) ? m + y : m;
        } else {
            return std::fmod(x, y);
        }
    }
    if (op == "Equal") return x == y;
    if (op == "Less") return x < y;
    if (op == "Greater") return x > y;
    if (op == "And") return (x != 0) && (y != 0);
    if (op == "Or") return (x != 0) || (y != 0);
    throw UnsupportedError(what + ": " + op + " of constants");
}

bool is_logical(const std::string& op) { return op == "Equal" || op == "Less" || op == "Greater" || op == "And" || op == "Or"; }

std::int64_t add(std::int64_t a, std::int64_t b, const std::string& what) {
    std::int64_t r = 0;
    if (__builtin_add_overflow(a, b, &r)) throw FormatError(what + ": integer overflow in shape arithmetic");
    return r;
}
std::int64_t mul(std::int64_t a, std::int64_t b, const std::string& what) {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r)) throw FormatError(what + ": integer overflow in shape arithmetic");
    return r;
}

/// What holds of d = value + batch * N for every N >= 1 (d is monotonic in N: its bound is at 1).
struct Sign {
    bool pos, neg, nonneg, nonpos, nonzero;
};
Sign sign_for_all(SymInt d, const std::string& what) {
    constexpr std::int64_t kBig = std::int64_t{1} << 62;
    if (d.value <= -kBig || d.value >= kBig || d.batch <= -kBig || d.batch >= kBig)
        throw FormatError(what + ": integer overflow in shape arithmetic");
    const std::int64_t v = d.value, b = d.batch, at1 = v + b;
    if (b == 0) return {v > 0, v < 0, v >= 0, v <= 0, v != 0};
    const bool root = v % b == 0 && -v / b >= 1;  // d is 0 for some N >= 1
    if (b > 0) return {at1 > 0, false, at1 >= 0, false, !root};
    return {false, at1 < 0, false, at1 <= 0, !root};
}

}  // namespace

SymInt sym_binary(const std::string& op, SymInt x, SymInt y, const std::string& what) {
    const auto neg = [&](std::int64_t v) { return mul(v, -1, what); };
    if (x.fixed() && y.fixed()) {
        const std::int64_t r = op == "Add"   ? add(x.value, y.value, what)
                               : op == "Sub" ? add(x.value, neg(y.value), what)
                               : op == "Mul" ? mul(x.value, y.value, what)
                                             : apply<std::int64_t>(op, x.value, y.value, what);
        return {r, 0};
    }
    auto refuse = [&](const std::string& why) -> SymInt {
        throw UnsupportedError(what + ": " + op + " of " + x.str() + " and " + y.str() + ", N being the batch size, " + why);
    };
    if (op == "Add") return {add(x.value, y.value, what), add(x.batch, y.batch, what)};
    if (op == "Sub") return {add(x.value, neg(y.value), what), add(x.batch, neg(y.batch), what)};
    if (op == "Mul") {
        if (!x.fixed() && !y.fixed()) return refuse("is not a multiple of N");
        return {mul(x.value, y.value, what), add(mul(x.value, y.batch, what), mul(x.batch, y.value, what), what)};
    }
    if (op == "Div") {
        if (!y.fixed()) return refuse("is not a multiple of N");
        if (y.value == 0) throw FormatError(what + ": integer division by zero");
        if (y.value == -1) return {neg(x.value), neg(x.batch)};
        if (x.value % y.value != 0 || x.batch % y.value != 0) return refuse("depends on N beyond a multiple of it");
        return {x.value / y.value, x.batch / y.value};
    }
    if (op == "Max" || op == "Min" || op == "Equal" || op == "Less" || op == "Greater") {
        const Sign d = sign_for_all({add(x.value, neg(y.value), what), add(x.batch, neg(y.batch), what)}, what);
        // (is, is not): whether the outcome holds for every N, whether it fails for every N
        const auto [is, is_not] = op == "Max" ? std::pair{d.nonneg, d.nonpos}
                                : op == "Min" ? std::pair{d.nonpos, d.nonneg}
                                : op == "Equal" ? std::pair{d.nonneg && d.nonpos, d.nonzero}
                                : op == "Less" ? std::pair{d.neg, d.nonneg}
                                               : std::pair{d.pos, d.nonpos};
        if (!is && !is_not) return refuse("depends on N");
        if (op == "Max" || op == "Min") return is ? x : y;
        return {is ? 1 : 0, 0};
    }
    return refuse("is not supported");
}

HostTensor host_take(const HostTensor& t, Shape shape, const std::vector<std::size_t>& src) {
    HostTensor out;
    out.kind = t.kind;
    out.shape = std::move(shape);
    for (auto k : src) out.push(t, k);
    return out;
}

HostTensor host_binary(const std::string& op, const HostTensor& a, const HostTensor& b, const std::string& what) {
    HostTensor out;
    out.shape = broadcast_shapes(a.shape, b.shape, what);
    const auto n = static_cast<std::size_t>(numel(out.shape));
    const bool logical = is_logical(op);
    if (a.is_float() || b.is_float()) {
        const auto av = a.floats(), bv = b.floats();
        std::vector<float> r(n);
        for (std::size_t k = 0; k < n; ++k)
            r[k] = apply<float>(op, av[source_index(k, out.shape, a.shape)], bv[source_index(k, out.shape, b.shape)], what);
        if (logical) {
            out.kind = HostTensor::Kind::boolean;
            out.i.assign(r.begin(), r.end());
        } else {
            out.kind = HostTensor::Kind::floating;
            out.f = std::move(r);
        }
        return out;
    }
    out.kind = logical ? HostTensor::Kind::boolean : HostTensor::Kind::integer;
    for (std::size_t k = 0; k < n; ++k)
        out.push(sym_binary(op, a.sym(source_index(k, out.shape, a.shape)), b.sym(source_index(k, out.shape, b.shape)), what));
    return out;
}

HostTensor host_where(const HostTensor& cond, const HostTensor& x, const HostTensor& y, const std::string& what) {
    HostTensor out;
    out.shape = broadcast_shapes(cond.shape, broadcast_shapes(x.shape, y.shape, what), what);
    const auto n = static_cast<std::size_t>(numel(out.shape));
    const auto c = cond.floats();
    out.kind = x.is_float() || y.is_float() ? HostTensor::Kind::floating : x.kind;
    for (std::size_t k = 0; k < n; ++k) {
        const bool pick_x = c[source_index(k, out.shape, cond.shape)] != 0.f;
        if (pick_x) out.push(x, source_index(k, out.shape, x.shape));
        else out.push(y, source_index(k, out.shape, y.shape));
    }
    return out;
}

std::vector<float> host_expand(const HostTensor& t, const Shape& dims, const std::string& what) {
    if (broadcast_shapes(t.shape, dims, what) != dims)
        throw ShapeError(what + ": " + shape_str(t.shape) + " does not broadcast to " + shape_str(dims));
    const auto v = t.floats();
    std::vector<float> out(static_cast<std::size_t>(numel(dims)));
    for (std::size_t k = 0; k < out.size(); ++k) out[k] = v[source_index(k, dims, t.shape)];
    return out;
}

HostTensor host_gather(const HostTensor& t, const HostTensor& indices, std::size_t axis, const std::string& what) {
    if (axis >= t.shape.size()) throw FormatError(what + ": axis " + std::to_string(axis) + " of a rank-" + std::to_string(t.shape.size()) + " tensor");
    const auto idx = indices.ints(what + ": indices");
    const std::int64_t len = t.shape[axis];
    std::size_t outer = 1, inner = 1;
    for (std::size_t d = 0; d < axis; ++d) outer *= static_cast<std::size_t>(t.shape[d]);
    for (std::size_t d = axis + 1; d < t.shape.size(); ++d) inner *= static_cast<std::size_t>(t.shape[d]);
    Shape shape(t.shape.begin(), t.shape.begin() + static_cast<std::ptrdiff_t>(axis));
    shape.insert(shape.end(), indices.shape.begin(), indices.shape.end());
    shape.insert(shape.end(), t.shape.begin() + static_cast<std::ptrdiff_t>(axis) + 1, t.shape.end());
    std::vector<std::size_t> src;
    for (std::size_t o = 0; o < outer; ++o)
        for (auto i : idx) {
            if (i < -len || i >= len)
                throw FormatError(what + ": index " + std::to_string(i) + " is out of range for a dimension of size " + std::to_string(len));
            const auto j = static_cast<std::size_t>(i < 0 ? i + len : i);
            for (std::size_t e = 0; e < inner; ++e) src.push_back((o * static_cast<std::size_t>(len) + j) * inner + e);
        }
    return host_take(t, std::move(shape), src);
}

}  // namespace graft::onnx
