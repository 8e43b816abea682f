// A graph compiled for the native backend at one batch size: kernels bound to arena offsets
// and to constant data, run in order. Immutable once built; sessions bring the arena.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "graft/backend/native_kernel.hpp"
#include "graft/optimize/passes.hpp"
#include "graft/registry.hpp"
#include "backend/native/weight_slab.hpp"

namespace graft::native {

/// Blocks derived from constants (prepacked weights) that the programs of one Model share:
/// BuildContext::keep_shared. They live in a WeightSlab (huge pages where the system has them),
/// which each program that uses them holds (storage()). Thread-safe.
class PackCache {
public:
    PackCache() : slab_(std::make_shared<WeightSlab>()) {}
    const float* get(const ConstantVariable& source, const std::string& tag, const std::function<std::vector<float>()>& make);
    std::size_t blocks() const;
    std::shared_ptr<const void> storage() const { return slab_; }
    /// WeightSlab::set_huge_pages for the blocks packed from now on.
    void set_huge_pages(bool on);
    bool huge_pages() const;

private:
    mutable std::mutex mutex_;
    // Keyed by the constant's data; holding that data keeps its address from being reused.
    struct Entry {
        std::shared_ptr<const std::vector<float>> source;
        const float* block;
    };
    std::map<std::pair<const void*, std::string>, Entry> blocks_;
    std::shared_ptr<WeightSlab> slab_;
};

class Program {
public:
    /// Compiles `g`, whose shapes must be concrete and whose layouts must be legal. With `packs`,
    /// kernels share their prepacked weights with the other programs compiled with it.
    /// `precision` is what BuildContext::precision() tells the kernel builders.
    static std::shared_ptr<const Program> compile(Graph g, const Registry& reg, PackCache* packs = nullptr,
                                                  Precision precision = Precision::fp32);

    std::size_t arena_bytes() const noexcept { return arena_bytes_; }
    const optimize::MemoryPlan& plan() const noexcept { return plan_; }
    const std::vector<Slot>& inputs() const noexcept { return inputs_; }
    const std::vector<Slot>& outputs() const noexcept { return outputs_; }
    const std::vector<Shape>& input_shapes() const noexcept { return input_shapes_; }
    const std::vector<Shape>& output_shapes() const noexcept { return output_shapes_; }
    /// Kernels the program runs, and operators it needs none for (the memory plan's elided Concats).
    std::size_t kernel_count() const noexcept { return kernels_.size(); }
    std::size_t elided() const noexcept { return elided_; }

    /// Runs every kernel on `arena` (at least arena_bytes(), 64-byte aligned), splitting the
    /// kernels' work over `pool` when given.
    void run(std::byte* arena, cpu::ThreadPool* pool = nullptr) const {
        const RunContext ctx{arena, pool};
        for (const auto& k : kernels_) k->run(ctx);
    }
    /// The same, adding each kernel's wall time to seconds[i] (kernel_count() entries).
    void run_timed(std::byte* arena, cpu::ThreadPool* pool, double* seconds) const;

    /// The operator kernel i runs: its type, name and the model layer it came from.
    struct KernelOrigin {
        std::string type, name, layer;
    };
    const std::vector<KernelOrigin>& origins() const noexcept { return origins_; }

private:
    Program() = default;
    std::vector<HandlerOwner> owners_;                     // keeps plugin libraries loaded: first, destroyed last
    Graph graph_;                                          // the specialized graph (constants live here)
    std::vector<std::shared_ptr<const void>> kept_;        // constants and prepacked blocks the kernels read
    std::vector<std::unique_ptr<Kernel>> kernels_;         // destroyed before owners_ (declared after)
    std::vector<KernelOrigin> origins_;                    // one per kernel
    optimize::MemoryPlan plan_;
    std::size_t arena_bytes_ = 0;
    std::size_t elided_ = 0;
    std::vector<Slot> inputs_, outputs_;
    std::vector<Shape> input_shapes_, output_shapes_;
};

}  // namespace graft::native
