// graft/ir/variable.hpp - the values that flow between operators.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graft/error.hpp"
#include "graft/ir/checked.hpp"
#include "graft/ir/dtype.hpp"
#include "graft/ir/order.hpp"
#include "graft/printable.hpp"

namespace graft {

class Operator;

/// The size of a dimension that is fixed only when the model runs (the batch).
constexpr std::int64_t kDynamic = -1;

/// Sizes per axis, in the order of the variable's Order.
using Shape = std::vector<std::int64_t>;

inline std::string shape_str(const Shape& s) {
    std::string out = "[";
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (i) out += ", ";
        out += s[i] == kDynamic ? std::string("?") : std::to_string(s[i]);
    }
    return out + "]";
}

/// Element count; kDynamic if any dimension is dynamic. ShapeError if the product overflows
/// int64 (a Variable's shape holds at most kMaxElements, so never for one).
inline std::int64_t numel(const Shape& s) {
    std::int64_t n = 1;
    for (auto d : s) {
        if (d == kDynamic) return kDynamic;
        if (!checked::mul(n, d, n)) throw ShapeError("shape " + shape_str(s) + " holds more elements than int64 counts");
    }
    return n;
}

class Variable {
public:
    Variable(std::string name, DType dtype, Order order, Shape shape)
        : name_(std::move(name)), dtype_(dtype), order_(std::move(order)), shape_(std::move(shape)) {
        check();
    }
    virtual ~Variable() = default;
    Variable(const Variable&) = delete;
    Variable& operator=(const Variable&) = delete;

    const std::string& name() const noexcept { return name_; }
    DType dtype() const noexcept { return dtype_; }
    const Order& order() const noexcept { return order_; }
    const Shape& shape() const noexcept { return shape_; }
    std::size_t ndim() const noexcept { return shape_.size(); }
    std::int64_t numel() const noexcept { return graft::numel(shape_); }

    /// Size along an axis; GraphError naming the variable if it has no such axis.
    std::int64_t size(const Axis& a) const {
        auto i = order_.find(a);
        if (!i) throw GraphError("variable '" + printable(name_) + "' (" + order_.str() + ") has no axis " + a.name());
        return shape_[*i];
    }

    /// The shape laid out in another order with the same axes.
    Shape shape_in(const Order& o) const {
        Shape s;
        for (const auto& a : o.axes()) s.push_back(size(a));
        return s;
    }

    virtual bool is_constant() const noexcept { return false; }

    /// The operator that writes this variable; null for graph inputs and constants.
    Operator* producer() const noexcept { return producer_; }

    /// Passes use these; they keep order and shape consistent.
    void set_type(Order order, Shape shape) {
        order_ = std::move(order);
        shape_ = std::move(shape);
        check();
    }
    void set_dtype(DType t) noexcept { dtype_ = t; }

    std::string describe() const { return "'" + printable(name_) + "' " + order_.str() + " " + shape_str(shape_); }

private:
    friend class Graph;
    void check() const {
        if (order_.ndim() != shape_.size())
            throw GraphError("variable '" + printable(name_) + "': order " + order_.str() + " has " + std::to_string(order_.ndim()) +
                             " axes but shape " + shape_str(shape_) + " has " + std::to_string(shape_.size()));
        for (auto d : shape_)
            if (d < 0 && d != kDynamic)
                throw GraphError("variable '" + printable(name_) + "': negative dimension in " + shape_str(shape_));
        if (!checked::fits(shape_)) checked::static_elements("variable '" + printable(name_) + "'", "shape", shape_);
    }

    std::string name_;
    DType dtype_;
    Order order_;
    Shape shape_;
    Operator* producer_ = nullptr;
};

/// A variable whose value is known at conversion time (weights). The data is float32 in the
/// variable's order, C-contiguous, and shared between copies of a graph.
class ConstantVariable final : public Variable {
public:
    ConstantVariable(std::string name, Order order, Shape shape, std::shared_ptr<const std::vector<float>> data)
        : Variable(std::move(name), DType::float32, std::move(order), std::move(shape)), data_(std::move(data)) {
        if (!data_) throw GraphError("constant '" + this->name() + "' has no data");
        if (Variable::numel() < 0 || static_cast<std::size_t>(Variable::numel()) != data_->size())
            throw GraphError("constant '" + this->name() + "': shape " + shape_str(Variable::shape()) + " holds " +
                             std::to_string(Variable::numel()) + " values but the data has " + std::to_string(data_->size()));
    }

    bool is_constant() const noexcept override { return true; }
    const std::vector<float>& data() const noexcept { return *data_; }
    const std::shared_ptr<const std::vector<float>>& shared_data() const noexcept { return data_; }

    void set_data(Order order, Shape shape, std::shared_ptr<const std::vector<float>> data) {
        if (!data || graft::numel(shape) != static_cast<std::int64_t>(data->size()))
            throw GraphError("constant '" + name() + "': new data does not match shape " + shape_str(shape));
        set_type(std::move(order), std::move(shape));
        data_ = std::move(data);
    }

private:
    std::shared_ptr<const std::vector<float>> data_;
};

}  // namespace graft
