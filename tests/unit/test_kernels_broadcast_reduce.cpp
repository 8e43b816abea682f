// graft_rt::binary, graft_rt::reduce and graft_rt::arg_reduce on random shapes and strides
// against direct double-precision loops, and the Binary / Reduce schemas' shape rules.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "graft/graft.hpp"
#include "graft_rt/binary.hpp"
#include "graft_rt/reduce.hpp"
#include "kernel_ref.hpp"

namespace graft_test_kernels_broadcast_reduce {

namespace {

using kernel_ref::i64;

std::mt19937& gen() {
    static std::mt19937 g(777);
    return g;
}
int rint(int lo, int hi) { return kernel_ref::rand_int(gen(), lo, hi); }
std::vector<float> rvec(i64 n, float lo, float hi) { return kernel_ref::rand_vec(gen(), n, lo, hi); }

i64 count(const std::vector<i64>& shape) {
    i64 n = 1;
    for (auto d : shape) n *= d;
    return n;
}

/// `rank` dimensions, each from 1 to max_dim.
std::vector<i64> random_shape(int rank, int max_dim) {
    std::vector<i64> shape(static_cast<std::size_t>(rank));
    for (auto& d : shape) d = rint(1, max_dim);
    return shape;
}

/// Row-major strides of `shape` taken in the axis order `perm` (memory order: perm[0] outermost).
std::vector<i64> strides_in(const std::vector<i64>& shape, const std::vector<int>& perm) {
    std::vector<i64> s(shape.size());
    i64 acc = 1;
    for (std::size_t k = perm.size(); k-- > 0;) {
        s[static_cast<std::size_t>(perm[k])] = acc;
        acc *= shape[static_cast<std::size_t>(perm[k])];
    }
    return s;
}

std::vector<int> random_perm(int rank) {
    std::vector<int> p(static_cast<std::size_t>(rank));
    std::iota(p.begin(), p.end(), 0);
    std::shuffle(p.begin(), p.end(), gen());
    return p;
}

/// Visits every index of `shape` in row-major order.
template <class F>
void each_index(const std::vector<i64>& shape, F f) {
    std::vector<i64> idx(shape.size(), 0);
    for (i64 k = 0, n = count(shape); k < n; ++k) {
        f(idx, k);
        for (std::size_t i = shape.size(); i-- > 0;) {
            if (++idx[i] < shape[i]) break;
            idx[i] = 0;
        }
    }
}

i64 dot(const std::vector<i64>& idx, const std::vector<i64>& s) {
    i64 o = 0;
    for (std::size_t i = 0; i < idx.size(); ++i) o += idx[i] * s[i];
    return o;
}

}  // namespace

TEST_CASE("graft_rt::binary: random shapes, broadcasts and layouts", "[kernels][broadcast]") {
    using graft_rt::BinaryOp;
    for (int trial = 0; trial < 300; ++trial) {
        const int rank = rint(0, 5);
        const std::vector<i64> shape = random_shape(rank, 4);
        // each input: per axis, full or broadcast (stride 0), in a random memory order
        std::vector<i64> as, bs;
        std::vector<float> a, b;
        for (auto* in : {&as, &bs}) {
            std::vector<i64> own = shape;
            for (auto& d : own)
                if (rint(0, 2) == 0) d = 1;
            *in = strides_in(own, random_perm(rank));
            for (std::size_t i = 0; i < own.size(); ++i)
                if (own[i] == 1) (*in)[i] = 0;
            (in == &as ? a : b) = rvec(count(own), 0.5f, 3.f);
        }
        const auto op = static_cast<BinaryOp>(rint(0, 8));
        std::vector<float> y(static_cast<std::size_t>(count(shape)), -1.f);
        graft_rt::binary(op, a.data(), b.data(), y.data(), shape.data(), as.data(), bs.data(), rank);
        each_index(shape, [&](const std::vector<i64>& idx, i64 k) {
            const double u = a[static_cast<std::size_t>(dot(idx, as))], v = b[static_cast<std::size_t>(dot(idx, bs))];
            double want = 0;
            switch (op) {
                case BinaryOp::add: want = u + v; break;
                case BinaryOp::sub: want = u - v; break;
                case BinaryOp::mul: want = u * v; break;
                case BinaryOp::div: want = u / v; break;
                case BinaryOp::pow: want = std::pow(u, v); break;
                case BinaryOp::max: want = std::max(u, v); break;
                case BinaryOp::min: want = std::min(u, v); break;
                case BinaryOp::mod:
                case BinaryOp::fmod: want = std::fmod(u, v); break;  // both positive here
                default: FAIL("an op outside the nine drawn");  // comparisons: the conformance examples
            }
            INFO("trial " << trial << " op " << graft_rt::binary_name(op) << " rank " << rank << " at " << k);
            REQUIRE(y[static_cast<std::size_t>(k)] == Approx(want).epsilon(1e-5));
        });
    }
}

TEST_CASE("graft_rt::binary: mod takes the divisor's sign, fmod the dividend's", "[kernels][broadcast]") {
    const float a[] = {5.f, -5.f, 5.f, -5.f, 4.5f}, b[] = {3.f, 3.f, -3.f, -3.f, 1.5f};
    const i64 shape[] = {5}, st[] = {1};
    float y[5];
    graft_rt::binary(graft_rt::BinaryOp::mod, a, b, y, shape, st, st, 1);
    CHECK(std::vector<float>(y, y + 5) == std::vector<float>{2.f, 1.f, -1.f, -2.f, 0.f});
    graft_rt::binary(graft_rt::BinaryOp::fmod, a, b, y, shape, st, st, 1);
    CHECK(std::vector<float>(y, y + 5) == std::vector<float>{2.f, -2.f, 2.f, -2.f, 0.f});
}

TEST_CASE("graft_rt::reduce and arg_reduce: random shapes, axes and layouts", "[kernels][reduce]") {
    using graft_rt::ReduceKind;
    for (int trial = 0; trial < 300; ++trial) {
        const int rank = rint(1, 5);
        std::vector<i64> shape = random_shape(rank, 5);
        if (trial % 7 == 0) shape.back() = 300;  // more than one chunk of a row
        const std::vector<i64> xs = strides_in(shape, random_perm(rank));
        const i64 n = count(shape);
        const auto kind = static_cast<ReduceKind>(rint(0, 9));
        const auto x = kind == ReduceKind::prod ? rvec(n, 0.95f, 1.05f) : kind == ReduceKind::log_sum ? rvec(n, 0.1f, 2.f) : rvec(n, -2.f, 2.f);
        std::vector<bool> red(static_cast<std::size_t>(rank));
        for (std::size_t i = 0; i < red.size(); ++i) red[i] = rint(0, 1) == 1;
        // the kernel's view: kept and reduced axes in x's memory order with their strides
        std::vector<int> mem(static_cast<std::size_t>(rank));
        std::iota(mem.begin(), mem.end(), 0);
        std::sort(mem.begin(), mem.end(), [&](int p, int q) { return xs[static_cast<std::size_t>(p)] > xs[static_cast<std::size_t>(q)]; });
        std::vector<i64> kd, ks, rd, rs, kept_axes;
        for (int i : mem) {
            const auto u = static_cast<std::size_t>(i);
            (red[u] ? rd : kd).push_back(shape[u]);
            (red[u] ? rs : ks).push_back(xs[u]);
            if (!red[u]) kept_axes.push_back(i);
        }
        if (kd.empty()) kd = {1}, ks = {0};
        if (rd.empty()) rd = {1}, rs = {0};
        const i64 m = count(kd);
        std::vector<float> y(static_cast<std::size_t>(m));
        graft_rt::reduce(kind, x.data(), y.data(), kd.data(), ks.data(), static_cast<int>(kd.size()), rd.data(), rs.data(),
                         static_cast<int>(rd.size()));
        // reference: group x's entries by their kept index (y row-major over kept_axes)
        std::vector<std::vector<double>> groups(static_cast<std::size_t>(m));
        each_index(shape, [&](const std::vector<i64>& idx, i64) {
            i64 o = 0;
            for (i64 ax : kept_axes) o = o * shape[static_cast<std::size_t>(ax)] + idx[static_cast<std::size_t>(ax)];
            groups[static_cast<std::size_t>(o)].push_back(x[static_cast<std::size_t>(dot(idx, xs))]);
        });
        for (i64 o = 0; o < m; ++o) {
            const auto& g = groups[static_cast<std::size_t>(o)];
            double s = 0, want = 0;
            switch (kind) {
                case ReduceKind::max: want = *std::max_element(g.begin(), g.end()); break;
                case ReduceKind::min: want = *std::min_element(g.begin(), g.end()); break;
                case ReduceKind::prod: want = std::accumulate(g.begin(), g.end(), 1.0, std::multiplies<double>()); break;
                case ReduceKind::l1: for (double v : g) want += std::fabs(v); break;
                case ReduceKind::l2: for (double v : g) s += v * v; want = std::sqrt(s); break;
                case ReduceKind::sum_square: for (double v : g) want += v * v; break;
                case ReduceKind::log_sum_exp: for (double v : g) s += std::exp(v); want = std::log(s); break;
                case ReduceKind::sum:
                case ReduceKind::mean:
                case ReduceKind::log_sum:
                    for (double v : g) s += v;
                    want = kind == ReduceKind::mean ? s / static_cast<double>(g.size()) : kind == ReduceKind::log_sum ? std::log(s) : s;
                    break;
            }
            INFO("trial " << trial << " kind " << graft_rt::reduce_name(kind) << " output " << o);
            REQUIRE(y[static_cast<std::size_t>(o)] == Approx(want).epsilon(1e-5).margin(1e-5));
        }
    }
    // arg_reduce: ties go to the first index, or the last one
    const float x[] = {1.f, 3.f, 3.f, 0.f, 0.f, 2.f};
    float y[1];
    graft_rt::arg_reduce(x, y, 1, 6, 1, true, false);
    CHECK(y[0] == 1.f);
    graft_rt::arg_reduce(x, y, 1, 6, 1, true, true);
    CHECK(y[0] == 2.f);
    graft_rt::arg_reduce(x, y, 1, 6, 1, false, false);
    CHECK(y[0] == 3.f);
    graft_rt::arg_reduce(x, y, 1, 6, 1, false, true);
    CHECK(y[0] == 4.f);
}

TEST_CASE("Binary: the output shape broadcasts; a mismatch names the op and both inputs", "[ops][broadcast]") {
    using graft::Axis;
    auto reg = graft::make_builtin_registry();
    graft::Graph g;
    auto* a = g.add_variable("a", graft::DType::float32, graft::Order{Axis::N, Axis::T, Axis::C}, {graft::kDynamic, 1, 4});
    auto* b = g.add_variable("b", graft::DType::float32, graft::Order{Axis::C, Axis("A3")}, {4, 5});
    g.add_input(a);
    g.add_input(b);
    graft::Attributes at;
    at.set("op", "add");
    at.set("order", graft::Order{Axis::N, Axis::T, Axis::C, Axis("A3")});
    auto* op = graft::add_op(g, *reg, "Binary", "plus", {{"a", a}, {"b", b}}, at);
    CHECK(op->output("y")->shape() == graft::Shape{graft::kDynamic, 1, 4, 5});

    auto* c = g.add_variable("c", graft::DType::float32, graft::Order{Axis::C}, {3});
    g.add_input(c);
    try {
        graft::add_op(g, *reg, "Binary", "bad", {{"a", a}, {"b", c}}, at);
        FAIL("a mismatch should throw");
    } catch (const graft::ShapeError& e) {
        const std::string msg = e.what();
        CHECK(msg.find("Binary 'bad'") != std::string::npos);
        CHECK(msg.find("'a'") != std::string::npos);
        CHECK(msg.find("'c'") != std::string::npos);
        CHECK(msg.find("axis C") != std::string::npos);
    }
    graft::Attributes narrow = at;
    narrow.set("order", graft::Order{Axis::N, Axis::C});  // lacks T, which a has
    CHECK_THROWS_AS(graft::add_op(g, *reg, "Binary", "narrow", {{"a", a}, {"b", c}}, narrow), graft::ShapeError);
}

TEST_CASE("Reduce: keepdims, and axes x lacks or lists twice", "[ops][reduce]") {
    using graft::Axis;
    auto reg = graft::make_builtin_registry();
    graft::Graph g;
    auto* x = g.add_variable("x", graft::DType::float32, graft::OrderNHWC, {2, 3, 4, 5});
    g.add_input(x);
    graft::Attributes at;
    at.set("kind", "mean");
    at.set("axes", std::vector<std::string>{"H", "W"});
    CHECK(graft::add_op(g, *reg, "Reduce", "m", {{"x", x}}, at)->output("y")->order() == graft::OrderNC);
    at.set("keepdims", true);
    CHECK(graft::add_op(g, *reg, "Reduce", "k", {{"x", x}}, at)->output("y")->shape() == graft::Shape{2, 1, 1, 5});
    at.set("axes", std::vector<std::string>{"T"});
    CHECK_THROWS_AS(graft::add_op(g, *reg, "Reduce", "t", {{"x", x}}, at), graft::ShapeError);
    at.set("axes", std::vector<std::string>{"H", "H"});
    CHECK_THROWS_AS(graft::add_op(g, *reg, "Reduce", "hh", {{"x", x}}, at), graft::ShapeError);
    at.set("axes", std::vector<std::string>{"H"});
    at.set("kind", "median");
    CHECK_THROWS_AS(graft::add_op(g, *reg, "Reduce", "med", {{"x", x}}, at), graft::UnsupportedError);
}

}  // namespace graft_test_kernels_broadcast_reduce
