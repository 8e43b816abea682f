// Running a batch in slices (backend/native/batch_slices.hpp): the proof that a graph keeps the
// samples of a batch apart, on hand-built graphs that do and graphs that mix samples in each way
// the proof must catch, and the cost model's choices on costs made to be memory-, compute- and
// weight-bound. That sliced runs give the same results is checked against torch's forward on the
// exported models (test_onnx_torch.cpp) and against Keras' predictions through the CLI (test_cli.cpp).
#include <catch2/catch.hpp>

#include "backend/native/batch_slices.hpp"
#include "test_passes_support.hpp"

namespace graft_test_batch_slices {

using namespace graft;
using graft_test::attrs;
using graft_test::Net;
using native::batch_mixing;

namespace {

/// x [2, 8] -> Linear(8 -> 6) -> the tail `more` adds -> output.
template <class More>
std::string mixing_of(More more, std::int64_t batch = 2) {
    Net n;
    auto* x = n.input("x", OrderNC, {batch, 8});
    auto* h = n.y(n.op("Linear", "dense", {{"x", x}, {"w", n.constant("w", OrderCN, {8, 6})}},
                       attrs({{"axis", std::string("C")}})));
    n.output(more(n, h));
    return batch_mixing(n.g, batch);
}

}  // namespace

TEST_CASE("batch slices: per-sample graphs are found to keep samples apart", "[batch_slice]") {
    CHECK(mixing_of([](Net& n, Variable* h) {
              auto* r = n.y(n.op("Activation", "relu", {{"x", h}}, attrs({{"activation", std::string("relu")}})));
              return n.y(n.op("Softmax", "softmax", {{"x", r}}, attrs({{"axis", std::string("C")}})));
          }) == "");
    // A convolution stack, with its NHWC batch first everywhere.
    Net n;
    auto* x = n.input("x", OrderNHWC, {3, 8, 8, 2});
    auto* c = n.y(n.op("Conv2D", "conv",
                       {{"x", x},
                        {"w", n.constant("w", Order{Axis::H, Axis::W, Axis::C, Axis::N}, {3, 3, 2, 4})},
                        {"b", n.constant("b", OrderC, {4})}},
                       attrs({{"strides", std::vector<std::int64_t>{1, 1}},
                              {"dilations", std::vector<std::int64_t>{1, 1}},
                              {"padding", std::string("same")}})));
    Attributes gp = attrs({{"kind", std::string("avg")}});
    gp.set("axes", Order{Axis::H, Axis::W});
    n.output(n.y(n.op("GlobalPool", "pool", {{"x", c}}, gp)));
    CHECK(batch_mixing(n.g, 3) == "");
}

TEST_CASE("batch slices: graphs that mix samples are refused, saying where", "[batch_slice]") {
    // An attribute axis N: softmax over the batch.
    CHECK_THAT(mixing_of([](Net& n, Variable* h) {
                   return n.y(n.op("Softmax", "softmax", {{"x", h}}, attrs({{"axis", std::string("N")}})));
               }),
               Catch::Contains("softmax") && Catch::Contains("works along the batch axis N (attribute 'axis')"));
    // A reduction over the batch (the output's N would be 1 too).
    CHECK_THAT(mixing_of([](Net& n, Variable* h) {
                   Attributes a = attrs({{"kind", std::string("mean")}, {"keepdims", true}});
                   a.set("axes", std::vector<std::string>{"N"});
                   return n.y(n.op("Reduce", "batch_mean", {{"x", h}}, a));
               }),
               Catch::Contains("batch_mean") && Catch::Contains("batch axis N"));
    // A reshape that folds samples into each other: [2, 6] -> [4, 3].
    CHECK_THAT(mixing_of([](Net& n, Variable* h) {
                   Attributes a = attrs({{"shape", std::vector<std::int64_t>{4, 3}}});
                   a.set("in_order", OrderNC);
                   a.set("out_order", OrderNC);
                   return n.y(n.op("Reshape", "fold", {{"x", h}}, a));
               }),
               Catch::Contains("fold") && Catch::Contains("has the batch axis N of size 4 in a batch of 2"));
    // A transpose moving the batch inside is per-sample; a reshape after it reinterprets rows
    // that are no longer one sample each.
    CHECK_THAT(mixing_of([](Net& n, Variable* h) {
                   auto* t = n.y(n.op("Transpose", "t", {{"x", h}}, [] {
                       Attributes a;
                       a.set("order", OrderCN);
                       return a;
                   }()));
                   Attributes a = attrs({{"shape", std::vector<std::int64_t>{6, 2}}});
                   a.set("in_order", OrderCN);
                   a.set("out_order", OrderCN);
                   return n.y(n.op("Reshape", "reinterpret", {{"x", t}}, a));
               }),
               Catch::Contains("reinterpret") && Catch::Contains("does not have the batch axis N first"));
    // An output the transpose left with the batch second cannot be cut into rows.
    CHECK_THAT(mixing_of([](Net& n, Variable* h) {
                   Attributes a;
                   a.set("order", OrderCN);
                   return n.y(n.op("Transpose", "t", {{"x", h}}, a));
               }),
               Catch::Contains("output") && Catch::Contains("does not have the batch axis N first"));
    // An input without a batch axis first.
    Net n;
    auto* x = n.input("x", OrderCN, {8, 2});
    n.output(n.y(n.op("Activation", "relu", {{"x", x}}, attrs({{"activation", std::string("relu")}}))));
    CHECK_THAT(batch_mixing(n.g, 2),
               Catch::Contains("input 'x'") && Catch::Contains("does not have the batch axis N first"));
}

TEST_CASE("batch slices: the cost model slices memory-bound batches only", "[batch_slice]") {
    const native::CacheModel m{std::size_t{1} << 20, std::size_t{32} << 20, 1};
    const double l3 = static_cast<double>(m.l3_bytes);
    auto costs = [](double flops, double bytes, double weights, int ops) {
        native::SampleCosts c;
        c.ops.assign(static_cast<std::size_t>(ops), native::SampleCosts::Op{flops, bytes});
        c.weight_bytes = weights;
        return c;
    };
    SECTION("activations that spill the L3 at full batch, cheap arithmetic: slices that fit it") {
        const auto c = costs(l3 / 8, l3 / 4, 1e6, 20);  // 1/2 FLOP per byte, a quarter of the L3 per sample
        const auto s = native::best_slice(c, 32, m);
        CHECK(s < 32);
        CHECK(static_cast<double>(s) * l3 / 4 <= l3);  // the chosen slice's activations fit the L3
        CHECK(native::slice_cost(c, 32, s, m) <= (1 - native::kMinSaving) * native::slice_cost(c, 32, 32, m));
    }
    SECTION("weights that stay in the L3 leave the activations less of it: smaller slices") {
        const auto light = native::best_slice(costs(l3 / 64, l3 / 12, 1e6, 20), 32, m);
        const auto heavy = native::best_slice(costs(l3 / 64, l3 / 12, l3 / 2, 20), 32, m);
        CHECK(heavy < light);
        CHECK(static_cast<double>(heavy) * l3 / 12 + l3 / 2 <= l3);
    }
    SECTION("the same bytes under heavy arithmetic: whole") {
        CHECK(native::best_slice(costs(l3 * 100, l3 / 4, 1e6, 20), 32, m) == 32);
    }
    SECTION("weights beyond the L3, read again per slice: whole") {
        CHECK(native::best_slice(costs(l3 / 8, l3 / 64, 40 * l3, 20), 32, m) == 32);
    }
    SECTION("everything in cache at full batch: whole") {
        CHECK(native::best_slice(costs(1e5, 1e4, 1e5, 10), 32, m) == 32);
    }
    SECTION("a slice that does not divide the batch costs its full slices and the rest") {
        const auto c = costs(l3 / 8, l3 / 4, 1e6, 20);
        CHECK(native::slice_cost(c, 7, 3, m) ==
              Approx(2 * native::slice_cost(c, 3, 3, m) + native::slice_cost(c, 1, 1, m)));
        CHECK(native::slice_cost(c, 7, 9, m) == Approx(native::slice_cost(c, 7, 7, m)));
    }
}

TEST_CASE("batch slices: a Linear's FLOPs count its features axis, whatever its name", "[batch_slice]") {
    // An ONNX [N, T, features] value is named N, C, T by position: C holds the 64 tokens.
    Net n;
    auto* x = n.input("x", OrderNCT, {1, 64, 256});
    auto* h = n.y(n.op("Linear", "dense", {{"x", x}, {"w", n.constant("w", OrderCN, {256, 1024})}},
                       attrs({{"axis", std::string("T")}})));
    n.output(h);
    const auto c = native::sample_costs(n.g);
    REQUIRE(c.ops.size() == 1);
    CHECK(c.ops[0].flops == Approx(2.0 * 64 * 256 * 1024));
    CHECK(c.weight_bytes == Approx(4.0 * 256 * 1024));
}

}  // namespace graft_test_batch_slices
