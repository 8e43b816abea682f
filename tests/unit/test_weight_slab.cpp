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
    graft::native::WeightSlab slab;
    // Small blocks filling a chunk, odd sizes, an empty block, and blocks larger than a chunk
    // (4 MB), which get their own.
    const std::vector<std::size_t> sizes{1, 17, 4096, 0, 300000, 5, 1500000, 262144, 3, 2000000, 70000, 1};
    std::vector<std::vector<float>> want;
    std::vector<const float*> got;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        want.push_back(block(sizes[i], static_cast<float>(i)));
        got.push_back(slab.add(want.back()));
    }
    // Checked after all were added (each block with its own values): no block overwrote another.
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        INFO("block " << i << " of " << sizes[i] << " floats");
        CHECK(reinterpret_cast<std::uintptr_t>(got[i]) % 64 == 0);
        bool same = true;
        for (std::size_t k = 0; k < sizes[i]; ++k) same = same && got[i][k] == want[i][k];
        CHECK(same);
    }
}

}  // namespace graft_test_weight_slab
