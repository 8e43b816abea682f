// Pass cse: two operators of one type with the same inputs (by name) and the same attributes
// compute the same values; the later one goes and its readers read the earlier one's outputs.
// Equal constants (order, shape and values) are merged first, so ops reading copies of one
// weight match too.
#include <cstdint>
#include <cstring>
#include <map>
#include <tuple>

#include "optimize/builtin_passes.hpp"

namespace graft::optimize::passes {

namespace {

/// A bucket key for a constant's values: FNV-1a over its size and up to 64 evenly spaced values.
/// Only a key (same_bytes decides), so it stays cheap on a model's many megabytes of weights:
/// the pass runs in every round of every group.
std::uint64_t sample_hash(const std::vector<float>& d) {
    std::uint64_t h = 1469598103934665603ull;
    auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 1099511628211ull; };
    mix(d.size());
    const std::size_t step = d.size() / 64 + 1;
    for (std::size_t i = 0; i < d.size(); i += step) {
        std::uint32_t bits;
        std::memcpy(&bits, &d[i], sizeof bits);
        mix(bits);
    }
    return h;
}

bool same_bytes(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

bool merge_constants(Graph& g) {
    std::map<std::tuple<std::vector<std::string>, Shape, std::uint64_t>, std::vector<Variable*>> seen;
    bool changed = false;
    for (Variable* v : g.variables()) {
        const auto* c = as_constant(v);
        if (!c) continue;
        auto& same = seen[std::make_tuple(c->order().names(), c->shape(), sample_hash(c->data()))];
        Variable* first = nullptr;
        for (Variable* s : same)
            if (same_bytes(as_constant(s)->data(), c->data())) first = s;
        if (!first) {
            same.push_back(v);
        } else if (!g.consumers(v).empty() || g.is_output(v)) {
            g.replace_uses(v, first);
            changed = true;
        }
    }
    return changed;
}

}  // namespace

bool cse(Graph& g, const Registry&) {
    bool changed = merge_constants(g);
    std::vector<Operator*> kept;
    for (Operator* op : g.topological_order()) {
        Operator* same = nullptr;
        for (Operator* k : kept)
            if (k->type() == op->type() && k->inputs() == op->inputs() && k->attrs() == op->attrs() &&
                k->outputs().size() == op->outputs().size()) {
                same = k;
                break;
            }
        if (!same) {
            kept.push_back(op);
            continue;
        }
        bool match = true;
        for (std::size_t i = 0; i < op->outputs().size(); ++i)
            match = match && op->outputs()[i].first == same->outputs()[i].first;
        if (!match) {
            kept.push_back(op);
            continue;
        }
        for (std::size_t i = 0; i < op->outputs().size(); ++i) g.replace_uses(op->outputs()[i].second, same->outputs()[i].second);
        g.remove_op(op);
        changed = true;
    }
    return finish_pass(g, changed);
}


}  // namespace graft::optimize::passes
