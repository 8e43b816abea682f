// Concat elimination against the fixtures' tfjs references: the fixtures run at batch 3, where a
// Concat along a feature axis interleaves its inputs and is a copy; run one row at a time (batch
// 1) those Concats are elided (their producers write into the output), and every output row must
// still match the reference row.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <rapidjson/document.h>

#include "graft/graft.hpp"
#include "graft/optimize/passes.hpp"
#include "support.hpp"

namespace graft_test_concat_elision {

namespace fs = std::filesystem;
using graft_test::source_path;

namespace {

/// Row r (of the leading batch axis) of t, as a batch of one.
graft::Tensor row(const graft::Tensor& t, std::int64_t r) {
    graft::Shape s = t.shape();
    const auto n = static_cast<std::size_t>(graft::numel(s) / s.at(0));
    s[0] = 1;
    return graft::Tensor(s, t.data() + static_cast<std::size_t>(r) * n, n);
}

/// Concats the memory plan elides when `g` runs at batch 1.
std::size_t elided_at_batch1(const graft::Graph& g, const graft::Registry& reg) {
    graft::Graph c = g.clone();
    for (graft::Variable* v : c.inputs()) {
        graft::Shape s = v->shape();
        for (auto& d : s)
            if (d == graft::kDynamic) d = 1;
        v->set_type(v->order(), s);
    }
    graft::infer_shapes(c, reg);
    return graft::optimize::plan_memory(c, reg).elided.size();
}

}  // namespace

TEST_CASE("concat elimination: fixtures run row by row match their references", "[memory][concat][integration]") {
    auto reg = graft::make_builtin_registry();
    std::size_t checked = 0;
    for (const fs::path& dir : graft_test::fixture_dirs()) {
        const auto man = graft_test::read_manifest(dir);
        const auto has = [&](const char* k) { return man.HasMember(k) && man[k].IsString(); };
        if (has("needs_plugin") || has("config")) continue;
        graft::LoadOptions o;
        o.registry = reg.get();
        const auto model = graft::load((dir / man["model"].GetString()).string(), o);
        if (graft::has_free_sizes(model.graph())) continue;  // no batch-1 plan before the sizes are known
        const std::size_t elided = elided_at_batch1(model.graph(), *reg);
        if (elided == 0) continue;
        INFO(dir.filename().string() << ": " << elided << " Concat(s) elided at batch 1");
        std::map<std::string, graft::Tensor> inputs;
        for (const auto& in : man["inputs"].GetArray())
            inputs[in["name"].GetString()] = graft_test::load_npy(dir / in["file"].GetString());
        const auto rows = inputs.begin()->second.shape().at(0);
        const double atol = man["atol"].GetDouble(), rtol = man["rtol"].GetDouble();
        for (std::int64_t r = 0; r < rows; ++r) {
            std::map<std::string, graft::Tensor> one;
            for (const auto& [name, t] : inputs) one[name] = row(t, r);
            const auto out = model.run(one);
            for (const auto& ref : man["outputs"].GetArray()) {
                INFO("row " << r << ", output " << ref["name"].GetString());
                const auto want = row(graft_test::load_npy(dir / ref["file"].GetString()), r);
                const auto c = graft_test::compare(out.at(ref["name"].GetString()), want, atol, rtol);
                INFO("max abs err " << c.max_abs_err);
                CHECK(c.ok());
            }
        }
        fmt::print("concat elimination: {:<34} {} Concat(s) elided at batch 1, {} rows match\n", dir.filename().string(), elided, rows);
        ++checked;
    }
    CHECK(checked >= 3);
}

}  // namespace graft_test_concat_elision
