#include "backend/native/program.hpp"

#include <algorithm>
#include <chrono>
#include <set>

#include "ops/conv/block.hpp"

namespace graft::native {

namespace {

constexpr std::size_t kAlign = 64;

class Builder final : public BuildContext {
public:
    Builder(const Operator& op, const optimize::MemoryPlan& plan, std::size_t workspace_offset,
            std::vector<std::shared_ptr<const void>>& kept, PackCache* packs, Precision precision)
        : op_(op), plan_(plan), workspace_offset_(workspace_offset), kept_(kept), packs_(packs), precision_(precision) {}

    const Operator& op() const override { return op_; }

    Slot slot(const Variable* v) override {
        if (v->is_constant()) {
            const auto& data = static_cast<const ConstantVariable*>(v)->shared_data();
            kept_.push_back(data);
            return Slot{data->data(), 0};
        }
        auto it = plan_.offset.find(v);
        if (it == plan_.offset.end()) throw GraphError(op_.describe() + ": " + v->describe() + " has no place in the memory plan");
        return Slot{nullptr, it->second};
    }
    const float* keep(std::shared_ptr<const std::vector<float>> data) override {
        kept_.push_back(data);
        return data->data();
    }
    const float* keep_shared(const ConstantVariable& source, const std::string& tag,
                             const std::function<std::vector<float>()>& make) override {
        if (!packs_) return keep(std::make_shared<const std::vector<float>>(make()));
        return packs_->get(source, tag, make);
    }
    Slot workspace(std::size_t floats) override {
        workspace_floats_ = std::max(workspace_floats_, floats);
        return Slot{nullptr, workspace_offset_};
    }
    std::size_t workspace_floats() const noexcept { return workspace_floats_; }
    Precision precision() const override { return precision_; }

private:
    const Operator& op_;
    const optimize::MemoryPlan& plan_;
    std::size_t workspace_offset_;
    std::vector<std::shared_ptr<const void>>& kept_;
    PackCache* packs_;
    Precision precision_;
    std::size_t workspace_floats_ = 0;
};

}  // namespace

const float* PackCache::get(const ConstantVariable& source, const std::string& tag,
                            const std::function<std::vector<float>()>& make) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto key = std::make_pair(static_cast<const void*>(source.shared_data().get()), tag);
    auto it = blocks_.find(key);
    if (it == blocks_.end()) it = blocks_.emplace(key, Entry{source.shared_data(), slab_->add(make())}).first;
    return it->second.block;
}

std::size_t PackCache::blocks() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return blocks_.size();
}

void PackCache::set_huge_pages(bool on) {
    std::lock_guard<std::mutex> lock(mutex_);
    slab_->set_huge_pages(on);
}

bool PackCache::huge_pages() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return slab_->huge_pages();
}

std::shared_ptr<const Program> Program::compile(Graph g, const Registry& reg, PackCache* packs, Precision precision) {
    std::shared_ptr<Program> p(new Program());
    // Chains the native backend runs as one kernel (ops/conv/block.hpp), on this program's copy.
    const auto blocks = ops::fuse_conv_blocks(g);
    p->graph_ = std::move(g);
    const Graph& graph = p->graph_;
    p->plan_ = optimize::plan_memory(graph, reg);  // with in-place reuse and aliasing
    const std::size_t ws_offset = (p->plan_.arena_bytes + kAlign - 1) / kAlign * kAlign;
    std::size_t ws_floats = 0;
    const std::set<const Operator*> elided(p->plan_.elided.begin(), p->plan_.elided.end());
    if (packs) p->kept_.push_back(packs->storage());  // the blocks keep_shared returns
    for (const Operator* op : graph.topological_order()) {
        if (elided.count(op)) {  // a Concat whose inputs were written into their slices of y
            ++p->elided_;
            continue;
        }
        if (auto it = blocks.find(op); it != blocks.end()) {
            Builder b(*op, p->plan_, ws_offset, p->kept_, packs, precision);
            p->kernels_.push_back(ops::build_conv_block(b, it->second));
            ws_floats = std::max(ws_floats, b.workspace_floats());
            p->origins_.push_back({op->type(), op->name(), op->layer()});
            continue;
        }
        const auto gen = reg.find_generator<Backend>(op->type());
        if (!gen)
            throw UnsupportedError(op->describe() + (op->layer().empty() ? "" : " (from layer '" + op->layer() + "')") +
                                   ": the native backend has no kernel for op type '" + op->type() + "'");
        Builder b(*op, p->plan_, ws_offset, p->kept_, packs, precision);
        auto kernel = (*gen.generator)(b);
        if (!kernel) throw GraphError(op->describe() + ": the kernel builder returned no kernel");
        ws_floats = std::max(ws_floats, b.workspace_floats());
        p->kernels_.push_back(std::move(kernel));
        p->origins_.push_back({op->type(), op->name(), op->layer()});
        if (gen.owner->keepalive) p->owners_.push_back(*gen.owner);
    }
    p->arena_bytes_ = ws_offset + ws_floats * sizeof(float);
    if (p->arena_bytes_ == 0) p->arena_bytes_ = kAlign;
    for (const Variable* v : graph.inputs()) {
        p->inputs_.push_back(Slot{nullptr, p->plan_.offset.at(v)});
        p->input_shapes_.push_back(v->shape());
    }
    for (const Variable* v : graph.outputs()) {
        if (v->is_constant()) {
            p->outputs_.push_back(Slot{static_cast<const ConstantVariable*>(v)->data().data(), 0});
        } else {
            p->outputs_.push_back(Slot{nullptr, p->plan_.offset.at(v)});
        }
        p->output_shapes_.push_back(v->shape());
    }
    return p;
}

void Program::run_timed(std::byte* arena, cpu::ThreadPool* pool, double* seconds) const {
    using Clock = std::chrono::steady_clock;
    const RunContext ctx{arena, pool};
    auto t = Clock::now();
    for (std::size_t i = 0; i < kernels_.size(); ++i) {
        kernels_[i]->run(ctx);
        const auto now = Clock::now();
        seconds[i] += std::chrono::duration<double>(now - t).count();
        t = now;
    }
}

}  // namespace graft::native
