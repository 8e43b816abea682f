// tests/conformance/conformance.hpp - the per-op conformance suite (in the spirit of ONNX Runtime's
// OpTester and WebDNN's kernel tests).
//
// Every built-in op type has small examples: inputs (some of them constants, i.e. weights),
// attributes and a double-precision reference written here from the op's definition, never from
// graft's output. test_conformance.cpp runs each example on the native backend at -O0 and -O2,
// through a descriptor round trip and as generated C++, once with the inputs in the example's
// order and once with every non-constant input of rank >= 2 in a permuted memory order, and
// compares with the reference. Op types without examples, and backends without a generator for an
// op, are listed by name.
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "graft/graft.hpp"

namespace conformance {

using graft::Axis;
using graft::Order;
using graft::OrderC;
using graft::OrderCN;
using graft::OrderNC;
using graft::OrderNDHWC;
using graft::OrderNHWC;
using graft::OrderNT;
using graft::OrderNTC;
using graft::Shape;

/// An input of the op. Non-constant inputs become model inputs.
struct Operand {
    std::string port;
    Order order;
    Shape shape;
    bool constant = false;
    std::vector<float> data;
};

/// An expected output, in `order`.
struct Expected {
    std::string port;
    Order order;
    Shape shape;
    std::vector<double> data;
};

struct Example {
    std::string op_type;
    std::string name;  ///< what this example covers
    graft::Attributes attrs;
    std::vector<Operand> inputs;
    /// The reference: outputs computed in double from the inputs (in their given orders).
    std::function<std::vector<Expected>(const std::vector<Operand>&)> reference;
    double atol = 1e-5, rtol = 1e-4;
};

/// Every example, by family (examples_*.cpp).
std::vector<Example> elementwise_examples();
std::vector<Example> shape_examples();
std::vector<Example> resize_examples();
std::vector<Example> linear_conv_examples();
std::vector<Example> sequence_examples();
std::vector<Example> conv_more_examples();
std::vector<Example> recurrent_examples();
std::vector<Example> fused_examples();
std::vector<Example> broadcast_examples();
std::vector<Example> reduce_examples();
std::vector<Example> integer_examples();
std::vector<Example> along_axis_examples();

// ---- helpers for writing examples ----------------------------------------------------------

/// Deterministic values in [lo, hi) (a fixed LCG per seed).
std::vector<float> values(std::size_t n, unsigned seed, float lo = -2.f, float hi = 2.f);

/// Seeds for a family's examples: next() gives start + step, start + 2 * step, ...
class Seeds {
public:
    Seeds(unsigned start, unsigned step) : seed_(start), step_(step) {}
    unsigned operator()() { return seed_ += step_; }

private:
    unsigned seed_, step_;
};

inline std::int64_t count(const Shape& s) {
    std::int64_t n = 1;
    for (auto d : s) n *= d;
    return n;
}

/// An input named `port` of `order` and `shape` with values from `seed`.
inline Operand input(const std::string& port, Order order, Shape shape, unsigned seed, bool constant = false,
                     float lo = -2.f, float hi = 2.f) {
    Operand o{port, std::move(order), std::move(shape), constant, {}};
    o.data = values(static_cast<std::size_t>(count(o.shape)), seed, lo, hi);
    return o;
}

/// `data` (laid out in order `from` with `shape`) laid out in order `to` (the same axes).
template <class T>
std::vector<T> relayout(const std::vector<T>& data, const Order& from, const Shape& shape, const Order& to) {
    const std::size_t rank = shape.size();
    std::vector<std::int64_t> to_shape(rank), src_stride(rank);
    std::int64_t s = 1;
    for (std::size_t i = rank; i-- > 0;) src_stride[i] = s, s *= shape[i];
    std::vector<std::int64_t> stride(rank);  // source stride of each destination axis
    for (std::size_t i = 0; i < rank; ++i) {
        const std::size_t j = from.index(to[i]);
        to_shape[i] = shape[j];
        stride[i] = src_stride[j];
    }
    std::vector<T> out(data.size());
    std::vector<std::int64_t> idx(rank, 0);
    for (std::size_t k = 0; k < out.size(); ++k) {
        std::int64_t off = 0;
        for (std::size_t i = 0; i < rank; ++i) off += idx[i] * stride[i];
        out[k] = data[static_cast<std::size_t>(off)];
        for (std::size_t i = rank; i-- > 0;) {
            if (++idx[i] < to_shape[i]) break;
            idx[i] = 0;
        }
    }
    return out;
}

/// The shape of `shape` (in `from`) in order `to`.
inline Shape reorder_shape(const Shape& shape, const Order& from, const Order& to) {
    Shape out;
    for (const auto& a : to.axes()) out.push_back(shape[from.index(a)]);
    return out;
}

}  // namespace conformance
