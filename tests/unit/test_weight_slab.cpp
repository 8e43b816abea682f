// The native backend's WeightSlab: prepacked blocks copied into large chunks (huge pages where
// the system has them) must come back intact, aligned and independent of one another.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "backend/native/weight_slab.hpp"

namespace graft_test_weight_slab {

namespace {

std::vector<float> block(std::size_t n, float seed) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = seed + static_cast<float>(i % 1000) * 0.5f;
    return v;
}

}  // namespace

TEST_CASE("weight slab: blocks of every size come back intact and 64-byte aligned", "[native]") {
    for (const bool huge : {true, false}) {
        INFO((huge ? "huge-page chunks" : "a block per allocation"));
        graft::native::WeightSlab slab;
        slab.set_huge_pages(huge);
        // Small blocks filling a chunk, odd sizes, an empty block, and blocks larger than a chunk
        // (4 MB), which get their own.
        const std::vector<std::size_t> sizes{1, 17, 4096, 0, 300000, 5, 1500000, 262144, 3, 2000000, 70000, 1};
        std::vector<std::vector<float>> want;
        std::vector<const float*> got;
        std::size_t bytes = 0;  // the blocks rounded up to 64 bytes
        for (std::size_t i = 0; i < sizes.size(); ++i) {
            want.push_back(block(sizes[i], static_cast<float>(i)));
            got.push_back(slab.add(want.back()));
            bytes += (sizes[i] * sizeof(float) + 63) / 64 * 64;
        }
        // Checked after all were added (each block with its own values): no block overwrote another.
        for (std::size_t i = 0; i < sizes.size(); ++i) {
            INFO("block " << i << " of " << sizes[i] << " floats");
            CHECK(reinterpret_cast<std::uintptr_t>(got[i]) % 64 == 0);
            bool same = true;
            for (std::size_t k = 0; k < sizes[i]; ++k) same = same && got[i][k] == want[i][k];
            CHECK(same);
        }
        CHECK(slab.reserved() >= bytes);
        if (!huge) CHECK(slab.reserved() <= bytes + 64);  // nothing beyond the blocks (an empty one: 64)
    }
}

TEST_CASE("weight slab: without huge pages a small model reserves no chunk", "[native]") {
    graft::native::WeightSlab on, off;
    off.set_huge_pages(false);
    CHECK(on.huge_pages());
    CHECK_FALSE(off.huge_pages());
    const auto b = block(1000, 1.f);
    on.add(b);
    off.add(b);
    CHECK(off.reserved() == 4032);  // 4000 bytes rounded up to 64
#if defined(__linux__)
    CHECK(on.reserved() >= (std::size_t{4} << 20));  // a 4 MB chunk of 2 MB pages
#endif
}

}  // namespace graft_test_weight_slab
