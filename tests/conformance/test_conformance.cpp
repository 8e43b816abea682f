// The per-op conformance suite (see conformance.hpp): every example of every op type, on every
// backend, in its own order and in a permuted one, against its double-precision reference.
#include <algorithm>
#include <future>
#include <set>

#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <xtensor/xadapt.hpp>
#include <xtensor/xnpy.hpp>

#include "../integration/support.hpp"
#include "conformance.hpp"
#include "graft/backend/cpp.hpp"
#include "graft/backend/cpp_emit.hpp"
#include "graft/backend/descriptor.hpp"
#include "graft/backend/native_kernel.hpp"
#include "graft/optimize/passes.hpp"

namespace conformance {

std::vector<float> values(std::size_t n, unsigned seed, float lo, float hi) {
    std::vector<float> v(n);
    std::uint64_t s = 0x9E3779B97F4A7C15ull * (seed + 1);
    for (auto& x : v) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        x = lo + (hi - lo) * static_cast<float>((s >> 40) & 0xFFFFFF) / 16777216.f;
    }
    return v;
}

}  // namespace conformance

namespace graft_test_conformance {

namespace {

namespace fs = std::filesystem;
using namespace conformance;
using graft::Graph;
using graft::Tensor;

std::vector<Example> all_examples() {
    std::vector<Example> all;
    for (auto part : {elementwise_examples(), shape_examples(), resize_examples(), linear_conv_examples(), sequence_examples(), conv_more_examples(),
                      recurrent_examples(), fused_examples(), broadcast_examples(), reduce_examples(), integer_examples(),
                      along_axis_examples()})
        all.insert(all.end(), part.begin(), part.end());
    return all;
}

/// An example as a one-op graph, its inputs (in the graph's orders) and expected outputs.
struct Case {
    std::string label;  ///< op type, example name, order variant
    const Example* example = nullptr;
    bool permuted = false;
    Graph graph;
    std::vector<Tensor> feeds;
    std::vector<Expected> expected;
    std::int64_t batch = 1;
};

/// Order `o` with its axes but the batch reversed (the "permuted" memory order of an input; the
/// batch stays first, where graft's runtime expects it).
Order reversed(const Order& o) {
    std::vector<graft::Axis> axes;
    for (auto it = o.axes().rbegin(); it != o.axes().rend(); ++it)
        if (*it != graft::Axis::N) axes.push_back(*it);
    if (o.has(graft::Axis::N)) axes.insert(axes.begin(), graft::Axis::N);
    return Order(std::move(axes));
}

Case make_case(const Example& e, const graft::Registry& reg, bool permute) {
    Case c;
    c.example = &e;
    c.permuted = permute;
    c.label = e.op_type + " / " + e.name + (permute ? " / inputs in permuted order" : "");
    c.expected = e.reference(e.inputs);
    graft::NamedVars ins;
    for (const auto& in : e.inputs) {
        if (in.constant) {
            auto data = std::make_shared<const std::vector<float>>(in.data);
            ins.emplace_back(in.port, c.graph.add_constant(in.port, in.order, in.shape, std::move(data)));
            continue;
        }
        const Order o = permute ? reversed(in.order) : in.order;
        const Shape s = reorder_shape(in.shape, in.order, o);
        graft::Variable* v = c.graph.add_variable(in.port, graft::DType::float32, o, s);
        c.graph.add_input(v);
        c.feeds.emplace_back(s, relayout(in.data, in.order, in.shape, o));
        if (o.has(graft::Axis::N)) c.batch = s[o.index(graft::Axis::N)];
        ins.emplace_back(in.port, v);
    }
    graft::Operator* op = graft::add_op(c.graph, reg, e.op_type, "op", ins, e.attrs);
    for (const auto& x : c.expected) c.graph.add_output(op->output(x.port));
    return c;
}

/// Whether the permuted variant differs from the example (some input has 2 axes besides N).
bool permutable(const Example& e) {
    for (const auto& in : e.inputs)
        if (!in.constant && reversed(in.order) != in.order) return true;
    return false;
}

/// Checks outputs (`got[i]` laid out in `orders[i]`) against the expected ones.
void check_outputs(const Case& c, const std::string& backend, const std::vector<Tensor>& got, const std::vector<Order>& orders) {
    INFO(c.label << " on " << backend);
    REQUIRE(got.size() == c.expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        const Expected& x = c.expected[i];
        INFO("output " << x.port << " " << x.order.str() << " " << graft::shape_str(x.shape) << ", produced in " << orders[i].str());
        REQUIRE(orders[i].same_axes(x.order));
        REQUIRE(got[i].shape() == reorder_shape(x.shape, x.order, orders[i]));
        std::vector<double> raw(got[i].size());  // any dtype (Cast's outputs), as values
        for (std::size_t k = 0; k < raw.size(); ++k) raw[k] = got[i].at_double(k);
        const auto values = relayout(raw, orders[i], got[i].shape(), x.order);
        double worst = 0;
        std::size_t off = 0;
        for (std::size_t k = 0; k < values.size(); ++k) {
            const double err = std::fabs(values[k] - x.data[k]);
            if (!(err <= c.example->atol + c.example->rtol * std::fabs(x.data[k]))) ++off;
            worst = std::isnan(err) ? NAN : std::max(worst, err);
        }
        INFO("max abs error " << worst);
        CHECK(off == 0);
    }
}

std::vector<Order> output_orders(const Graph& g) {
    std::vector<Order> o;
    for (const auto* v : g.outputs()) o.push_back(v->order());
    return o;
}

void run_native(const Case& c, const graft::Registry& reg, int level) {
    graft::Model m(c.graph.clone(), reg, level);
    check_outputs(c, "native -O" + std::to_string(level), m.run(c.feeds), output_orders(m.graph()));
}

void run_descriptor(const Case& c, const graft::Registry& reg, const fs::path& dir) {
    Graph g = c.graph.clone();
    graft::optimize::pipeline_for(2, "graft").run(g, reg);
    graft::descriptor::write(g, reg, dir.string());
    graft::LoadOptions o;
    o.registry = &reg;
    graft::Model m = graft::load(dir.string(), o);
    check_outputs(c, "descriptor round trip", m.run(c.feeds), output_orders(m.graph()));
}

}  // namespace

TEST_CASE("conformance: every op type has examples, and every backend a generator for it", "[conformance]") {
    auto reg = graft::make_builtin_registry();
    std::set<std::string> covered;
    for (const auto& e : all_examples()) covered.insert(e.op_type);
    std::vector<std::string> without_examples, without_native, without_cpp;
    for (const auto& [type, entry] : reg->ops().entries()) {
        if (!covered.count(type)) without_examples.push_back(type);
        if (!reg->has_generator(graft::native::Backend::name, type)) without_native.push_back(type);
        if (!reg->has_generator(graft::cpp::Backend::name, type)) without_cpp.push_back(type);
    }
    auto list = [](const std::vector<std::string>& v) {
        std::string s;
        for (const auto& t : v) s += (s.empty() ? "" : ", ") + t;
        return s.empty() ? std::string("none") : s;
    };
    fmt::print("conformance: {} op types, {} with examples; without examples: {}\n", reg->ops().entries().size(),
               reg->ops().entries().size() - without_examples.size(), list(without_examples));
    INFO("op types without a native kernel builder: " << list(without_native));
    CHECK(without_native.empty());
    INFO("op types without a C++ emitter: " << list(without_cpp));
    CHECK(without_cpp.empty());
    // Op types whose examples are still to be written; the list may only shrink: an op type here
    // that has examples, or one without examples that is not here, fails the test.
    const std::set<std::string> not_yet = {};
    for (const auto& t : without_examples) {
        INFO("op type without conformance examples: " << t);
        CHECK(not_yet.count(t) == 1);
    }
    for (const auto& t : not_yet) {
        INFO("op type listed as lacking examples, but it has some (remove it from not_yet): " << t);
        CHECK(!covered.count(t));
    }
    for (const auto& e : all_examples()) {
        INFO(e.op_type << " / " << e.name);
        CHECK(reg->find_op(e.op_type) != nullptr);  // an example of an op type graft does not have
    }
}

TEST_CASE("conformance: every example on native -O0 and -O2 and through a descriptor", "[conformance]") {
    auto reg = graft::make_builtin_registry();
    graft_test::TempDir tmp;
    const auto examples = all_examples();
    std::size_t n = 0;
    for (const auto& e : examples)
        for (bool permute : {false, true}) {
            if (permute && !permutable(e)) continue;
            Case c = make_case(e, *reg, permute);
            run_native(c, *reg, 0);
            run_native(c, *reg, 2);
            run_descriptor(c, *reg, tmp.path() / fmt::format("d{}", n++));
        }
    fmt::print("conformance: {} cases ({} examples, permuted where they have 2 axes besides N) on native -O0, -O2 and descriptor\n", n, examples.size());
}

TEST_CASE("conformance: every example as generated C++", "[conformance][cpp_backend]") {
    auto reg = graft::make_builtin_registry();
    graft_test::TempDir tmp;
    const auto examples = all_examples();
    struct Generated {
        Case c;
        std::string ns;
        fs::path dir;
        std::vector<std::string> inputs;
        std::vector<Order> orders;
    };
    std::vector<Generated> gens;
    for (const auto& e : examples)
        for (bool permute : {false, true}) {
            if (permute && !permutable(e)) continue;
            Generated g{make_case(e, *reg, permute), fmt::format("c{}", gens.size()), {}, {}, {}};
            g.dir = tmp.path() / g.ns;
            Graph opt = g.c.graph.clone();
            graft::optimize::pipeline_for(2, "cpp").run(opt, *reg);
            g.orders = output_orders(opt);
            graft::cpp::Options o;
            o.name = "model";
            o.ns = g.ns;
            o.batch = g.c.batch;
            INFO(g.c.label);
            REQUIRE_NOTHROW(graft::cpp::generate(g.c.graph.clone(), *reg, o, g.dir.string()));
            for (std::size_t i = 0; i < g.c.feeds.size(); ++i) {
                const auto& f = g.c.feeds[i];
                const auto path = g.dir / fmt::format("in{}.npy", i);
                std::vector<std::size_t> shape(f.shape().begin(), f.shape().end());
                xt::dump_npy(path.string(), xt::adapt(f.values(), shape));
                g.inputs.push_back(path.string());
            }
            fs::create_directories(g.dir / "run");
            gens.push_back(std::move(g));
        }
    // Two programs, compiled at the same time (two cores), at -O0: a case here is one small op, so
    // compiling is all the cost (three times as much at -O1). The fixture tests use -O0 and -O1.
    std::vector<std::future<bool>> jobs;
    const std::size_t half = (gens.size() + 1) / 2;
    for (std::size_t u = 0; u < 2; ++u) {
        std::string src = "#include \"driver.hpp\"\n";
        const std::size_t lo = u * half, hi = std::min(gens.size(), lo + half);
        for (std::size_t i = lo; i < hi; ++i) src += "#include " + graft_test::cstr((gens[i].dir / "model.cpp").string()) + "\n";
        src += "\nint main() {\n    int failures = 0;\n";
        for (std::size_t i = lo; i < hi; ++i) {
            std::string files;
            for (const auto& f : gens[i].inputs) files += (files.empty() ? "" : ", ") + graft_test::cstr(f);
            src += fmt::format("    failures += graft_driver::run_model<{0}::Session>({1}, {0}::kInputs, {0}::kOutputs, {{{2}}}, {3}, {4});\n",
                               gens[i].ns, graft_test::cstr(gens[i].c.label), files, graft_test::cstr((gens[i].dir / "run").string()),
                               graft_test::cstr((gens[i].dir / "model.weights").string()));
        }
        src += "    return failures;\n}\n";
        const fs::path file = tmp.path() / fmt::format("unit{}.cpp", u), exe = tmp.path() / fmt::format("unit{}", u);
        std::ofstream(file) << src;
        const fs::path root = tmp.path();
        jobs.push_back(std::async(std::launch::async, [=] {
            return graft_test::sh(graft_test::compile_cmd(graft_test::cxx(), "-O0", file, exe), root / fmt::format("unit{}.log", u)) &&
                   graft_test::sh(graft_test::shell_quote(exe.string()), root / fmt::format("run{}.log", u));
        }));
    }
    for (std::size_t u = 0; u < jobs.size(); ++u) {
        const bool ok = jobs[u].get();
        INFO("compile: " << graft_test::read_text(tmp.path() / fmt::format("unit{}.log", u)).substr(0, 4000));
        INFO("run: " << graft_test::read_text(tmp.path() / fmt::format("run{}.log", u)).substr(0, 4000));
        CHECK(ok);
    }
    for (const auto& g : gens) {
        std::vector<Tensor> got;
        for (std::size_t i = 0; i < g.c.expected.size(); ++i) {
            const auto path = g.dir / "run" / fmt::format("{}.npy", i);
            INFO(g.c.label << ": " << path);
            REQUIRE(fs::exists(path));
            got.push_back(graft_test::load_npy(path));
        }
        check_outputs(g.c, "generated C++", got, g.orders);
    }
    fmt::print("conformance: {} cases generated as C++, compiled and run\n", gens.size());
}

}  // namespace graft_test_conformance
