// The memory plan: lifetimes over the topological order, greedy offsets in one arena, with
// aliasing (reshape-like ops share their input's bytes), in-place reuse (elementwise ops write
// over an input nothing reads later) and concat elimination (producers write into their slices
// of a Concat's output, which is then one buffer alive from the first producer on).
#include <algorithm>
#include <limits>
#include <numeric>

#include "graft/optimize/passes.hpp"
#include "ops/op_types.hpp"
#include "optimize/at_batch1.hpp"

namespace graft::optimize {

namespace {
constexpr std::size_t kAlign = 64;
std::size_t aligned(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

/// A buffer: one or more variables (aliases, in-place chains) sharing the same bytes.
struct Block {
    std::size_t size = 0;
    std::size_t first = 0, last = 0;  // op indices (inclusive) during which the buffer is live
    std::size_t offset = 0;
};

std::size_t bytes_of(const Variable* v) {
    if (v->numel() < 0) throw GraphError("memory plan: " + v->describe() + " has a dynamic size; fix the batch first");
    return aligned(static_cast<std::size_t>(v->numel()) * sizeof(float));  // every dtype is held in float32 words
}

/// A variable placed inside another one's buffer: an input of an elided Concat in its output.
struct Slice {
    const Variable* parent;
    std::size_t offset;  // bytes from the parent's start
};

/// Whether `op` is a Concat whose inputs can be written straight into their slices of its output:
/// every axis before the concat axis has size 1 (each input is one contiguous block of y), and
/// every input is written by an op that is no alias (it writes its whole output), is read by this
/// Concat alone and once, and is no graph input, output or constant.
bool elidable_concat(const Graph& g, const Registry& reg, const Operator& op) {
    const Variable* y = op.output_or_null("y");
    if (op.type() != ops::kConcat || !y || op.outputs().size() != 1 || op.inputs().empty() || y->numel() < 0) return false;
    const auto ai = y->order().find(op.attrs().get_axis("axis", op.describe()));
    if (!ai) return false;
    for (std::size_t i = 0; i < *ai; ++i)
        if (y->shape()[i] != 1) return false;
    for (const auto& [n, v] : op.inputs()) {
        const Operator* p = v->producer();
        const OpSchema* s = p ? reg.find_op(p->type()) : nullptr;
        if (!s || s->alias || v->is_constant() || g.is_input(v) || g.is_output(v)) return false;
        if (v->order() != y->order() || v->dtype() != y->dtype() || v->numel() < 0) return false;
        std::size_t reads = 0;
        for (const auto& q : op.inputs()) reads += q.second == v;
        const auto readers = g.consumers(v);
        if (reads != 1 || readers.size() != 1 || readers.front() != &op) return false;
    }
    return true;
}

MemoryPlan plan(const Graph& g, const Registry* reg) {
    const auto order = g.topological_order();
    const std::size_t end = order.size() + 1;
    std::unordered_map<const Variable*, std::size_t> group;  // variable -> block index
    std::vector<Block> blocks;
    std::unordered_map<const Variable*, std::size_t> sub;  // bytes into the block (slices)
    MemoryPlan plan;

    std::unordered_map<const Variable*, Slice> slice;
    if (reg)
        for (const Operator* op : order) {
            if (!elidable_concat(g, *reg, *op)) continue;
            std::size_t at = 0;
            for (const auto& [n, v] : op->inputs()) {
                slice[v] = {op->output("y"), at};
                at += static_cast<std::size_t>(v->numel()) * sizeof(float);
            }
            plan.elided.push_back(op);
        }
    // The outermost buffer a variable is placed in, and where in it.
    auto resolve = [&](const Variable* v) {
        std::size_t off = 0;
        for (auto it = slice.find(v); it != slice.end(); it = slice.find(v)) {
            off += it->second.offset;
            v = it->second.parent;
        }
        return std::make_pair(v, off);
    };

    // The last op index reading each variable (end for graph outputs).
    std::unordered_map<const Variable*, std::size_t> last_read;
    for (std::size_t i = 0; i < order.size(); ++i)
        for (const auto& [n, v] : order[i]->inputs()) last_read[v] = i + 1;
    for (const Variable* v : g.outputs()) last_read[v] = end;

    auto read_until = [&](const Variable* v, std::size_t def) {
        auto it = last_read.find(v);
        return it == last_read.end() ? def : std::max(def, it->second);
    };
    auto new_block = [&](const Variable* v, std::size_t def) {
        plan.naive_bytes += bytes_of(v);
        const auto [root, off] = resolve(v);
        if (!group.count(root)) {  // a slice's outer buffer starts with the first slice written
            group[root] = blocks.size();
            blocks.push_back({bytes_of(root), def, read_until(root, def), 0});
        }
        Block& b = blocks[group.at(root)];
        b.first = std::min(b.first, def);
        b.last = std::max(b.last, read_until(v, def));
        group[v] = group.at(root);
        if (off) sub[v] = off;
    };
    for (const Variable* v : g.inputs()) new_block(v, 0);
    for (std::size_t i = 0; i < order.size(); ++i) {
        const Operator* op = order[i];
        const OpSchema* s = reg ? reg->find_op(op->type()) : nullptr;
        const Variable* y = op->output_or_null("y");
        const Variable* x = nullptr;
        if (s && y && (s->alias || s->inplace) && !op->inputs().empty()) x = op->inputs().front().second;
        bool shared = false;
        if (x && !x->is_constant() && group.count(x) && !slice.count(y) && !slice.count(x) && bytes_of(x) == bytes_of(y)) {
            Block& b = blocks[group.at(x)];
            if (s->alias) {
                // y is x's bytes: one buffer, live as long as either is read.
                shared = true;
                ++plan.aliased;
            } else {
                // y overwrites x: nothing (x or an alias of it) may be read after this op, and
                // this op must not read x through another input too.
                std::size_t uses = 0;
                for (const auto& p : op->inputs()) uses += p.second == x;
                if (b.last == i + 1 && uses == 1) {
                    shared = true;
                    ++plan.inplace;
                }
            }
            if (shared) {
                group[y] = group.at(x);
                b.last = std::max(b.last, read_until(y, i + 1));
                plan.naive_bytes += bytes_of(y);
            }
        }
        for (const auto& [n, v] : op->outputs())
            if (!(shared && v == y)) new_block(v, i + 1);
    }

    std::vector<std::size_t> by_size(blocks.size());
    std::iota(by_size.begin(), by_size.end(), std::size_t{0});
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
    for (const auto& [v, gi] : group) {
        auto it = sub.find(v);
        plan.offset[v] = blocks[gi].offset + (it == sub.end() ? 0 : it->second);
    }
    return plan;
}

}  // namespace

MemoryPlan plan_memory(const Graph& g, const Registry& reg, bool reuse) { return plan(g, reuse ? &reg : nullptr); }
MemoryPlan plan_memory(const Graph& g) { return plan(g, nullptr); }

Graph clone_at_batch1(const Graph& g, const Registry& reg) {
    Graph c = g.clone();
    for (Variable* v : c.inputs()) {
        Shape s = v->shape();
        for (auto& d : s)
            if (d == kDynamic) d = 1;
        v->set_type(v->order(), s);
    }
    infer_shapes(c, reg);
    return c;
}

MemoryPlan plan_at_batch1(const Graph& g, const Registry& reg) {
    const Graph c = clone_at_batch1(g, reg);
    MemoryPlan p = plan_memory(c, reg);
    p.offset.clear();  // keys point into the copy
    p.elided.clear();
    return p;
}

}  // namespace graft::optimize
