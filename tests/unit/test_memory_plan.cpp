// The memory plan: in-place reuse and aliasing where the op allows it, never where a value is
// still needed; an independent check that no two values alive at once share bytes, over every
// fixture and bench model; and the arena against the naive sum of all intermediates.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "test_passes_support.hpp"

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

/// Independent check of a plan: at every op, any two values that must both exist (read or
/// written by it, or alive across it) have disjoint bytes, unless they are the same bytes by an
/// alias op (reshape-like), or one overwrites the other in place at exactly this op.
void check_plan(const Graph& g, const Registry& reg, const optimize::MemoryPlan& plan) {
    const auto order = g.topological_order();
    const std::size_t end = order.size() + 1;
    std::map<const Variable*, std::size_t> def, last;
    std::map<const Variable*, const Variable*> alias_root;
    std::function<const Variable*(const Variable*)> root = [&](const Variable* v) -> const Variable* {
        auto it = alias_root.find(v);
        return it == alias_root.end() ? v : root(it->second);
    };
    for (auto* v : g.inputs()) def[v] = 0, last[v] = 0;
    for (std::size_t i = 0; i < order.size(); ++i) {
        for (auto& [n, v] : order[i]->inputs())
            if (!v->is_constant()) last[v] = std::max(last[v], i + 1);
        for (auto& [n, v] : order[i]->outputs()) def[v] = i + 1, last[v] = std::max(last[v], i + 1);
        const OpSchema& s = reg.op(order[i]->type());
        if (s.alias && order[i]->output_or_null("y") && !order[i]->inputs().front().second->is_constant())
            alias_root[order[i]->output("y")] = order[i]->inputs().front().second;
    }
    for (auto* v : g.outputs()) last[v] = end;
    // an alias group lives as long as any member
    std::map<const Variable*, std::size_t> group_last;
    for (auto& [v, l] : last) group_last[root(v)] = std::max(group_last[root(v)], l);
    std::vector<const Variable*> vars;
    for (auto& [v, d] : def) vars.push_back(v);
    for (auto* v : vars) REQUIRE(plan.offset.count(v) == 1);
    std::size_t checked = 0;
    for (std::size_t a = 0; a < vars.size(); ++a)
        for (std::size_t b = a + 1; b < vars.size(); ++b) {
            const Variable *u = vars[a], *v = vars[b];
            const std::size_t ou = plan.offset.at(u), ov = plan.offset.at(v);
            if (ou + bytes(u) <= ov || ov + bytes(v) <= ou) continue;  // disjoint bytes
            if (root(u) == root(v)) continue;                           // the same bytes by aliasing
            const std::size_t lu = group_last[root(u)], lv = group_last[root(v)];
            const bool overlap = def[u] <= lv && def[v] <= lu;
            if (!overlap) continue;
            // in place: the later one is written at the op where the earlier group's life ends
            const Variable* early = def[u] <= def[v] ? u : v;
            const Variable* late = early == u ? v : u;
            const Operator* p = late->producer();
            const bool inplace = p && reg.op(p->type()).inplace && root(p->inputs().front().second) == root(early) &&
                                 group_last[root(early)] == def[late];
            INFO(u->describe() << " @" << ou << " [" << def[u] << ", " << lu << "] and " << v->describe() << " @" << ov
                               << " [" << def[v] << ", " << lv << "]");
            CHECK(inplace);
            ++checked;
        }
    (void)checked;
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
        for (std::int64_t batch : {1, 3}) {
            auto g = at_batch(model->graph(), *reg, batch);
            auto plan = optimize::plan_memory(g, *reg);
            check_plan(g, *reg, plan);
            CHECK(plan.arena_bytes <= plan.naive_bytes);
            if (batch == 1)
                fmt::print("memory plan {:<40} ops {:>3}  arena {:>9} B  naive {:>9} B  in-place {:>2}  aliased {:>2}\n",
                           p.parent_path().filename().string(), g.operators().size(), plan.arena_bytes, plan.naive_bytes,
                           plan.inplace, plan.aliased);
        }
        ++checked;
    }
    CHECK(checked >= 10);
}
