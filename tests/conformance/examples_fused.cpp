// Conformance examples: FusedElementwise, the op only the optimizer creates. Each example builds a
// small chain of elementwise ops, runs graft's rule fuse_elementwise on it and takes the one
// FusedElementwise op it makes (its attributes, i.e. the program, and its inputs: the chain's
// inputs and parameter constants, with BatchNormalization folded into a scale and a shift). The
// reference is the chain's maths in double from the chain's own inputs and parameters.
#include <algorithm>
#include <cmath>
#include <memory>

#include "graft/optimize/passes.hpp"
#include "reference.hpp"

namespace conformance {

namespace {

using graft::Variable;

/// A chain of elementwise ops over model inputs, to be fused.
class Chain {
public:
    /// A model input with values from `seed`.
    Variable* in(const std::string& name, const Order& o, const Shape& s, unsigned seed) {
        Variable* v = g_.add_variable(name, graft::DType::float32, o, s);
        g_.add_input(v);
        data_[name] = values(static_cast<std::size_t>(count(s)), seed);
        return v;
    }
    Variable* constant(const std::string& name, const std::vector<float>& d) {
        return g_.add_constant(name, OrderC, {static_cast<std::int64_t>(d.size())}, std::make_shared<const std::vector<float>>(d));
    }
    Variable* op(const std::string& type, graft::NamedVars ins, graft::Attributes a = {}) {
        return graft::add_op(g_, *reg_, type, g_.unique_name(type), std::move(ins), std::move(a))->output("y");
    }

