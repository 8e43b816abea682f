#include "frontend/onnx/patterns.hpp"

#include <cmath>
#include <map>
#include <optional>
#include <set>

namespace graft::onnx {

namespace {

using Node = ::onnx::NodeProto;

bool near(double a, double b) { return std::fabs(a - b) <= 1e-5 * std::max(1.0, std::fabs(b)); }

const ::onnx::AttributeProto* attribute(const Node& n, const std::string& name) {
    for (const auto& a : n.attribute())
        if (a.name() == name) return &a;
    return nullptr;
}

class Matcher {
public:
    Matcher(const ModelFile& file, const std::function<const HostTensor*(const std::string&)>& initializer)
        : file_(file), graph_(file.proto.graph()), initializer_(initializer) {
        for (int k = 0; k < graph_.node_size(); ++k) {
            const Node& n = graph_.node(k);
            index_[&n] = k;
            for (const auto& out : n.output())
                if (!out.empty()) producer_[out] = k;
            for (const auto& in : n.input()) {  // a node that reads a value twice (Mul(d, d)) is one reader
                if (in.empty()) continue;
                auto& r = readers_[in];
                if (r.empty() || r.back() != k) r.push_back(k);
            }
        }
        for (const auto& o : graph_.output()) outputs_.insert(o.name());
        removed_.assign(static_cast<std::size_t>(graph_.node_size()), false);
    }

    FusedNodes run() {
        for (int k = 0; k < graph_.node_size(); ++k) {
            if (removed_[static_cast<std::size_t>(k)]) continue;
            const std::string& op = graph_.node(k).op_type();
            if (op == "Div") layer_norm(k);
            else if (op == "Erf") gelu(k);
            else if (op == "Sigmoid") times_x(k, "Swish");
            else if (op == "HardSigmoid") hard_swish(k);
        }
        for (int k = 0; k < graph_.node_size(); ++k) {
            auto it = made_at_.find(k);
            if (it != made_at_.end()) out_.nodes.push_back(it->second);
            else if (!removed_[static_cast<std::size_t>(k)]) out_.nodes.push_back(&graph_.node(k));
        }
        return std::move(out_);
    }

private:
    bool standard(const Node& n) const { return n.domain().empty() || n.domain() == "ai.onnx"; }

    /// The node that produces `value` if it is a live `op` of the default domain.
    const Node* producer(const std::string& value, const char* op) const {
        auto it = producer_.find(value);
        if (it == producer_.end() || removed_[static_cast<std::size_t>(it->second)]) return nullptr;
        const Node& n = graph_.node(it->second);
        return n.op_type() == op && standard(n) ? &n : nullptr;
    }

    /// The one node that reads `value`, if `value` is not a graph output, nothing else reads it and
    /// that node is a live `op` of the default domain.
    const Node* sole_reader(const std::string& value, const char* op) const {
        auto it = readers_.find(value);
        if (outputs_.count(value) || it == readers_.end() || it->second.size() != 1) return nullptr;
        const int k = it->second[0];
        const Node& n = graph_.node(k);
        if (removed_[static_cast<std::size_t>(k)] || n.op_type() != op || !standard(n)) return nullptr;
        return &n;
    }

    std::size_t readers(const std::string& value) const {
        auto it = readers_.find(value);
        return it == readers_.end() ? 0 : it->second.size();
    }

    /// The value of an initializer or of a Constant node's output, or nullptr.
    const HostTensor* constant(const std::string& value) {
        if (const HostTensor* t = initializer_(value)) return t;
        auto cached = constants_.find(value);
        if (cached != constants_.end()) return &cached->second;
        const Node* n = producer(value, "Constant");
        if (!n) return nullptr;
        HostTensor t;
        if (const auto* a = attribute(*n, "value"); a && a->has_t()) {
            t = read_tensor(a->t(), file_, file_.path + ": Constant '" + value + "'");
        } else if (const auto* f = attribute(*n, "value_float")) {
            t.shape = {};
            t.f = {f->f()};
        } else {
            return nullptr;
        }
        return &constants_.emplace(value, std::move(t)).first->second;
    }

    /// A constant holding one number.
    std::optional<double> scalar(const std::string& value) {
        const HostTensor* t = constant(value);
        if (!t || t->numel() != 1) return std::nullopt;
        return t->is_float() ? static_cast<double>(t->f[0]) : static_cast<double>(t->i[0]);
    }

    bool scalar_is(const std::string& value, double want) {
        const auto v = scalar(value);
        return v && near(*v, want);
    }

