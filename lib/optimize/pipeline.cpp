// Pipelines: groups of passes run to a fixpoint, chosen per optimization level and backend;
// the per-pass report behind `graft inspect --passes`.
#include <functional>
#include <map>

#include "optimize/builtin_passes.hpp"

namespace graft::optimize {

namespace {

using Factory = passes::FnPass::Fn;

const std::map<std::string, Factory>& factories() {
    static const std::map<std::string, Factory> m = {
        {"remove_noops", passes::remove_noops},
        {"constant_fold", passes::constant_fold},
        {"fold_batchnorm", passes::fold_batchnorm},
        {"fold_bias_add", passes::fold_bias_add},
        {"fold_pad", passes::fold_pad},
        {"fuse_activation", passes::fuse_activation},
        {"fuse_elementwise", passes::fuse_elementwise},
        {"fuse_residual", passes::fuse_residual},
        {"cancel_transposes", passes::cancel_transposes},
        {"sink_transposes", passes::sink_transposes},
        {"cse", passes::cse},
        {"dead_ops", passes::dead_ops},
        {"legalize_layout", passes::legalize},
    };
    return m;
}

constexpr int kMaxRounds = 64;

}  // namespace

namespace passes {
bool legalize(Graph& g, const Registry& reg) { return legalize_layout(g, reg) > 0; }
}  // namespace passes

std::unique_ptr<Pass> make_pass(const std::string& name) {
    auto it = factories().find(name);
    if (it == factories().end()) throw UnsupportedError("unknown optimizer pass '" + name + "'");
    return std::make_unique<passes::FnPass>(name, it->second);
}

std::vector<std::string> pass_names() {
    std::vector<std::string> n;
    for (const auto& [k, f] : factories()) n.push_back(k);
    return n;
}

Pipeline& Pipeline::add_group(const std::string& name, const std::vector<std::string>& passes) {
    Group g{name, {}};
    for (const auto& p : passes) g.passes.push_back(make_pass(p));
    return add_group(std::move(g));
}

Pipeline& Pipeline::add_group(Group g) {
    groups_.push_back(std::move(g));
    return *this;
}

void Pipeline::run(Graph& g, const Registry& reg, PipelineReport* report, bool with_memory) const {
    auto memory = [&](std::size_t& arena, std::size_t& naive) {
        if (!with_memory || has_free_sizes(g)) return;  // sizes other than the batch are known per run only
        auto p = plan_at_batch1(g, reg);
        arena = p.arena_bytes;
        naive = p.naive_bytes;
    };
    if (report) {
        report->pipeline = name_;
        report->steps.clear();
        report->ops_before = g.operators().size();
        memory(report->arena_before, report->naive_before);
    }
    for (const auto& group : groups_) {
        std::vector<std::size_t> step_index;
        if (report)
            for (const auto& r : group.passes) {
                step_index.push_back(report->steps.size());
                report->steps.push_back(PassStep{group.name, r->name(), 0, 0, 0, 0, 0, 0, 0});
            }
        bool changed = true;
        for (int round = 0; changed; ++round) {
            if (round == kMaxRounds)
                throw GraphError("optimizer: pass group '" + group.name + "' of pipeline '" + name_ + "' does not settle after " +
                                 std::to_string(kMaxRounds) + " rounds");
            changed = false;
            for (std::size_t i = 0; i < group.passes.size(); ++i) {
                PassStep* step = report ? &report->steps[step_index[i]] : nullptr;
                std::size_t ops = g.operators().size(), arena = 0, naive = 0;
                if (step && step->fired == 0) memory(arena, naive);
                if (!group.passes[i]->run(g, reg)) continue;
                changed = true;
                if (!step) continue;
                if (step->fired++ == 0) {
                    step->ops_before = ops;
                    step->arena_before = arena;
                    step->naive_before = naive;
                }
                step->ops_after = g.operators().size();
                memory(step->arena_after, step->naive_after);
            }
        }
    }
    g.validate();
    if (report) {
        report->ops_after = g.operators().size();
        memory(report->arena_after, report->naive_after);
    }
}

Pipeline pipeline_for(int level, const std::string& backend) {
    if (backend != "native" && backend != "graft" && backend != "cpp")
        throw UnsupportedError("no optimizer pipeline for backend '" + backend + "' (expected native, cpp or graft)");
    if (level < 0 || level > 2) throw UnsupportedError("optimization level " + std::to_string(level) + " (expected 0, 1 or 2)");
    Pipeline p("O" + std::to_string(level) + "-" + backend);
    // The three backends run native kernels (cpp: the same kernels, generated), so they share the
    // layout passes; a backend with other layout preferences would get its own "layout" group here.
    if (level == 0) {
        p.add_group("layout", {"legalize_layout"});
        return p;
    }
    if (level == 1) {
        p.add_group("folds", {"remove_noops", "constant_fold", "cse", "dead_ops"});
        p.add_group("layout", {"legalize_layout", "cancel_transposes", "remove_noops", "constant_fold", "cse", "dead_ops"});
        return p;
    }
    p.add_group("folds", {"remove_noops", "constant_fold", "fold_batchnorm", "fold_bias_add", "fold_pad", "fuse_residual",
                          "fuse_activation", "cse", "dead_ops"});
    p.add_group("layout", {"legalize_layout", "cancel_transposes", "sink_transposes", "remove_noops", "constant_fold",
                           "fold_batchnorm", "fold_pad", "fuse_residual", "fuse_activation", "cse", "dead_ops"});
    // Last: elementwise chains fuse only once every epilogue fusion above has had its turn.
    p.add_group("fusion", {"fuse_elementwise"});
    return p;
}

}  // namespace graft::optimize
