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

    /// Whether blocks added from now on go into huge-page chunks (the default, where the system
    /// has them) or each into an allocation of its own (LoadOptions::huge_pages = false: no
    /// chunk reserved beyond the blocks, no madvise).
    void set_huge_pages(bool on) noexcept { huge_pages_ = on; }
    bool huge_pages() const noexcept { return huge_pages_; }
    /// Bytes allocated so far (chunks and single blocks).
    std::size_t reserved() const noexcept;

private:
    struct Free {  // the aligned operator delete matching add()'s operator new
        std::size_t align;
        void operator()(std::byte* p) const noexcept;
    };
    struct Chunk {
        std::unique_ptr<std::byte, Free> mem;
        std::size_t size = 0, used = 0;
    };
    std::vector<Chunk> chunks_;
    bool huge_pages_ = true;
};

}  // namespace graft::native