    /// For a binary node with `known` as one input: the other input, or "" if neither is.
    static std::string other(const Node& n, const std::string& known) {
        if (n.input_size() != 2) return "";
        if (n.input(0) == known) return n.input(1);
        if (n.input(1) == known) return n.input(0);
        return "";
    }

    /// For a binary node with a scalar constant `want` as one input: the other input, or "".
    std::string other_than_scalar(const Node& n, double want) {
        if (n.input_size() != 2) return "";
        if (scalar_is(n.input(1), want)) return n.input(0);
        if (scalar_is(n.input(0), want)) return n.input(1);
        return "";
    }

    /// Replaces `chain` (the last node writes the result) by a node of type `op`.
    Node& replace(const std::vector<const Node*>& chain, const std::string& op, std::vector<std::string> inputs) {
        Node& made = out_.made.emplace_back();
        const Node& last = *chain.back();
        made.set_op_type(op);
        made.set_name((last.name().empty() ? last.output(0) : last.name()) + "/" + op);  // "/ln/Add_1/LayerNormalization"
        for (auto& in : inputs) made.add_input(std::move(in));
        made.add_output(last.output(0));
        for (const Node* n : chain) removed_[static_cast<std::size_t>(index(*n))] = true;
        made_at_[index(last)] = &made;
        ++out_.fused;
        return made;
    }

    int index(const Node& n) const { return index_.at(&n); }

    static void set_float(Node& n, const char* name, float v) {
        auto* a = n.add_attribute();
        a->set_name(name);
        a->set_type(::onnx::AttributeProto::FLOAT);
        a->set_f(v);
    }

    /// Axes of a ReduceMean with keepdims 1 and its axes as an attribute, all negative and the
    /// trailing ones (-k .. -1): k, or 0 when the node is anything else.
    static int trailing_mean_axes(const Node& n) {
        if (n.input_size() != 1) return 0;
        const auto* keep = attribute(n, "keepdims");
        if (keep && keep->i() != 1) return 0;
        const auto* axes = attribute(n, "axes");
        if (!axes || axes->ints_size() == 0) return 0;
        std::set<std::int64_t> s(axes->ints().begin(), axes->ints().end());
        const int k = static_cast<int>(s.size());
        if (static_cast<int>(axes->ints_size()) != k || *s.begin() != -k || *s.rbegin() != -1) return 0;
        return k;
    }

    /// n = Div(d, Sqrt(Add(ReduceMean(Pow(d, 2)), eps))) with d = Sub(x, ReduceMean(x)), then
    /// optionally Mul by a constant gamma and Add a constant beta.
    void layer_norm(int k) {
        const Node& div = graph_.node(k);
        if (div.input_size() != 2) return;
        const std::string& d = div.input(0);
        const Node* sqrt = producer(div.input(1), "Sqrt");
        const Node* sub = producer(d, "Sub");
        if (!sqrt || !sub || readers(sqrt->output(0)) != 1 || readers(d) != 2 || outputs_.count(d)) return;
        const Node* add_eps = producer(sqrt->input(0), "Add");
        if (!add_eps || !sole_reader(add_eps->output(0), "Sqrt")) return;
        const Node* var = nullptr;
        std::optional<double> eps;
        for (int i = 0; i < 2 && !var; ++i)
            if ((var = producer(add_eps->input(i), "ReduceMean"))) eps = scalar(add_eps->input(1 - i));
        if (!var || !eps || !sole_reader(var->output(0), "Add")) return;
        const Node* pow = producer(var->input(0), "Pow");
        const Node* square = pow ? pow : producer(var->input(0), "Mul");
        if (!square || !sole_reader(square->output(0), "ReduceMean")) return;
        if (pow ? (pow->input(0) != d || !scalar_is(pow->input(1), 2.0)) : (square->input(0) != d || square->input(1) != d)) return;
        const Node* mean = producer(sub->input(1), "ReduceMean");
        if (!mean || mean->input(0) != sub->input(0) || !sole_reader(mean->output(0), "Sub")) return;
        const int axes = trailing_mean_axes(*mean);
        if (axes == 0 || trailing_mean_axes(*var) != axes) return;
        // the affine part: constants no longer than the normalized axes, so they broadcast over them
        auto affine = [&](const Node* n, const std::string& from) -> std::string {
            if (!n || outputs_.count(from)) return "";
            const std::string c = other(*n, from);
            const HostTensor* t = c.empty() ? nullptr : constant(c);
            return t && t->is_float() && static_cast<int>(t->shape.size()) <= axes ? c : "";
        };
        std::vector<const Node*> chain{mean, sub, square, var, add_eps, sqrt, &div};
        std::vector<std::string> inputs{sub->input(0), "", ""};
        const Node* mul = sole_reader(div.output(0), "Mul");
        if (!(inputs[1] = affine(mul, div.output(0))).empty()) {
            chain.push_back(mul);
            const Node* add = sole_reader(mul->output(0), "Add");
            if (!(inputs[2] = affine(add, mul->output(0))).empty()) chain.push_back(add);
        }
        if (inputs[2].empty()) inputs.pop_back();
        Node& made = replace(chain, "LayerNormalization", std::move(inputs));
        auto* axis = made.add_attribute();
        axis->set_name("axis");
        axis->set_type(::onnx::AttributeProto::INT);
        axis->set_i(-axes);
        set_float(made, "epsilon", static_cast<float>(*eps));
    }

