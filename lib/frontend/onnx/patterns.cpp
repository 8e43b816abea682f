#include "frontend/onnx/patterns.hpp"

#include <algorithm>
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
            else if (op == "Softmax") self_attention(k);
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
    const HostTensor* constant(const std::string& name) {
        std::string value = name;  // through Identity nodes (torch's shared weights), a few at most
        for (int hop = 0; hop < 8; ++hop) {
            const Node* id = producer(value, "Identity");
            if (!id || id->input_size() != 1) break;
            value = id->input(0);
        }
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

    /// A Transpose with exactly this perm attribute.
    static bool perm_is(const Node* t, std::initializer_list<std::int64_t> want) {
        const auto* perm = t ? attribute(*t, "perm") : nullptr;
        return perm && std::equal(perm->ints().begin(), perm->ints().end(), want.begin(), want.end());
    }

    /// heads = Transpose(Reshape(Slice(qkv, ...), shape), perm): the Slice, or null.
    const Node* head_split(const std::string& value, std::initializer_list<std::int64_t> perm, std::vector<const Node*>& chain) {
        const Node* t = producer(value, "Transpose");
        if (!perm_is(t, perm)) return nullptr;
        const Node* r = producer(t->input(0), "Reshape");
        if (!r || r->input_size() != 2) return nullptr;
        const Node* slice = producer(r->input(0), "Slice");
        if (!slice || slice->input_size() < 3) return nullptr;  // Slice-1 (attributes) is not torch's
        chain.push_back(r);
        chain.push_back(t);
        return slice;
    }

    /// A constant float input (an initializer or a Constant's output).
    bool is_float_constant(const std::string& value) {
        const HostTensor* t = value.empty() ? nullptr : constant(value);
        return t && t->is_float();
    }

    /// Gemm with constant B and C, alpha and beta 1.
    bool plain_gemm(const Node* g) {
        if (!g || g->input_size() != 3 || !is_float_constant(g->input(1)) || !is_float_constant(g->input(2))) return false;
        for (const char* a : {"alpha", "beta"})
            if (const auto* v = attribute(*g, a); v && v->f() != 1.f) return false;
        return !attribute(*g, "transA") || attribute(*g, "transA")->i() == 0;
    }

    /// PyTorch's self-attention at Softmax node k (patterns.hpp): y = Reshape(Transpose(
    /// MatMul(Softmax(MatMul(scale(Q), K)), V), [1, 0, 2]), shape) with Q, K, V the heads of three
    /// Slices of one projection, [T, B*H, dh] transposed by [1, 0, 2] (Q, V) and [1, 2, 0] (K).
    /// With batch_first, the projection is Add(b, MatMul(Transpose(x, [1, 0, 2]), W)) and the
    /// result goes through Gemm (out_proj), Reshape and Transpose([1, 0, 2]) back: then the whole
    /// block from x is one node (BatchFirstSelfAttention), whose graph keeps x's layout.
    void self_attention(int k) {
        const Node& sm = graph_.node(k);
        if (const auto* axis = attribute(sm, "axis")) {
            if (axis->i() != -1 && axis->i() != 2) return;
        } else if (file_.opset(sm.domain(), sm.name()) < 13) {
            return;  // the default axis 1 before opset 13
        }
        const Node* scores = producer(sm.input(0), "MatMul");
        const Node* mix = sole_reader(sm.output(0), "MatMul");
        if (!scores || !mix || mix->input(0) != sm.output(0) || !sole_reader(scores->output(0), "Softmax")) return;
        std::vector<const Node*> chain;
        std::string qh = scores->input(0), scale, scale_op;
        for (const char* op : {"Div", "Mul"})
            if (const Node* n = producer(qh, op); n && scale_op.empty()) {
                const HostTensor* c = constant(n->input(1));
                if (!c || !c->is_float() || c->numel() != 1) return;
                chain.push_back(n);
                scale = n->input(1), scale_op = op, qh = n->input(0);
            }
        const Node* q = head_split(qh, {1, 0, 2}, chain);
        const Node* kk = head_split(scores->input(1), {1, 2, 0}, chain);
        const Node* v = head_split(mix->input(1), {1, 0, 2}, chain);
        if (!q || !kk || !v || q->input(0) != kk->input(0) || q->input(0) != v->input(0)) return;
        const Node* back = sole_reader(mix->output(0), "Transpose");
        const Node* out = back ? sole_reader(back->output(0), "Reshape") : nullptr;
        if (!perm_is(back, {1, 0, 2}) || !out || out->input_size() != 2) return;
        for (const Node* n : {scores, &sm, mix, back, out}) chain.push_back(n);
        std::vector<std::string> core;  // the inputs both forms check
        for (const Node* s : {q, kk, v})
            for (int i = 1; i <= 4; ++i) core.push_back(i < s->input_size() ? s->input(i) : "");
        for (const Node* n : chain)
            if (n->op_type() == "Reshape") core.push_back(n->input(1));  // q, k, v's, then the result's
        core.push_back(scale);

        // batch_first: the projection from x and the way back
        const std::string& qkv = q->input(0);
        const Node* add = producer(qkv, "Add");
        const Node* mm = add ? producer(add->input(0), "MatMul") : nullptr;
        if (add && !mm) mm = producer(add->input(1), "MatMul");
        const Node* in = mm ? producer(mm->input(0), "Transpose") : nullptr;
        const Node* gemm = sole_reader(out->output(0), "Gemm");
        const Node* r4 = nullptr;
        if (gemm)
            for (int r : readers_[gemm->output(0)])
                if (graph_.node(r).op_type() == "Reshape" && graph_.node(r).input(0) == gemm->output(0)) r4 = &graph_.node(r);
        const Node* last = r4 ? sole_reader(r4->output(0), "Transpose") : nullptr;
        const bool batch_first = perm_is(in, {1, 0, 2}) && is_float_constant(mm->input(1)) &&
                                 is_float_constant(other(*add, mm->output(0))) && plain_gemm(gemm) && r4 &&
                                 r4->input_size() == 2 && perm_is(last, {1, 0, 2});
        std::vector<std::string> inputs;
        if (batch_first) {
            for (const Node* n : {in, mm, add, gemm, r4, last}) chain.push_back(n);
            inputs = {in->input(0), mm->input(1), other(*add, mm->output(0))};
            inputs.insert(inputs.end(), core.begin(), core.end());
            inputs.insert(inputs.end(), {gemm->input(1), gemm->input(2), r4->input(1)});
        } else {
            inputs = {qkv};
            inputs.insert(inputs.end(), core.begin(), core.end());
            last = out;
        }
        // Only what the result alone reads goes: the rest (torch's Shape of a Slice, say) stays
        // and converts as usual; what of it nothing reads then, the optimizer drops.
        std::sort(chain.begin(), chain.end(), [this](const Node* a, const Node* b) { return index(*a) < index(*b); });
        chain.erase(std::unique(chain.begin(), chain.end()), chain.end());  // k and v may share a Reshape
        std::set<int> gone{index(*last)};
        std::vector<const Node*> removed{last};
        for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
            if (*it == last) continue;
            bool only_inside = true;
            for (const auto& o : (*it)->output()) {
                if (outputs_.count(o)) only_inside = false;
                for (int r : readers_[o]) only_inside = only_inside && gone.count(r);
            }
            if (!only_inside) continue;
            gone.insert(index(**it));
            removed.push_back(*it);
        }
        std::reverse(removed.begin(), removed.end());
        Node& made = replace(removed, batch_first ? "BatchFirstSelfAttention" : "PackedSelfAttention", std::move(inputs));
        made.set_domain(kFusedDomain);
        auto* div = made.add_attribute();
        div->set_name("scale_divides");
        div->set_type(::onnx::AttributeProto::INT);
        div->set_i(scale_op == "Div" ? 1 : 0);
        if (batch_first) {
            auto* tb = made.add_attribute();
            tb->set_name("trans_out");
            tb->set_type(::onnx::AttributeProto::INT);
            tb->set_i(attribute(*gemm, "transB") ? attribute(*gemm, "transB")->i() : 0);
        }
        out_.fallback[&made] = removed;
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
