// The ONNX frontend's shape arithmetic on a dynamic batch N (lib/frontend/onnx/host_eval.hpp):
// integers of the form value + batch * N, checked against the arithmetic written out by hand for
// every N >= 1, and the refusals where a result is not of that form or depends on N.
#include <catch2/catch.hpp>

#include "frontend/onnx/host_eval.hpp"
#include "graft/error.hpp"

namespace graft_test_onnx_symbolic {

using graft::onnx::HostTensor;
using graft::onnx::sym_binary;
using graft::onnx::SymInt;

namespace {

constexpr SymInt N{0, 1};

HostTensor ints(std::vector<SymInt> v) {
    HostTensor t;
    t.kind = HostTensor::Kind::integer;
    t.shape = {static_cast<std::int64_t>(v.size())};
    for (auto s : v) t.push(s);
    return t;
}

}  // namespace

TEST_CASE("onnx: arithmetic on multiples of the batch size", "[onnx][symbolic]") {
    CHECK(sym_binary("Mul", N, {4, 0}, "t") == SymInt{0, 4});
    CHECK(sym_binary("Add", {2, 3}, {-1, 1}, "t") == SymInt{1, 4});
    CHECK(sym_binary("Sub", {2, 3}, {2, 1}, "t") == SymInt{0, 2});
    CHECK(sym_binary("Div", {6, 9}, {3, 0}, "t") == SymInt{2, 3});
    CHECK(sym_binary("Mul", {7, 0}, {6, 0}, "t") == SymInt{42, 0});
    // Comparisons hold for every N >= 1, or are refused.
    CHECK(sym_binary("Equal", N, {-1, 0}, "t") == SymInt{0, 0});  // torch's expand(N, -1, -1)
    CHECK(sym_binary("Greater", N, {0, 0}, "t") == SymInt{1, 0});
    CHECK(sym_binary("Less", {1, 2}, {3, 0}, "t") == SymInt{0, 0});  // 2N + 1 >= 3
    CHECK(sym_binary("Max", N, {1, 0}, "t") == N);
    CHECK(sym_binary("Min", {0, 4}, {2, 0}, "t") == SymInt{2, 0});
    CHECK(sym_binary("Equal", {0, 2}, {0, 2}, "t") == SymInt{1, 0});
    CHECK_THROWS_AS(sym_binary("Equal", N, {1, 0}, "t"), graft::UnsupportedError);  // true only for N = 1
    CHECK_THROWS_AS(sym_binary("Less", N, {3, 0}, "t"), graft::UnsupportedError);
    CHECK_THROWS_AS(sym_binary("Mul", N, N, "t"), graft::UnsupportedError);  // N * N
    CHECK_THROWS_AS(sym_binary("Div", N, {2, 0}, "t"), graft::UnsupportedError);  // N / 2
    CHECK_THROWS_AS(sym_binary("Div", {4, 0}, N, "t"), graft::UnsupportedError);
    CHECK_THROWS_AS(sym_binary("Div", N, {0, 0}, "t"), graft::FormatError);
    CHECK_THROWS_AS(sym_binary("Mul", {std::int64_t{1} << 62, 0}, {0, 4}, "t"), graft::FormatError);  // overflow
    CHECK_THROWS_AS(sym_binary("Pow", N, {2, 0}, "t"), graft::UnsupportedError);
    CHECK(SymInt{0, 4}.str() == "4*N");
    CHECK(SymInt{-1, 1}.str() == "N-1");
}

TEST_CASE("onnx: known tensors keep their multiples of the batch size", "[onnx][symbolic]") {
    const HostTensor shape = ints({N, {6, 0}, {32, 0}});
    CHECK(shape.symbolic());
    CHECK_THROWS_AS(shape.ints("shape"), graft::UnsupportedError);
    CHECK_THROWS_AS(shape.floats(), graft::UnsupportedError);
    // Gather -> Mul by a broadcast scalar -> Where (torch's pattern for expand(N, -1, -1)).
    HostTensor idx;
    idx.kind = HostTensor::Kind::integer;
    idx.i = {0, 2};
    idx.shape = {2};
    const HostTensor picked = graft::onnx::host_gather(shape, idx, 0, "t");
    REQUIRE(picked.sym_ints("t") == std::vector<SymInt>{N, {32, 0}});
    const HostTensor times = graft::onnx::host_binary("Mul", picked, ints({{4, 0}}), "t");
    CHECK(times.sym_ints("t") == std::vector<SymInt>{{0, 4}, {128, 0}});
    const HostTensor minus_one = ints({{-1, 0}, {-1, 0}});
    const HostTensor eq = graft::onnx::host_binary("Equal", ints({N, {-1, 0}}), minus_one, "t");
    CHECK(eq.kind == HostTensor::Kind::boolean);
    CHECK(eq.i == std::vector<std::int64_t>{0, 1});
    const HostTensor w = graft::onnx::host_where(eq, ints({{1, 0}, {1, 0}}), ints({N, {-1, 0}}), "t");
    CHECK(w.sym_ints("t") == std::vector<SymInt>{N, {1, 0}});
    // Plain integers stay plain.
    CHECK_FALSE(graft::onnx::host_binary("Add", ints({{1, 0}}), ints({{2, 0}}), "t").symbolic());
}

}  // namespace graft_test_onnx_symbolic
