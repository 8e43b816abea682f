#include "frontend/onnx/host_eval.hpp"

#include <algorithm>
#include <cmath>

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
        }
        return x / y;
    }
    if (op == "Max") return std::max(x, y);
    if (op == "Min") return std::min(x, y);
    if (op == "Pow") return static_cast<T>(std::pow(static_cast<double>(x), static_cast<double>(y)));
    if (op == "Mod") {
        if constexpr (std::is_integral_v<T>) {
            if (y == 0) throw FormatError(what + ": integer modulo by zero");
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

}  // namespace

HostTensor host_binary(const std::string& op, const HostTensor& a, const HostTensor& b, const std::string& what) {
    HostTensor out;
    out.shape = broadcast_shapes(a.shape, b.shape, what);
    const auto n = static_cast<std::size_t>(numel(out.shape));
    const bool logical = op == "Equal" || op == "Less" || op == "Greater" || op == "And" || op == "Or";
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
    out.i.resize(n);
    for (std::size_t k = 0; k < n; ++k)
        out.i[k] = apply<std::int64_t>(op, a.i[source_index(k, out.shape, a.shape)], b.i[source_index(k, out.shape, b.shape)], what);
    return out;
}

HostTensor host_where(const HostTensor& cond, const HostTensor& x, const HostTensor& y, const std::string& what) {
    HostTensor out;
    out.shape = broadcast_shapes(cond.shape, broadcast_shapes(x.shape, y.shape, what), what);
    const auto n = static_cast<std::size_t>(numel(out.shape));
    const auto c = cond.floats();
    const bool fl = x.is_float() || y.is_float();
    out.kind = fl ? HostTensor::Kind::floating : x.kind;
    const auto xf = fl ? x.floats() : std::vector<float>{}, yf = fl ? y.floats() : std::vector<float>{};
    for (std::size_t k = 0; k < n; ++k) {
        const bool pick_x = c[source_index(k, out.shape, cond.shape)] != 0.f;
        const std::size_t ix = source_index(k, out.shape, x.shape), iy = source_index(k, out.shape, y.shape);
        if (fl) out.f.push_back(pick_x ? xf[ix] : yf[iy]);
        else out.i.push_back(pick_x ? x.i[ix] : y.i[iy]);
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
    HostTensor out;
    out.kind = t.kind;
    out.shape.assign(t.shape.begin(), t.shape.begin() + static_cast<std::ptrdiff_t>(axis));
    out.shape.insert(out.shape.end(), indices.shape.begin(), indices.shape.end());
    out.shape.insert(out.shape.end(), t.shape.begin() + static_cast<std::ptrdiff_t>(axis) + 1, t.shape.end());
    for (std::size_t o = 0; o < outer; ++o)
        for (auto i : idx) {
            if (i < -len || i >= len)
                throw FormatError(what + ": index " + std::to_string(i) + " is out of range for a dimension of size " + std::to_string(len));
            const auto j = static_cast<std::size_t>(i < 0 ? i + len : i);
            const std::size_t base = (o * static_cast<std::size_t>(len) + j) * inner;
            if (t.is_float()) out.f.insert(out.f.end(), t.f.begin() + static_cast<std::ptrdiff_t>(base), t.f.begin() + static_cast<std::ptrdiff_t>(base + inner));
            else out.i.insert(out.i.end(), t.i.begin() + static_cast<std::ptrdiff_t>(base), t.i.begin() + static_cast<std::ptrdiff_t>(base + inner));
        }
    return out;
}

}  // namespace graft::onnx
