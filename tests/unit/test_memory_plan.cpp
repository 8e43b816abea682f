// The memory plan: in-place reuse and aliasing where the op allows it, never where a value is
// still needed; concat elimination where every input is one contiguous slice of the output; an
// independent check that no two values alive at once share bytes, over every fixture and bench
// model; and the arena against the naive sum of all intermediates.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <set>

#include <fmt/format.h>

#include "backend/native/program.hpp"
#include "test_passes_support.hpp"

namespace graft_test_memory_plan {

using namespace graft;
using graft_test::Net;
namespace fs = std::filesystem;

namespace {

Attributes act_attr(const std::string& fn) {
    Attributes a;
    a.set("activation", fn);
    return a;
}

std::size_t bytes(const Variable* v) { return (static_cast<std::size_t>(v->numel()) * 4 + 63) / 64 * 64; }
std::size_t exact(const Variable* v) { return static_cast<std::size_t>(v->numel()) * 4; }

/// Independent check of a plan: at every op, any two values that must both exist (read or
/// written by it, or alive across it) have disjoint bytes, unless they are the same bytes by an
/// alias op (reshape-like), or one overwrites the other in place at exactly this op, or one is a
/// slice of the other: an input of a Concat along an axis with only size-1 axes before it, placed
/// exactly at its position in the Concat's output (concat elimination; the output's buffer then
/// lives from the first slice written, and slices of one output must not overlap each other).
void check_plan(const Graph& g, const Registry& reg, const optimize::MemoryPlan& plan) {
    const auto order = g.topological_order();
    const std::size_t end = order.size() + 1;
    std::map<const Variable*, std::size_t> def, last;
    std::map<const Variable*, const Variable*> alias_of, slice_of;  // edges to the enclosing value
    std::function<const Variable*(const Variable*)> same_bytes = [&](const Variable* v) -> const Variable* {
        auto it = alias_of.find(v);
        return it == alias_of.end() ? v : same_bytes(it->second);
    };
    std::function<const Variable*(const Variable*)> root = [&](const Variable* v) -> const Variable* {
        v = same_bytes(v);
        auto it = slice_of.find(v);
        return it == slice_of.end() ? v : root(it->second);
    };
    // true if a's bytes are (by slice and alias edges) part of b's
    auto inside = [&](const Variable* a, const Variable* b) {
        b = same_bytes(b);
        for (a = same_bytes(a);; a = same_bytes(slice_of.at(a))) {
            if (a == b) return true;
            if (!slice_of.count(a)) return false;
        }
    };
    for (auto* v : g.inputs()) def[v] = 0, last[v] = 0;
    for (std::size_t i = 0; i < order.size(); ++i) {
        const Operator* op = order[i];
        for (auto& [n, v] : op->inputs())
            if (!v->is_constant()) last[v] = std::max(last[v], i + 1);
        for (auto& [n, v] : op->outputs()) def[v] = i + 1, last[v] = std::max(last[v], i + 1);
        const OpSchema& s = reg.op(op->type());
        if (s.alias && op->output_or_null("y") && !op->inputs().front().second->is_constant())
            alias_of[op->output("y")] = op->inputs().front().second;
        if (op->type() == "Concat") {
            const Variable* y = op->output("y");
            const auto ai = y->order().index(op->attrs().get_axis("axis"));
            bool outer1 = true;
            for (std::size_t k = 0; k < ai; ++k) outer1 = outer1 && y->shape()[k] == 1;
            std::size_t at = 0;
            for (auto& [n, v] : op->inputs()) {
                if (outer1 && !v->is_constant() && plan.offset.count(v) && plan.offset.at(v) == plan.offset.at(y) + at) {
                    INFO(v->describe() << " placed in " << y->describe());
                    CHECK(at + exact(v) <= exact(y));
                    slice_of[v] = y;
                }
                at += exact(v);
            }
        }
    }
    for (auto* v : g.outputs()) last[v] = end;
    // an alias or slice group lives as long as any member
    std::map<const Variable*, std::size_t> group_last;
    for (auto& [v, l] : last) group_last[root(v)] = std::max(group_last[root(v)], l);
    std::vector<const Variable*> vars;
    for (auto& [v, d] : def) vars.push_back(v);
    for (auto* v : vars) REQUIRE(plan.offset.count(v) == 1);
    auto size = [&](const Variable* v) { return root(v) != same_bytes(v) || slice_of.count(same_bytes(v)) ? exact(v) : bytes(v); };
    for (std::size_t a = 0; a < vars.size(); ++a)
        for (std::size_t b = a + 1; b < vars.size(); ++b) {
            const Variable *u = vars[a], *v = vars[b];
            const std::size_t ou = plan.offset.at(u), ov = plan.offset.at(v);
            if (ou + size(u) <= ov || ov + size(v) <= ou) continue;  // disjoint bytes
            if (inside(u, v) || inside(v, u)) continue;              // the same bytes, or a slice of the other
            const std::size_t lu = group_last[root(u)], lv = group_last[root(v)];
            const bool overlap = root(u) == root(v) || (def[u] <= lv && def[v] <= lu);
            if (!overlap) continue;
            // in place: the later one is written at the op where the earlier group's life ends
            const Variable* early = def[u] <= def[v] ? u : v;
            const Variable* late = early == u ? v : u;
            const Operator* p = late->producer();
            const bool inplace = root(u) != root(v) && p && reg.op(p->type()).inplace &&
                                 root(p->inputs().front().second) == root(early) && group_last[root(early)] == def[late];
            INFO(u->describe() << " @" << ou << " [" << def[u] << ", " << lu << "] and " << v->describe() << " @" << ov
                               << " [" << def[v] << ", " << lv << "]");
            CHECK(inplace);
        }
}

Graph at_batch(const Graph& g, const Registry& reg, std::int64_t batch) {
    Graph c = g.clone();
    for (Variable* v : c.inputs()) {
        Shape s = v->shape();
        for (auto& d : s)
            if (d == kDynamic) d = batch;
        v->set_type(v->order(), s);
    }
    infer_shapes(c, reg);
    return c;
}

}  // namespace

TEST_CASE("memory plan: a chain of elementwise ops runs in place", "[memory]") {
    Net n;
    auto* x = n.input("x", OrderNC, {4, 256});
    auto* a = n.y(n.op("Activation", "a", {{"x", x}}, act_attr("relu")));
    auto* b = n.y(n.op("Activation", "b", {{"x", a}}, act_attr("tanh")));
    auto* c = n.y(n.op("Activation", "c", {{"x", b}}, act_attr("sigmoid")));
    n.output(c);
    auto plan = optimize::plan_memory(n.g, *n.reg);
    CHECK(plan.inplace == 3);
    CHECK(plan.offset.at(x) == plan.offset.at(c));
    CHECK(plan.arena_bytes == 4 * 256 * 4);
    CHECK(plan.naive_bytes == 4 * 4 * 256 * 4);
    auto plain = optimize::plan_memory(n.g);
    CHECK(plain.inplace == 0);
    CHECK(plain.arena_bytes == 2 * 4 * 256 * 4);
    check_plan(n.g, *n.reg, plan);
}

TEST_CASE("memory plan: no in-place write over a value read later", "[memory]") {
    Net n;
    auto* x = n.input("x", OrderNC, {kDynamic, 64});
    auto* a = n.y(n.op("Activation", "a", {{"x", x}}, act_attr("tanh")));
    auto* b = n.y(n.op("Activation", "b", {{"x", a}}, act_attr("relu")));  // a is read again below
    Attributes m;
    m.set("op", "sub");
    n.output(n.y(n.op("Merge", "m", {{"x0", b}, {"x1", a}}, std::move(m))));
    auto g = at_batch(n.g, *n.reg, 3);
    auto plan = optimize::plan_memory(g, *n.reg);
    const Variable* av = g.find_variable("a");
    const Variable* bv = g.find_variable("b");
    CHECK(plan.offset.at(av) != plan.offset.at(bv));
    check_plan(g, *n.reg, plan);
    // and the values prove it: b - a = relu(a) - a = -min(a, 0) >= 0 (wrong if b overwrote a)
    auto in = graft_test::random_inputs(n.g, 3);
    Model model(n.g.clone(), *n.reg, 2);
    auto out = model.run(in);
    for (std::size_t i = 0; i < out[0].size(); ++i) {
        const float t = std::tanh(in[0].data()[i]);
        CHECK(out[0].data()[i] == Approx(t < 0 ? -t : 0.f).margin(1e-6));
    }
}

TEST_CASE("memory plan: a reshape aliases its input; a merge reading one value twice is not in place", "[memory]") {
    Net n;
    auto* x = n.input("x", OrderNC, {2, 12});
    auto* a = n.y(n.op("Activation", "a", {{"x", x}}, act_attr("relu")));
    Attributes r;
    r.set("in_order", OrderNC);
    r.set("out_order", OrderNTC);
    r.set("shape", std::vector<std::int64_t>{2, 3, 4});
    auto* b = n.y(n.op("Reshape", "r", {{"x", a}}, std::move(r)));
    Attributes m;
    m.set("op", "add");
    auto* c = n.y(n.op("Merge", "m", {{"x0", b}, {"x1", b}, {"x2", b}}, std::move(m)));
    n.output(c);
    auto plan = optimize::plan_memory(n.g, *n.reg);
    CHECK(plan.aliased == 1);
    CHECK(plan.offset.at(a) == plan.offset.at(b));
    CHECK(plan.offset.at(c) != plan.offset.at(b));
    check_plan(n.g, *n.reg, plan);
}

TEST_CASE("memory plan: valid and smaller than the naive sum for every fixture and bench model", "[memory][integration]") {
    std::vector<fs::path> models;
    for (const auto& e : fs::directory_iterator(fs::path(GRAFT_SOURCE_DIR) / "tests/fixtures/keras"))
        if (fs::exists(e.path() / "model.h5")) models.push_back(e.path() / "model.h5");
    for (const char* m : {"mlp", "smallcnn", "lstm"}) {
        fs::path p = fs::path(GRAFT_SHARED_DIR) / "bench/models" / m / "model.h5";
        if (fs::exists(p)) models.push_back(p);
    }
    std::sort(models.begin(), models.end());
    auto reg = make_builtin_registry();
    std::size_t checked = 0;
    for (const auto& p : models) {
        std::unique_ptr<Model> model;
        try {
            model = std::make_unique<Model>(load(p.string(), [&] {
                LoadOptions o;
                o.registry = reg.get();
                return o;
            }()));
        } catch (const UnsupportedError&) {
            continue;  // needs a plugin
        }
        INFO(p.string());
        if (has_free_sizes(model->graph())) continue;  // sizes other than the batch: planned per run (test_free_sizes)
        for (std::int64_t batch : {1, 3}) {
            auto g = at_batch(model->graph(), *reg, batch);
            auto plan = optimize::plan_memory(g, *reg);
            check_plan(g, *reg, plan);
            CHECK(plan.arena_bytes <= plan.naive_bytes);
            if (batch == 1)
                fmt::print("memory plan {:<40} ops {:>3}  arena {:>9} B  naive {:>9} B  in-place {:>2}  aliased {:>2}  concats elided {}\n",
                           p.parent_path().filename().string(), g.operators().size(), plan.arena_bytes, plan.naive_bytes,
                           plan.inplace, plan.aliased, plan.elided.size());
        }
        ++checked;
    }
    CHECK(checked >= 10);
}

// ---- concat elimination ---------------------------------------------------------------------

namespace {

Variable* linear(Net& n, Variable* x, std::int64_t in, std::int64_t out, const std::string& name) {
    Attributes a;
    a.set("axis", "C");
    return n.y(n.op("Linear", name, {{"x", x}, {"w", n.constant(name + "/w", OrderCN, {in, out})}, {"b", n.constant(name + "/b", OrderC, {out})}},
                    std::move(a)));
}

Variable* concat(Net& n, NamedVars ins, const std::string& axis, const std::string& name) {
    Attributes a;
    a.set("axis", axis);
    return n.y(n.op("Concat", name, std::move(ins), std::move(a)));
}

/// out[N, K] = x[N, I] . w + b for a Linear made by linear() above, in double.
std::vector<double> naive_linear(const Net& n, const std::vector<double>& x, std::int64_t N, std::int64_t I, const std::string& name) {
    const auto& w = static_cast<const ConstantVariable*>(n.g.find_variable(name + "/w"))->data();
    const auto& b = static_cast<const ConstantVariable*>(n.g.find_variable(name + "/b"))->data();
    const std::int64_t K = static_cast<std::int64_t>(b.size());
    std::vector<double> y(static_cast<std::size_t>(N * K));
    for (std::int64_t r = 0; r < N; ++r)
        for (std::int64_t k = 0; k < K; ++k) {
            double s = b[static_cast<std::size_t>(k)];
            for (std::int64_t i = 0; i < I; ++i) s += x[static_cast<std::size_t>(r * I + i)] * w[static_cast<std::size_t>(i * K + k)];
            y[static_cast<std::size_t>(r * K + k)] = s;
        }
    return y;
}

std::size_t elided_at(const Graph& g, const Registry& reg, std::int64_t batch) {
    auto c = at_batch(g, reg, batch);
    auto plan = optimize::plan_memory(c, reg);
    check_plan(c, reg, plan);
    return plan.elided.size();
}

}  // namespace

TEST_CASE("memory plan: a Concat of contiguous slices is elided: producers write into the output", "[memory][concat]") {
    // x [N, 16] -> a, b = Linear 16 -> 16 each -> y = Concat(a, b) [N, 32] -> out = Linear 32 -> 16
    Net n;
    auto* x = n.input("x", OrderNC, {kDynamic, 16});
    auto* a = linear(n, x, 16, 16, "a");
    auto* b = linear(n, x, 16, 16, "b");
    auto* y = concat(n, {{"x0", a}, {"x1", b}}, "C", "cat");
    n.output(linear(n, y, 32, 16, "out"));

    // batch 1: every axis before C has size 1, so a and b are the two halves of y
    auto g1 = at_batch(n.g, *n.reg, 1);
    auto plan = optimize::plan_memory(g1, *n.reg);
    check_plan(g1, *n.reg, plan);
    REQUIRE(plan.elided.size() == 1);
    CHECK(plan.elided.front()->name() == "cat");
    const auto off = [&](const char* v) { return plan.offset.at(g1.find_variable(v)); };
    CHECK(off("a") == off("cat"));
    CHECK(off("b") == off("cat") + 16 * 4);
    // x (64 B) and y (128 B, holding a and b) alive together, then y and out (64 B): 192 bytes,
    // where a, b and y alive together at the Concat took 256
    CHECK(plan.arena_bytes == 192);
    auto p1 = native::Program::compile(g1.clone(), *n.reg);
    CHECK(p1->elided() == 1);
    CHECK(p1->kernel_count() == 3);  // no kernel for the Concat

    // batch 2: a and b interleave in y (row by row): nothing elided, the Concat copies
    auto g2 = at_batch(n.g, *n.reg, 2);
    auto plan2 = optimize::plan_memory(g2, *n.reg);
    check_plan(g2, *n.reg, plan2);
    CHECK(plan2.elided.empty());
    auto p2 = native::Program::compile(g2.clone(), *n.reg);
    CHECK(p2->elided() == 0);
    CHECK(p2->kernel_count() == 4);

    // the values: each row alone (elided) equals the batch-2 run (copied) and a naive reference
    Model m(n.g.clone(), *n.reg, 0);
    const auto both = graft_test::random_inputs(n.g, 2)[0];
    const auto copied = m.run({both})[0];
    std::vector<double> xd(both.data(), both.data() + both.size());
    const auto ref = naive_linear(n, [&] {
        auto ad = naive_linear(n, xd, 2, 16, "a"), bd = naive_linear(n, xd, 2, 16, "b");
        std::vector<double> cat;
        for (std::size_t r = 0; r < 2; ++r) {
            cat.insert(cat.end(), ad.begin() + r * 16, ad.begin() + r * 16 + 16);
            cat.insert(cat.end(), bd.begin() + r * 16, bd.begin() + r * 16 + 16);
        }
        return cat;
    }(), 2, 32, "out");
    for (std::int64_t r = 0; r < 2; ++r) {
        const auto row = m.run({Tensor({1, 16}, both.data() + r * 16, 16)})[0];
        for (std::size_t k = 0; k < 16; ++k) {
            CHECK(row.data()[k] == Approx(copied.data()[r * 16 + k]).margin(1e-5));
            CHECK(row.data()[k] == Approx(ref[static_cast<std::size_t>(r) * 16 + k]).margin(1e-4));
        }
    }
}

TEST_CASE("memory plan: no concat elimination where an input is needed elsewhere or is not one slice", "[memory][concat]") {
    SECTION("an input is also read by another op") {
        Net n;
        auto* x = n.input("x", OrderNC, {kDynamic, 8});
        auto* a = linear(n, x, 8, 8, "a");
        n.output(concat(n, {{"x0", a}, {"x1", linear(n, x, 8, 8, "b")}}, "C", "cat"));
        n.output(n.y(n.op("Activation", "relu", {{"x", a}}, act_attr("relu"))));
        CHECK(elided_at(n.g, *n.reg, 1) == 0);
    }
    SECTION("an input is a graph output") {
        Net n;
        auto* x = n.input("x", OrderNC, {kDynamic, 8});
        auto* a = linear(n, x, 8, 8, "a");
        n.output(concat(n, {{"x0", a}, {"x1", linear(n, x, 8, 8, "b")}}, "C", "cat"));
        n.output(a);
        CHECK(elided_at(n.g, *n.reg, 1) == 0);
    }
    SECTION("an input is a graph input, or read twice") {
        Net n;
        auto* x = n.input("x", OrderNC, {kDynamic, 8});
        auto* a = linear(n, x, 8, 8, "a");
        n.output(concat(n, {{"x0", a}, {"x1", x}}, "C", "cat1"));
        auto* b = linear(n, x, 8, 8, "b");
        n.output(concat(n, {{"x0", b}, {"x1", b}}, "C", "cat2"));
        CHECK(elided_at(n.g, *n.reg, 1) == 0);
    }
    SECTION("an input is a view (reshape) of another value") {
        Net n;
        auto* x = n.input("x", OrderNC, {kDynamic, 8});
        Attributes r;
        r.set("in_order", OrderNC);
        r.set("out_order", OrderNC);
        r.set("shape", std::vector<std::int64_t>{kDynamic, 8});
        auto* v = n.y(n.op("Reshape", "view", {{"x", linear(n, x, 8, 8, "a")}}, std::move(r)));
        n.output(concat(n, {{"x0", v}, {"x1", linear(n, x, 8, 8, "b")}}, "C", "cat"));
        CHECK(elided_at(n.g, *n.reg, 1) == 0);
    }
    SECTION("channels of an NHWC image: slices only when H = W = 1 (and the batch is 1)") {
        for (std::int64_t hw : {2, 1}) {
            Net n;
            auto* x = n.input("x", OrderNHWC, {kDynamic, hw, hw, 3});
            auto* a = n.y(n.op("Activation", "a", {{"x", x}}, act_attr("relu")));
            auto* b = n.y(n.op("Activation", "b", {{"x", x}}, act_attr("tanh")));
            n.output(concat(n, {{"x0", a}, {"x1", b}}, "C", "cat"));
            INFO("H = W = " << hw);
            CHECK(elided_at(n.g, *n.reg, 1) == (hw == 1 ? 1u : 0u));
            CHECK(elided_at(n.g, *n.reg, 2) == 0);
        }
    }
}

TEST_CASE("memory plan: nested Concats along T, then an in-place op over the output", "[memory][concat]") {
    // [1, T, C] along T: the batch is the only axis before T
    Net n;
    auto* x = n.input("x", OrderNTC, {kDynamic, 3, 4});
    auto* a = n.y(n.op("Activation", "a", {{"x", x}}, act_attr("relu")));
    auto* b = n.y(n.op("Activation", "b", {{"x", x}}, act_attr("tanh")));
    auto* c = n.y(n.op("Activation", "c", {{"x", x}}, act_attr("sigmoid")));
    auto* inner = concat(n, {{"x0", a}, {"x1", b}}, "T", "inner");
    auto* outer = concat(n, {{"x0", c}, {"x1", inner}}, "T", "outer");
    n.output(n.y(n.op("Activation", "neg", {{"x", outer}}, act_attr("softsign"))));
    CHECK(elided_at(n.g, *n.reg, 1) == 2);
    CHECK(elided_at(n.g, *n.reg, 3) == 0);
    auto g1 = at_batch(n.g, *n.reg, 1);
    auto plan = optimize::plan_memory(g1, *n.reg);
    const auto off = [&](const char* v) { return plan.offset.at(g1.find_variable(v)); };
    CHECK(off("c") == off("outer"));
    CHECK(off("inner") == off("outer") + 12 * 4);
    CHECK(off("a") == off("inner"));
    CHECK(off("b") == off("inner") + 12 * 4);
    CHECK(off("neg") == off("outer"));  // softsign in place over the concatenation
    // values: per row against an independent reference
    Model m(n.g.clone(), *n.reg, 0);
    const auto in = graft_test::random_inputs(n.g, 2)[0];
    for (std::int64_t r = 0; r < 2; ++r) {
        const float* xr = in.data() + r * 12;
        const auto got = m.run({Tensor({1, 3, 4}, xr, 12)})[0];
        REQUIRE(got.size() == 36);
        for (std::size_t i = 0; i < 36; ++i) {
            const double v = xr[i % 12];
            const double pre = i < 12 ? 1 / (1 + std::exp(-v)) : i < 24 ? std::max(v, 0.0) : std::tanh(v);
            CHECK(got.data()[i] == Approx(pre / (1 + std::fabs(pre))).margin(1e-5));
        }
    }
}

}  // namespace graft_test_memory_plan
