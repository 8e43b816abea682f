// Read-only blocks derived from constants (prepacked weights), copied into a few large chunks
// that the kernel is asked to back with transparent huge pages (Linux, madvise; elsewhere each
// block is an allocation of its own). Weights that do not stay in the caches are streamed from
// L3 or DRAM on every run; on 4 KB pages the hardware prefetchers stop at every page boundary
// and the TLB misses along a weight matrix, on 2 MB pages neither happens (bench/RESULTS.md,
// session 20).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace graft::native {

class WeightSlab {
public:
    WeightSlab() = default;
    WeightSlab(const WeightSlab&) = delete;
    WeightSlab& operator=(const WeightSlab&) = delete;

    /// A copy of `block`, 64-byte aligned, valid as long as the slab.
    const float* add(const std::vector<float>& block);

private:
    struct Free {  // the aligned operator delete matching add()'s operator new
        void operator()(std::byte* p) const noexcept;
    };
    struct Chunk {
        std::unique_ptr<std::byte, Free> mem;
        std::size_t size = 0, used = 0;
    };
    std::vector<Chunk> chunks_;
};

}  // namespace graft::native