    /// y = x * 0.5 * (1 + Erf(x / sqrt(2))) in the orders exporters write it.
    void gelu(int k) {
        const Node& erf = graph_.node(k);
        if (erf.input_size() != 1) return;
        const Node* scale = producer(erf.input(0), "Div");
        std::string x;
        if (scale) x = other_than_scalar(*scale, std::sqrt(2.0));
        if (!scale || x != scale->input(0)) {
            scale = producer(erf.input(0), "Mul");
            x = scale ? other_than_scalar(*scale, std::sqrt(0.5)) : "";
        }
        if (x.empty() || !sole_reader(scale->output(0), "Erf")) return;
        const Node* plus1 = sole_reader(erf.output(0), "Add");
        if (!plus1 || other_than_scalar(*plus1, 1.0) != erf.output(0)) return;
        const Node* m1 = sole_reader(plus1->output(0), "Mul");
        if (!m1) return;
        const std::string with = other(*m1, plus1->output(0));
        std::vector<const Node*> chain{scale, &erf, plus1, m1};
        if (with == x) {  // (x * (1 + erf)) * 0.5
            const Node* half = sole_reader(m1->output(0), "Mul");
            if (!half || other_than_scalar(*half, 0.5) != m1->output(0)) return;
            chain.push_back(half);
        } else if (const Node* h = producer(with, "Mul"); h && other_than_scalar(*h, 0.5) == x && sole_reader(with, "Mul")) {
            chain.insert(chain.begin(), h);  // (x * 0.5) * (1 + erf)
        } else if (scalar_is(with, 0.5)) {     // ((1 + erf) * 0.5) * x
            const Node* mx = sole_reader(m1->output(0), "Mul");
            if (!mx || other(*mx, m1->output(0)) != x) return;
            chain.push_back(mx);
        } else {
            return;
        }
        replace(chain, "Gelu", {x});
    }

    /// y = x * f(x) for a unary node f at k whose result only that Mul reads.
    bool times_x(int k, const std::string& op) {
        const Node& f = graph_.node(k);
        if (f.input_size() != 1) return false;
        const Node* mul = sole_reader(f.output(0), "Mul");
        if (!mul || other(*mul, f.output(0)) != f.input(0)) return false;
        replace({&f, mul}, op, {f.input(0)});
        return true;
    }

    /// HardSigmoid with alpha 1/6 and beta 0.5, times its input: HardSwish.
    void hard_swish(int k) {
        const Node& hs = graph_.node(k);
        const auto* alpha = attribute(hs, "alpha");  // defaults 0.2 and 0.5
        const auto* beta = attribute(hs, "beta");
        if (alpha && near(alpha->f(), 1.0 / 6.0) && (!beta || near(beta->f(), 0.5))) times_x(k, "HardSwish");
    }

    const ModelFile& file_;
    const ::onnx::GraphProto& graph_;
    const std::function<const HostTensor*(const std::string&)>& initializer_;
    std::map<const Node*, int> index_;
    std::map<std::string, int> producer_;
    std::map<std::string, std::vector<int>> readers_;
    std::set<std::string> outputs_;
    std::vector<bool> removed_;
    std::map<int, const Node*> made_at_;
    std::map<std::string, HostTensor> constants_;
    FusedNodes out_;
};

}  // namespace

FusedNodes fuse_patterns(const ModelFile& file, const std::function<const HostTensor*(const std::string&)>& initializer) {
    return Matcher(file, initializer).run();
}

}  // namespace graft::onnx
