// The memory plan: lifetimes over the topological order, greedy offsets in one arena.
#include <algorithm>
#include <limits>

#include "graft/optimize/passes.hpp"

namespace graft::optimize {

namespace {
constexpr std::size_t kAlign = 64;
std::size_t aligned(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }
}  // namespace

MemoryPlan plan_memory(const Graph& g) {
    struct Block {
        const Variable* v;
        std::size_t size;
        std::size_t first, last;  // op indices (inclusive) during which the buffer is live
        std::size_t offset = 0;
    };
    const auto order = g.topological_order();
    const std::size_t end = order.size() + 1;
    std::unordered_map<const Variable*, std::size_t> index;
    std::vector<Block> blocks;
    auto block_of = [&](const Variable* v, std::size_t def) -> Block& {
        auto it = index.find(v);
        if (it != index.end()) return blocks[it->second];
        if (v->numel() < 0) throw GraphError("memory plan: " + v->describe() + " has a dynamic size; fix the batch first");
        index[v] = blocks.size();
        blocks.push_back({v, aligned(static_cast<std::size_t>(v->numel()) * size_of(v->dtype())), def, def});
        return blocks.back();
    };
    for (const Variable* v : g.inputs()) block_of(v, 0);
    for (std::size_t i = 0; i < order.size(); ++i) {
        for (const auto& [n, v] : order[i]->inputs())
            if (!v->is_constant()) {
                Block& b = block_of(v, 0);
                b.last = std::max(b.last, i + 1);
            }
        for (const auto& [n, v] : order[i]->outputs()) {
            Block& b = block_of(v, i + 1);
            b.last = std::max(b.last, i + 1);
        }
    }
    for (const Variable* v : g.outputs())
        if (!v->is_constant()) block_of(v, 0).last = end;

    MemoryPlan plan;
    std::vector<std::size_t> by_size(blocks.size());
    for (std::size_t i = 0; i < blocks.size(); ++i) by_size[i] = i, plan.naive_bytes += blocks[i].size;
    std::stable_sort(by_size.begin(), by_size.end(), [&](auto a, auto b) { return blocks[a].size > blocks[b].size; });
    std::vector<std::size_t> placed;
    for (std::size_t bi : by_size) {
        Block& b = blocks[bi];
        // collect the intervals of live-overlapping placed blocks, then take the lowest gap
        std::vector<std::pair<std::size_t, std::size_t>> busy;
        for (std::size_t pi : placed) {
            const Block& p = blocks[pi];
            if (p.first <= b.last && b.first <= p.last) busy.emplace_back(p.offset, p.offset + p.size);
        }
        std::sort(busy.begin(), busy.end());
        std::size_t off = 0;
        for (auto& [lo, hi] : busy) {
            if (off + b.size <= lo) break;
            off = std::max(off, hi);
        }
        b.offset = off;
        plan.arena_bytes = std::max(plan.arena_bytes, off + b.size);
        placed.push_back(bi);
    }
    for (const auto& b : blocks) plan.offset[b.v] = b.offset;
    return plan;
}

}  // namespace graft::optimize
