// Row and elementwise ops that split their work over the session's threads (Softmax along the
// last axis and along an inner one, LayerNorm, Merge), against loops in double: big enough that
// every one of them is split over three threads.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "test_passes_support.hpp"

using namespace graft;
using graft_test::attrs;
using graft_test::Net;
using graft_test::random_inputs;

namespace {

using i64 = std::int64_t;

// x [N, T, C] row-major: softmax over T (stride C) or over C (stride 1) at (n, t, c).
double softmax_ref(const Tensor& x, i64 T, i64 C, i64 n, i64 t, i64 c, bool over_c) {
    const float* p = x.data() + n * T * C;
    const i64 len = over_c ? C : T, stride = over_c ? 1 : C;
    const float* row = over_c ? p + t * C : p + c;
    double mx = -INFINITY, sum = 0;
    for (i64 i = 0; i < len; ++i) mx = std::max(mx, double(row[i * stride]));
    for (i64 i = 0; i < len; ++i) sum += std::exp(double(row[i * stride]) - mx);
    return std::exp(double(row[(over_c ? c : t) * stride]) - mx) / sum;
}

}  // namespace

TEST_CASE("Softmax, LayerNorm and Merge split over threads give the loops' results", "[kernels][threads]") {
    const i64 N = 5, T = 60, C = 400;  // 120000 floats: Merge too makes three tasks
    Net n;
    auto* x = n.input("x", OrderNTC, {kDynamic, T, C});
    auto* z = n.input("z", OrderNTC, {kDynamic, T, C});
    n.output(n.y(n.op("Softmax", "over_c", {{"x", x}}, attrs({{"axis", std::string("C")}}))));
    n.output(n.y(n.op("Softmax", "over_t", {{"x", x}}, attrs({{"axis", std::string("T")}}))));
    n.output(n.y(
        n.op("LayerNorm", "norm", {{"x", x}}, attrs({{"axes", std::vector<std::string>{"C"}}, {"epsilon", 1e-5}}))));
    Attributes add;
    add.set("op", "add");
    n.output(n.y(n.op("Merge", "sum", {{"x0", x}, {"x1", z}}, std::move(add))));

    const auto inputs = random_inputs(n.g, N);
    Model m(n.g.clone(), *n.reg, 0);
    m.set_threads(3);
    const auto got = m.run(inputs);
    REQUIRE(got.size() == 4);
    const Tensor& xv = inputs[0];
    double worst[4] = {0, 0, 0, 0};
    for (i64 b = 0; b < N; ++b)
        for (i64 t = 0; t < T; ++t) {
            const float* row = xv.data() + (b * T + t) * C;
            double mean = 0, var = 0;
            for (i64 c = 0; c < C; ++c) mean += row[c];
            mean /= double(C);
            for (i64 c = 0; c < C; ++c) var += (row[c] - mean) * (row[c] - mean);
            var /= double(C);
            for (i64 c = 0; c < C; ++c) {
                const i64 k = (b * T + t) * C + c;
                const double want[4] = {softmax_ref(xv, T, C, b, t, c, true), softmax_ref(xv, T, C, b, t, c, false),
                                        (row[c] - mean) / std::sqrt(var + 1e-5), double(row[c]) + inputs[1].data()[k]};
                for (int o = 0; o < 4; ++o) worst[o] = std::max(worst[o], std::abs(got[o].data()[k] - want[o]));
            }
        }
    INFO("max abs err: softmax over C " << worst[0] << ", over T " << worst[1] << ", LayerNorm " << worst[2]
                                        << ", Merge " << worst[3]);
    CHECK(worst[0] < 1e-6);
    CHECK(worst[1] < 1e-6);
    CHECK(worst[2] < 1e-5);
    CHECK(worst[3] < 1e-6);
}
