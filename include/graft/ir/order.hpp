// graft/ir/order.hpp - the memory layout of a variable, as a sequence of axes (outermost first).
#pragma once

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "graft/error.hpp"
#include "graft/ir/axis.hpp"

namespace graft {

class Order {
public:
    Order() = default;
    Order(std::initializer_list<Axis> axes) : axes_(axes) { check_unique(); }
    explicit Order(std::vector<Axis> axes) : axes_(std::move(axes)) { check_unique(); }

    /// Builds an order from axis names, e.g. {"N", "H", "W", "C"}.
    static Order from_names(const std::vector<std::string>& names) {
        std::vector<Axis> axes;
        axes.reserve(names.size());
        for (const auto& n : names) axes.emplace_back(n);
        return Order(std::move(axes));
    }

    std::size_t ndim() const noexcept { return axes_.size(); }
    const std::vector<Axis>& axes() const noexcept { return axes_; }
    const Axis& operator[](std::size_t i) const { return axes_.at(i); }
    const Axis& back() const { return axes_.at(axes_.size() - 1); }

    std::optional<std::size_t> find(const Axis& a) const noexcept {
        for (std::size_t i = 0; i < axes_.size(); ++i)
            if (axes_[i] == a) return i;
        return std::nullopt;
    }
    bool has(const Axis& a) const noexcept { return find(a).has_value(); }

    /// Position of `a`; GraphError if this order has no such axis.
    std::size_t index(const Axis& a) const {
        if (auto i = find(a)) return *i;
        throw GraphError("order " + str() + " has no axis " + a.name());
    }

    /// True if both orders hold the same axes, in any sequence.
    bool same_axes(const Order& o) const noexcept {
        if (o.ndim() != ndim()) return false;
        for (const auto& a : axes_)
            if (!o.has(a)) return false;
        return true;
    }

    /// The permutation that turns data laid out in this order into `target`:
    /// result[i] is the position in this order of target's axis i.
    std::vector<int> permutation_to(const Order& target) const {
        if (!same_axes(target)) throw GraphError("cannot transpose " + str() + " to " + target.str() + ": different axes");
        std::vector<int> perm(target.ndim());
        for (std::size_t i = 0; i < target.ndim(); ++i) perm[i] = static_cast<int>(index(target[i]));
        return perm;
    }

    /// This order with axis `a` moved to the end (used for "contract over the last axis" ops).
    Order with_last(const Axis& a) const {
        std::vector<Axis> out;
        for (const auto& x : axes_)
            if (x != a) out.push_back(x);
        if (out.size() == axes_.size()) throw GraphError("order " + str() + " has no axis " + a.name());
        out.push_back(a);
        return Order(std::move(out));
    }

    /// "NHWC"; axes with longer names are bracketed: "N[K2]C".
    std::string str() const {
        std::string s;
        for (const auto& a : axes_) s += a.name().size() == 1 ? a.name() : "[" + a.name() + "]";
        return s.empty() ? "(scalar)" : s;
    }

    std::vector<std::string> names() const {
        std::vector<std::string> n;
        for (const auto& a : axes_) n.push_back(a.name());
        return n;
    }

    friend bool operator==(const Order& a, const Order& b) noexcept { return a.axes_ == b.axes_; }
    friend bool operator!=(const Order& a, const Order& b) noexcept { return !(a == b); }

private:
    void check_unique() const {
        for (std::size_t i = 0; i < axes_.size(); ++i)
            for (std::size_t j = i + 1; j < axes_.size(); ++j)
                if (axes_[i] == axes_[j]) throw GraphError("order repeats axis " + axes_[i].name());
    }
    std::vector<Axis> axes_;
};

// Each constant names its axes itself rather than through Axis::N ...: clang before 16 does not
// order the initialization of inline variables as C++17 asks (an Axis::N defined earlier in
// every translation unit may still be empty here), which made every clang-14 build throw
// "order repeats axis" before main. Namespace-scope Orders in lib/ do the same.
inline const Order OrderC{Axis("C")};
inline const Order OrderNC{Axis("N"), Axis("C")};
inline const Order OrderCN{Axis("C"), Axis("N")};
inline const Order OrderNT{Axis("N"), Axis("T")};
inline const Order OrderNTC{Axis("N"), Axis("T"), Axis("C")};
inline const Order OrderNCT{Axis("N"), Axis("C"), Axis("T")};
inline const Order OrderTNC{Axis("T"), Axis("N"), Axis("C")};
inline const Order OrderNHWC{Axis("N"), Axis("H"), Axis("W"), Axis("C")};
inline const Order OrderNCHW{Axis("N"), Axis("C"), Axis("H"), Axis("W")};
inline const Order OrderHWCN{Axis("H"), Axis("W"), Axis("C"), Axis("N")};  ///< Keras conv kernel: kh, kw, c_in, c_out
inline const Order OrderNDHWC{Axis("N"), Axis("D"), Axis("H"), Axis("W"), Axis("C")};
inline const Order OrderNCDHW{Axis("N"), Axis("C"), Axis("D"), Axis("H"), Axis("W")};

}  // namespace graft
