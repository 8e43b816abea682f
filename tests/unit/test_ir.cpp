// The header-only IR: Axis/Order, Variable, Graph invariants, and the Registry.
#include <catch2/catch.hpp>

#include "graft/backend/native_kernel.hpp"
#include "graft/graft.hpp"

namespace graft_test_ir {

using namespace graft;

namespace {
std::shared_ptr<const std::vector<float>> floats(std::size_t n, float v = 1.f) {
    return std::make_shared<const std::vector<float>>(n, v);
}
}  // namespace

TEST_CASE("Order knows its axes and permutations", "[ir]") {
    REQUIRE(OrderNHWC.str() == "NHWC");
    REQUIRE(OrderNHWC.index(Axis::C) == 3);
    REQUIRE(OrderNHWC.same_axes(OrderNCHW));
    REQUIRE_FALSE(OrderNHWC.same_axes(OrderNTC));
    REQUIRE(OrderNHWC.permutation_to(OrderNCHW) == std::vector<int>{0, 3, 1, 2});
    REQUIRE(OrderNTC.with_last(Axis::T) == OrderNCT);
    REQUIRE_THROWS_AS(OrderNC.permutation_to(OrderNTC), GraphError);
    REQUIRE_THROWS_AS((Order{Axis::N, Axis::N}), GraphError);
    const Axis k("K");
    Order custom{Axis::N, k};
    REQUIRE(custom.str() == "NK");
    REQUIRE(Order::from_names({"N", "K"}) == custom);
    REQUIRE(Order{Axis::N, Axis("Kx")}.str() == "N[Kx]");
}

TEST_CASE("Variables check their shape against their order", "[ir]") {
    Graph g;
    REQUIRE_THROWS_AS(g.add_variable("x", DType::float32, OrderNC, {1, 2, 3}), GraphError);
    auto* v = g.add_variable("x", DType::float32, OrderNHWC, {kDynamic, 4, 5, 3});
    REQUIRE(v->size(Axis::C) == 3);
    REQUIRE(v->numel() == kDynamic);
    REQUIRE(v->shape_in(OrderNCHW) == Shape{kDynamic, 3, 4, 5});
    REQUIRE_THROWS_WITH(v->size(Axis::T), Catch::Contains("'x'") && Catch::Contains("no axis T"));
    REQUIRE_THROWS_AS(g.add_variable("x", DType::float32, OrderNC, {1, 2}), GraphError);  // duplicate name
    REQUIRE_THROWS_AS(g.add_constant("c", OrderC, {4}, floats(3)), GraphError);          // size mismatch
}

TEST_CASE("Graph keeps producers unique and orders operators topologically", "[ir]") {
    Graph g;
    auto* x = g.add_variable("x", DType::float32, OrderNC, {1, 2});
    auto* a = g.add_variable("a", DType::float32, OrderNC, {1, 2});
    auto* b = g.add_variable("b", DType::float32, OrderNC, {1, 2});
    g.add_input(x);
    // inserted out of order: b's producer first
    g.add_op("Activation", "second", {{"x", a}}, {{"y", b}});
    g.add_op("Activation", "first", {{"x", x}}, {{"y", a}});
    g.add_output(b);
    auto order = g.topological_order();
    REQUIRE(order.size() == 2);
    REQUIRE(order[0]->name() == "first");
    REQUIRE(order[1]->name() == "second");
    REQUIRE_NOTHROW(g.validate());
    REQUIRE_THROWS_WITH(g.add_op("Activation", "again", {{"x", x}}, {{"y", a}}), Catch::Contains("already written"));
    REQUIRE(g.consumers(a).size() == 1);

    SECTION("a clone is deep but shares constant data") {
        auto* c = g.add_constant("w", OrderC, {2}, floats(2));
        Graph h = g.clone();
        REQUIRE(h.operators().size() == 2);
        REQUIRE(h.find_variable("x") != x);
        auto* hc = static_cast<ConstantVariable*>(h.find_variable("w"));
        REQUIRE(hc->shared_data() == c->shared_data());
    }
}

TEST_CASE("Graph validation reports the first broken invariant", "[ir]") {
    Graph g;
    auto* x = g.add_variable("x", DType::float32, OrderNC, {1, 2});
    auto* y = g.add_variable("y", DType::float32, OrderNC, {1, 2});
    SECTION("an input nothing computes") {
        g.add_op("Activation", "act", {{"x", x}}, {{"y", y}});
        g.add_output(y);
        REQUIRE_THROWS_WITH(g.validate(), Catch::Contains("'x'") && Catch::Contains("never computed"));
    }
    SECTION("no outputs") {
        g.add_input(x);
        REQUIRE_THROWS_WITH(g.validate(), Catch::Contains("no outputs"));
    }
    SECTION("a cycle") {
        g.add_input(x);
        auto* z = g.add_variable("z", DType::float32, OrderNC, {1, 2});
        g.add_op("Merge", "m1", {{"x0", x}, {"x1", z}}, {{"y", y}});
        g.add_op("Activation", "a1", {{"x", y}}, {{"y", z}});
        g.add_output(z);
        REQUIRE_THROWS_WITH(g.validate(), Catch::Contains("cycle"));
    }
}

TEST_CASE("A Registry refuses taken keys and stays separate from others", "[registry]") {
    Registry r1, r2;
    OpSchema s;
    s.type = "MyOp";
    s.infer = [](const Operator& op) {
        return std::vector<std::pair<std::string, TensorType>>{{"y", {op.input("x")->order(), op.input("x")->shape()}}};
    };
    r1.add_op(s);
    REQUIRE(r1.find_op("MyOp") != nullptr);
    REQUIRE(r2.find_op("MyOp") == nullptr);
    {
        Registry::OwnerScope scope(r1, HandlerOwner{"libmine.so", nullptr});
        REQUIRE_THROWS_WITH(r1.add_op(s), Catch::Contains("'MyOp' is already registered by graft") && Catch::Contains("libmine.so"));
        r1.add_converter("keras", "Mine", [](LayerContext&) {});
    }
    REQUIRE(r1.converters().find("keras:Mine")->owner.name == "libmine.so");
    REQUIRE_THROWS_AS(r1.add_converter("keras", "Mine", [](LayerContext&) {}), RegistryError);
    REQUIRE_THROWS_WITH(r1.op("Nope"), Catch::Contains("unknown op type 'Nope'") && Catch::Contains("plugin"));
}

TEST_CASE("The built-in registry has a schema and a native kernel for every op it converts to", "[registry]") {
    auto reg = make_builtin_registry();
    REQUIRE(reg->ops().entries().size() >= 10);
    for (const auto& [type, e] : reg->ops().entries()) {
        INFO(type);
        REQUIRE(reg->find_generator<graft::native::Backend>(type));
    }
    REQUIRE(reg->find_converter("keras", "Dense") != nullptr);
    REQUIRE(reg->find_converter("keras", "Lambda") == nullptr);
}

TEST_CASE("Schemas infer shapes and reject mismatches with the op's name", "[registry]") {
    auto reg = make_builtin_registry();
    Graph g;
    auto* x = g.add_variable("x", DType::float32, OrderNC, {kDynamic, 3});
    auto* w = g.add_constant("w", OrderCN, {3, 5}, floats(15));
    Attributes a;
    a.set("axis", Axis::C);
    auto* op = add_op(g, *reg, "Linear", "dense", {{"x", x}, {"w", w}}, a);
    REQUIRE(op->output("y")->shape() == Shape{kDynamic, 5});
    auto* bad = g.add_constant("w2", OrderCN, {4, 5}, floats(20));
    REQUIRE_THROWS_WITH(add_op(g, *reg, "Linear", "dense2", {{"x", x}, {"w", bad}}, a),
                        Catch::Contains("Linear 'dense2'") && Catch::Contains("expects 4 input features"));
}

}  // namespace graft_test_ir
