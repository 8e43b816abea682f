// tests/unit/pass_support.hpp - small hand-built graphs for the optimizer and memory plan tests,
// and running a graph on the native backend.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "graft/graft.hpp"
#include "graft/optimize/passes.hpp"

namespace graft_test {

/// A graph under construction with the built-in registry and seeded random constants.
struct Net {
    std::unique_ptr<graft::Registry> reg = graft::make_builtin_registry();
    graft::Graph g;
    std::mt19937 rng{1234};

    graft::Variable* input(const std::string& name, const graft::Order& o, graft::Shape s) {
        auto* v = g.add_variable(name, graft::DType::float32, o, std::move(s));
        g.add_input(v);
        return v;
    }
    graft::ConstantVariable* constant(const std::string& name, const graft::Order& o, graft::Shape s, float lo = -1.f,
                                      float hi = 1.f) {
        std::uniform_real_distribution<float> d(lo, hi);
        std::vector<float> data(static_cast<std::size_t>(graft::numel(s)));
        for (auto& x : data) x = d(rng);
        return g.add_constant(name, o, std::move(s), std::make_shared<const std::vector<float>>(std::move(data)));
    }
    graft::Operator* op(const std::string& type, const std::string& name, graft::NamedVars ins, graft::Attributes a = {}) {
        return graft::add_op(g, *reg, type, name, std::move(ins), std::move(a));
    }
    graft::Variable* y(graft::Operator* o) { return o->output("y"); }
    void output(graft::Variable* v) { g.add_output(v); }

    /// Applies one rule; true if it fired. The graph must stay valid.
    bool apply(const std::string& rule) {
        bool fired = graft::optimize::make_pass(rule)->run(g, *reg);
        g.validate();
        return fired;
    }
    std::size_t count(const std::string& type) const {
        std::size_t n = 0;
        for (auto* o : g.operators()) n += o->type() == type;
        return n;
    }
};

/// Random inputs for every graph input, with batch `batch` for dynamic dimensions.
inline std::vector<graft::Tensor> random_inputs(const graft::Graph& g, std::int64_t batch, unsigned seed = 7) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(-2.f, 2.f);
    std::vector<graft::Tensor> out;
    for (auto* v : g.inputs()) {
        graft::Shape s = v->shape();
        for (auto& x : s)
            if (x == graft::kDynamic) x = batch;
        graft::Tensor t(s);
        for (std::size_t i = 0; i < t.size(); ++i) t.data()[i] = d(rng);
        out.push_back(std::move(t));
    }
    return out;
}

/// The graph run as it is (no optimizer pass, only layout legalization) on the native backend.
inline std::vector<graft::Tensor> run_native(const graft::Graph& g, const graft::Registry& reg,
                                             const std::vector<graft::Tensor>& inputs,
                                             graft::Precision precision = graft::Precision::fp32) {
    graft::Model m(g.clone(), reg, 0, precision);
    return m.run(inputs);
}

/// Largest |a - b| over all outputs; infinity if shapes differ.
inline double max_diff(const std::vector<graft::Tensor>& a, const std::vector<graft::Tensor>& b) {
    if (a.size() != b.size()) return INFINITY;
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i].shape() != b[i].shape()) return INFINITY;
        for (std::size_t k = 0; k < a[i].size(); ++k) {
            double e = std::fabs(double(a[i].data()[k]) - double(b[i].data()[k]));
            if (!(e <= worst)) worst = std::isnan(e) ? INFINITY : e;
        }
    }
    return worst;
}

/// Runs `rule` on `net`, requires it to fire (or not) and the outputs to stay the same (1e-5).
inline void check_rule(Net& net, const std::string& rule, bool should_fire) {
    const auto inputs = random_inputs(net.g, 3);
    const auto before = run_native(net.g, *net.reg, inputs);
    const bool fired = net.apply(rule);
    CHECK(fired == should_fire);
    const auto after = run_native(net.g, *net.reg, inputs);
    CHECK(max_diff(before, after) <= 1e-5);
}

/// Attributes from key-value pairs.
inline graft::Attributes attrs(std::initializer_list<std::pair<const char*, graft::AttrValue>> kv) {
    graft::Attributes a;
    for (auto& [k, v] : kv) a.set_value(k, v);
    return a;
}

}  // namespace graft_test
