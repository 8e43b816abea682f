// tests/conformance/reference.hpp - what the double-precision references share: walking every
// position of a tensor and reading a parameter tensor at the same named-axis position.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "conformance.hpp"

namespace conformance {

/// A position: the index along each axis, by axis name.
using Pos = std::map<std::string, std::int64_t>;

/// Calls f(pos, flat index) for every position of a tensor of `order` and `shape`, in memory order.
template <class F>
void each(const Order& order, const Shape& shape, F f) {
    const std::int64_t n = count(shape);
    std::vector<std::int64_t> idx(shape.size(), 0);
    for (std::int64_t k = 0; k < n; ++k) {
        Pos p;
        for (std::size_t i = 0; i < shape.size(); ++i) p[order[i].name()] = idx[i];
        f(p, k);
        for (std::size_t i = shape.size(); i-- > 0;) {
            if (++idx[i] < shape[i]) break;
            idx[i] = 0;
        }
    }
}

/// The flat index of position `p` in a tensor of `order` and `shape` (axes `p` lacks count as 0).
inline std::int64_t offset(const Order& order, const Shape& shape, const Pos& p) {
    std::int64_t off = 0;
    for (std::size_t i = 0; i < shape.size(); ++i) {
        auto it = p.find(order[i].name());
        off = off * shape[i] + (it == p.end() ? 0 : it->second);
    }
    return off;
}

/// The value of operand `o` at position `p`.
inline double at(const Operand& o, const Pos& p) { return o.data[static_cast<std::size_t>(offset(o.order, o.shape, p))]; }

/// Output `port` of `order` and `shape`, values f(pos, flat index).
template <class F>
Expected output(const std::string& port, Order order, Shape shape, F f) {
    Expected e{port, std::move(order), std::move(shape), {}};
    e.data.resize(static_cast<std::size_t>(count(e.shape)));
    each(e.order, e.shape, [&](const Pos& p, std::int64_t k) { e.data[static_cast<std::size_t>(k)] = f(p, k); });
    return e;
}

/// An output like input `x`: same order and shape, values f(pos, flat index).
template <class F>
Expected like(const std::string& port, const Operand& x, F f) {
    return output(port, x.order, x.shape, f);
}

/// Output `port` of `order` and `shape` holding x's values row-major in the axis order `layout`,
/// whatever x's memory order (a transpose or reshape).
inline Expected laid_out(const std::string& port, const Operand& x, const Order& layout, Order order, Shape shape) {
    Expected y{port, std::move(order), std::move(shape), {}};
    for (float f : relayout(x.data, x.order, x.shape, layout)) y.data.push_back(f);
    return y;
}

inline const Operand& find(const std::vector<Operand>& ins, const std::string& port) {
    for (const auto& o : ins)
        if (o.port == port) return o;
    throw std::runtime_error("example has no input " + port);
}

}  // namespace conformance
