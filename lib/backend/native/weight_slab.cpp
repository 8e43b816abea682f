#include "backend/native/weight_slab.hpp"

#include <algorithm>
#include <cstring>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace graft::native {

namespace {

#if defined(__linux__) && defined(MADV_HUGEPAGE)
// Chunks of whole transparent huge pages (2 MB on x86-64 and arm64), 4 MB at least; a larger
// block gets a chunk of its own.
constexpr std::size_t kPage = std::size_t{2} << 20;
constexpr std::size_t kChunk = 2 * kPage;
#else
// No huge pages to ask for (WebAssembly, other systems): every block its own allocation, so that
// a small model does not reserve a chunk it leaves empty.
constexpr std::size_t kPage = 64;
constexpr std::size_t kChunk = 0;
#endif
constexpr std::size_t kBlockAlign = 64;

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

}  // namespace

void WeightSlab::Free::operator()(std::byte* p) const noexcept { ::operator delete (p, std::align_val_t{align}); }

std::size_t WeightSlab::reserved() const noexcept {
    std::size_t n = 0;
    for (const Chunk& c : chunks_) n += c.size;
    return n;
}

const float* WeightSlab::add(const std::vector<float>& block) {
    const std::size_t bytes = round_up(block.size() * sizeof(float), kBlockAlign);
    if (chunks_.empty() || chunks_.back().size - chunks_.back().used < bytes) {
        // Without huge pages (asked, or none to ask for): the block alone, 64-byte aligned.
        const std::size_t page = huge_pages_ ? kPage : kBlockAlign, chunk = huge_pages_ ? kChunk : 0;
        Chunk c;
        c.size = round_up(std::max({bytes, chunk, kBlockAlign}), page);
        c.mem = std::unique_ptr<std::byte, Free>(
            static_cast<std::byte*>(::operator new (c.size, std::align_val_t{page})), Free{page});
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        if (huge_pages_) madvise(c.mem.get(), c.size, MADV_HUGEPAGE);  // a hint: without THP the pages stay small
#endif
        chunks_.push_back(std::move(c));
    }
    Chunk& c = chunks_.back();
    std::byte* at = c.mem.get() + c.used;
    if (!block.empty()) std::memcpy(at, block.data(), block.size() * sizeof(float));
    c.used += bytes;
    return reinterpret_cast<const float*>(at);
}

}  // namespace graft::native
