// One shared Model, many threads, a Session each with 2 intra-op threads: every run gives the
// same bits, and the first matches the fixture's reference outputs (tfjs / numpy); also with the
// batch in slices, which a session runs side by side on its threads. Run it under
// ThreadSanitizer with the `tsan` preset (README, "Sanitizers"): the intra-op pool's publication
// of each parallel loop once raced (issue 17).
#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "graft/graft.hpp"
#include "support.hpp"

namespace graft_test_concurrency {

using namespace graft_test;

namespace {

/// `t` with its rows (first dimension) repeated `k` times: enough work for the pool to split.
graft::Tensor repeat_rows(const graft::Tensor& t, std::int64_t k) {
    graft::Shape s = t.shape();
    s[0] *= k;
    std::vector<float> v;
    for (std::int64_t i = 0; i < k; ++i) v.insert(v.end(), t.data(), t.data() + t.size());
    return graft::Tensor(s, v.data(), v.size());
}

bool same_bits(const graft::Tensor& a, const graft::Tensor& b) {
    return a.shape() == b.shape() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

void run_shared(const std::string& case_name, int threads, int runs, graft::Precision precision = graft::Precision::fp32,
                std::int64_t batch_slice = 0) {
    const fs::path dir = fixture(case_name);
    graft::LoadOptions o;
    o.threads = 2;
    o.precision = precision;
    o.batch_slice = batch_slice;
    const auto model = graft::load((dir / "model.h5").string(), o);
    constexpr std::int64_t kRepeat = 16;
    std::map<std::string, graft::Tensor> in;
    for (std::size_t i = 0; i < model.num_inputs(); ++i)
        in.emplace(model.input_name(i), repeat_rows(load_npy(dir / ("input_" + model.input_name(i) + ".npy")), kRepeat));

    if (batch_slice > 0) {  // the graph keeps samples apart: the batch runs in those slices
        std::vector<graft::Tensor> ordered;
        for (std::size_t i = 0; i < model.num_inputs(); ++i) ordered.push_back(in.at(model.input_name(i)));
        const graft::BatchPlan plan = model.session().batch_plan(ordered);
        INFO(plan.mixing);
        REQUIRE(plan.slice == batch_slice);
    }
    // The first run against the independent reference.
    auto first = model.session().run(in);
    for (std::size_t i = 0; i < model.num_outputs(); ++i) {
        const auto& name = model.output_name(i);
        const auto ref = repeat_rows(load_npy(dir / ("output_" + name + ".npy")), kRepeat);
        // int8: within 3% of the outputs' range (test_precision.cpp), here 0.02 absolute
        const bool int8 = model.precision() == graft::Precision::int8;
        const auto c = compare(first.at(name), ref, int8 ? 2e-2 : 1e-4, int8 ? 0 : 1e-4);
        INFO(case_name << " output " << name << " max err " << c.max_abs_err);
        REQUIRE(c.ok());
    }

    std::vector<int> ok(static_cast<std::size_t>(threads), 0);
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            auto session = model.session();
            bool all = session.threads() == 2;  // no Catch2 assertions off the main thread
            for (int k = 0; k < runs; ++k) {
                const auto out = session.run(in);
                for (const auto& [name, y] : first) all = all && same_bits(out.at(name), y);
            }
            ok[static_cast<std::size_t>(t)] = all;
        });
    for (auto& th : pool) th.join();
    CHECK(ok == std::vector<int>(static_cast<std::size_t>(threads), 1));
}

}  // namespace

TEST_CASE("concurrency: per-thread sessions with 2 intra-op threads give identical bits", "[concurrency]") {
    SECTION("LSTM") { run_shared("rnn_lstm", 8, 20); }
    SECTION("conv") { run_shared("conv2d_channels_last", 8, 20); }
    SECTION("int8 LSTM and Dense") { run_shared("rnn_lstm", 4, 10, graft::Precision::int8); }
    // Slices of 3 samples side by side on each session's 2 threads (Session::run's lanes).
    SECTION("conv, the batch in slices side by side") { run_shared("conv2d_channels_last", 4, 10, graft::Precision::fp32, 3); }
}

}  // namespace graft_test_concurrency
