// channel_swish_kernel.hpp - the ChannelSwish kernel, written once: the plugin's native kernel
// calls it, and its C++ emitter writes this very text into generated code (the plugin's CMake
// embeds it with graft_embed_text; graft::cpp::parse_kernel_header gives the layout to follow).
#pragma once

#include <cmath>
#include <cstdint>

namespace graft_rt {

/// ChannelSwish (plugin channel_swish): y = x * sigmoid(beta[c] * x) = x / (1 + exp(-beta[c] * x)),
/// x viewed as [outer, channels, inner]. x and y may be the same memory.
inline void channel_swish(const float* x, const float* beta, float* y, std::int64_t outer, std::int64_t channels,
                          std::int64_t inner) {
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t c = 0; c < channels; ++c)
            for (std::int64_t i = 0; i < inner; ++i) {
                const std::int64_t k = (o * channels + c) * inner + i;
                y[k] = x[k] / (1.0f + std::exp(-beta[c] * x[k]));
            }
}

}  // namespace graft_rt