    /// The example: the chain ending at `y` fused, its inputs as the fused op reads them (x0, x1,
    /// ...); the reference is `maths(x, pos)` where x(name) is model input `name` at pos.
    Example fuse(const std::string& name, Variable* y,
                 std::function<double(const std::function<double(const std::string&)>&, const Pos&)> maths) {
        g_.add_output(y);
        graft::optimize::make_pass("fuse_elementwise")->run(g_, *reg_);
        const auto ops = g_.operators();
        if (ops.size() != 1 || ops[0]->type() != "FusedElementwise")
            throw std::runtime_error("fuse_elementwise did not make the chain '" + name + "' one FusedElementwise op");
        Example e;
        e.op_type = "FusedElementwise";
        e.name = name;
        e.attrs = ops[0]->attrs();
        std::map<std::string, std::string> ports;
        for (const auto& [port, v] : ops[0]->inputs()) {
            Operand o{port, v->order(), v->shape(), v->is_constant(), {}};
            if (v->is_constant()) {
                o.data = static_cast<const graft::ConstantVariable*>(v)->data();
            } else {
                o.data = data_.at(v->name());
                ports[v->name()] = port;
            }
            e.inputs.push_back(std::move(o));
        }
        const std::string first = ports.begin()->first;
        e.reference = [ports, first, maths](const std::vector<Operand>& in) {
            const Operand& like_this = find(in, ports.at(first));
            return std::vector<Expected>{like("y", like_this, [&](const Pos& p, std::int64_t) {
                return maths([&](const std::string& input) { return at(find(in, ports.at(input)), p); }, p);
            })};
        };
        return e;
    }

private:
    graft::Graph g_;
    std::unique_ptr<graft::Registry> reg_ = graft::make_builtin_registry();
    std::map<std::string, std::vector<float>> data_;
};

graft::Attributes attrs(std::initializer_list<std::pair<const char*, std::string>> kv) {
    graft::Attributes a;
    for (const auto& [k, v] : kv) a.set(k, v);
    return a;
}

}  // namespace

std::vector<Example> fused_examples() {
    std::vector<Example> v;
    {
        Chain c;
        const std::vector<float> bias{0.5f, -1.f, 0.25f, 2.f};
        Variable* a = c.in("a", OrderNHWC, {2, 3, 2, 4}, 400);
        Variable* b = c.in("b", OrderNHWC, {2, 3, 2, 4}, 401);
        Variable* s = c.op("Merge", {{"x0", a}, {"x1", b}}, attrs({{"op", "add"}}));
        Variable* r = c.op("Activation", {{"x", s}}, attrs({{"activation", "relu"}}));
        Variable* y = c.op("BiasAdd", {{"x", r}, {"b", c.constant("bias", bias)}}, attrs({{"axis", "C"}}));
        v.push_back(c.fuse("Merge add, relu, BiasAdd over C", y, [bias](const auto& x, const Pos& p) {
            return std::max(x("a") + x("b"), 0.0) + bias[static_cast<std::size_t>(p.at("C"))];
        }));
    }
    {
        // a DAG (a is read by the first and the second op), scalar parameters last
        Chain c;
        const std::vector<float> mean{0.2f, -0.1f, 0.f, 0.4f}, var{0.5f, 1.5f, 0.2f, 1.f}, gamma{1.2f, 0.7f, -0.5f, 1.f},
            beta{0.1f, 0.f, -0.3f, 0.6f};
        Variable* a = c.in("a", OrderNTC, {2, 5, 4}, 410);
        Variable* b = c.in("b", OrderNTC, {2, 5, 4}, 411);
        Variable* d = c.in("d", OrderNTC, {2, 5, 4}, 412);
        Variable* m = c.op("Merge", {{"x0", a}, {"x1", b}, {"x2", d}}, attrs({{"op", "avg"}}));
        Variable* s = c.op("Merge", {{"x0", m}, {"x1", a}}, attrs({{"op", "sub"}}));
        graft::Attributes la = attrs({{"activation", "leaky_relu"}});
        la.set("alpha", 0.1);
        Variable* l = c.op("Activation", {{"x", s}}, la);
        graft::Attributes ba = attrs({{"axis", "C"}});
        ba.set("epsilon", 1e-3);
        Variable* n = c.op("BatchNormalization",
                           {{"x", l}, {"mean", c.constant("mean", mean)}, {"var", c.constant("var", var)},
                            {"gamma", c.constant("gamma", gamma)}, {"beta", c.constant("beta", beta)}},
                           ba);
        Variable* mx = c.op("Merge", {{"x0", n}, {"x1", b}}, attrs({{"op", "max"}}));
        graft::Attributes aa;
        aa.set("axes", std::vector<std::string>{});  // scalars: broadcast "*"
        Variable* y = c.op("Affine", {{"x", mx}, {"scale", c.constant("scale", {1.5f})}, {"shift", c.constant("shift", {-0.25f})}}, aa);
        v.push_back(c.fuse("avg of 3, sub, leaky_relu 0.1, BatchNormalization, max, scalar Affine", y, [=](const auto& x, const Pos& pos) {
            const auto k = static_cast<std::size_t>(pos.at("C"));
            double t = (x("a") + x("b") + x("d")) / 3 - x("a");
            t = t < 0 ? 0.1 * t : t;
            t = (t - mean[k]) / std::sqrt(var[k] + 1e-3) * gamma[k] + beta[k];
            return std::max(t, x("b")) * 1.5 - 0.25;
        }));
    }
    {
        // PReLU's alpha spans every axis but the batch, so a fused PReLU is over NC here (over
        // more axes its broadcast would tie the op to one layout)
        Chain c;
        const std::vector<float> alpha = values(10, 430, 0.f, 1.f), scale = values(10, 431), shift = values(10, 432);
        Variable* a = c.in("a", graft::OrderNC, {3, 10}, 433);
        Variable* b = c.in("b", graft::OrderNC, {3, 10}, 434);
        Variable* p = c.op("PReLU", {{"x", a}, {"alpha", c.constant("alpha", alpha)}}, attrs({{"batch_axis", "N"}}));
        graft::Attributes aa;
        aa.set("axes", std::vector<std::string>{"C"});
        Variable* f = c.op("Affine", {{"x", p}, {"scale", c.constant("scale", scale)}, {"shift", c.constant("shift", shift)}}, aa);
        Variable* s = c.op("Merge", {{"x0", f}, {"x1", b}}, attrs({{"op", "add"}}));
        graft::Attributes ea = attrs({{"activation", "elu"}});
        ea.set("alpha", 0.5);
        Variable* y = c.op("Activation", {{"x", s}}, ea);
        v.push_back(c.fuse("PReLU over C, Affine over C, add, elu 0.5", y, [=](const auto& x, const Pos& pos) {
            const auto k = static_cast<std::size_t>(pos.at("C"));
            const double pr = x("a") < 0 ? alpha[k] * x("a") : x("a");
            const double t = pr * scale[k] + shift[k] + x("b");
            return t > 0 ? t : 0.5 * (std::exp(t) - 1);
        }));
    }
    {
        // x * sigmoid(x): the input read at two steps of the program
        Chain c;
        Variable* a = c.in("a", OrderNHWC, {1, 3, 4, 5}, 420);
        Variable* b = c.in("b", OrderNHWC, {1, 3, 4, 5}, 421);
        Variable* s = c.op("Activation", {{"x", a}}, attrs({{"activation", "sigmoid"}}));
        Variable* m = c.op("Merge", {{"x0", a}, {"x1", s}}, attrs({{"op", "mul"}}));
        Variable* y = c.op("Merge", {{"x0", m}, {"x1", b}}, attrs({{"op", "min"}}));
        v.push_back(c.fuse("a * sigmoid(a), min with b", y, [](const auto& x, const Pos&) {
            return std::min(x("a") / (1 + std::exp(-x("a"))), x("b"));
        }));
    }
    return v;
}

}  // namespace conformance
